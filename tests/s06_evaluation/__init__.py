"""Tests of contract §6 Evaluation measures of outlier probabilities (docs/contract.md; map: tests/README.md)."""
