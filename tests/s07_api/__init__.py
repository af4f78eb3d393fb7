"""Tests of contract §7 Public Python API (docs/contract.md; map: tests/README.md)."""
