"""Tests of contract §3 Joint M-estimation: Huber's proposal 2 (docs/contract.md; map: tests/README.md)."""
