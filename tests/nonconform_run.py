"""Runs the §11–§13 oracle, nonconform 2.0.0 (``nonconform_oracle.py``), in
its own environment: nonconform needs Python >= 3.12, so the oracle runs in
the interpreter ``OUTPROB_NONCONFORM_PYTHON`` names (``python3 scripts/dev.py
test`` makes it and sets the variable), or in this one if it has nonconform.
A test module's fixture asks for the interpreter first (skipping when there
is none), builds its data, then hands data and jobs to :func:`run`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ORACLE = Path(__file__).resolve().with_name("nonconform_oracle.py")
#: The release every comparison holds against.
VERSION = "2.0.0"


def interpreter() -> str:
    """The Python that has nonconform; the calling test is skipped when
    there is none."""
    python = os.environ.get("OUTPROB_NONCONFORM_PYTHON")
    if not python and importlib.util.find_spec("nonconform") is not None:
        python = sys.executable  # a test environment on Python >= 3.12 has it itself
    if not python:
        pytest.skip("nonconform needs Python >= 3.12: run `python3 scripts/dev.py test`, which "
                    "makes its environment and sets OUTPROB_NONCONFORM_PYTHON")
    return python


def run(python: str, tmp_path_factory: Any, data: dict, jobs: list) -> dict:
    """The oracle's answers to ``jobs`` (each names its inputs among the
    arrays of ``data``), as a dict of arrays; its nonconform is
    :data:`VERSION`."""
    folder = tmp_path_factory.mktemp("nonconform")
    src, dst = folder / "in.npz", folder / "out.npz"
    np.savez(src, jobs=np.array(json.dumps(jobs)), **data)
    done = subprocess.run([python, str(ORACLE), str(src), str(dst)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with np.load(dst) as f:
        out = {k: f[k] for k in f.files}
    assert str(out["version"]) == VERSION
    return out
