"""Tests of contract §2 Scale estimators (docs/contract.md; map: tests/README.md)."""
