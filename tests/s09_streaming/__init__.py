"""Tests of contract §9 Streaming and distributed fitting (docs/contract.md; map: tests/README.md)."""
