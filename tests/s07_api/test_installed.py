"""The package as shipped (contract §7, "Types": the package ships
``py.typed``; the stub ``_core.pyi``) and its one version.

``python3 scripts/dev.py test`` runs the suite against the installed wheel,
not the source tree, with no Rust toolchain on PATH, and says so through
OUTPROB_TEST_INSTALLED; these tests check that it does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import pytest

import outprob

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = os.environ.get("OUTPROB_TEST_INSTALLED") == "1"


@pytest.mark.skipif(not INSTALLED, reason="the suite runs against a source build")
def test_the_package_under_test_is_the_installed_wheel():
    package = Path(outprob.__file__).resolve().parent
    assert package.parent == Path(sysconfig.get_paths()["platlib"]).resolve(), package
    assert package != ROOT / "python" / "outprob", package
    from outprob import _core

    assert Path(_core.__file__).resolve().parent == package
    assert ".abi3." in Path(_core.__file__).name or _core.__file__.endswith(".pyd")
    # What a published wheel carries beside the code.
    assert (package / "py.typed").is_file() and (package / "_core.pyi").is_file()
    assert shutil.which("cargo") is None and shutil.which("rustc") is None


def test_one_version_from_the_cargo_workspace():
    cargo = (ROOT / "Cargo.toml").read_text()
    declared = next(line.split('"')[1] for line in cargo.splitlines() if line.startswith("version ="))
    assert outprob.__version__ == version("outprob") == declared
    run = subprocess.run([sys.executable, "-m", "outprob", "--version"], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == f"outprob {declared}"
