"""Tests of contract §12 Online decisions on a stream (docs/contract.md; map: tests/README.md)."""
