"""Tests of contract §1 Location (center) estimators (docs/contract.md; map: tests/README.md)."""
