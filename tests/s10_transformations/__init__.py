"""Tests of contract §10 Transformations beyond the paper (docs/contract.md; map: tests/README.md)."""
