"""Tests of contract §8 The study (outprob.experiment, outprob reproduce) (docs/contract.md; map: tests/README.md)."""
