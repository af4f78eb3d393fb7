"""Tests of contract §11 Conformal p-values and false-discovery control (docs/contract.md; map: tests/README.md)."""
