"""Tests of contract §4 Scalings (score → probability) (docs/contract.md; map: tests/README.md)."""
