"""Tests of contract §5 Input contract (docs/contract.md; map: tests/README.md)."""
