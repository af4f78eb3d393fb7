#!/usr/bin/env python3
"""Build outprob in its own virtual environment and run a job.

    python3 scripts/dev.py demo           # build, then score the breast-cancer demo
    python3 scripts/dev.py test           # build, then cargo fmt/clippy/test and pytest
    python3 scripts/dev.py bench          # build, then benches/compare.py (the comparison table)
    python3 scripts/dev.py sweep          # build, then benches/sweep.py (sizes 1e2..1e7, latency, log-log plot)
    python3 scripts/dev.py bench-pytest   # build, then the pytest-benchmark suite
    python3 scripts/dev.py reproduce      # build, then `outprob reproduce --out paper` (the paper's study)

Needs only Python 3 (with venv and pip) and a Rust toolchain: the
environment ``.venv`` is created on first use and everything else is
installed into it. Extra arguments after the job go to pytest / the demo /
compare.py / ``outprob reproduce`` (e.g. ``bench --quick``,
``reproduce --quick --out /tmp/quick``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")

BUILD = ["maturin>=1.7,<2", "numpy>=1.24", "scipy>=1.10"]
EXTRAS = {
    "demo": [],
    "test": [
        "pytest>=7", "hypothesis>=6.80", "statsmodels>=0.14", "matplotlib>=3.7",
        "pandas>=2", "polars>=1", "pyod>=2", "mypy>=1.10", "tqdm>=4.60", "pyarrow>=12",
        "datasketches>=5", "dask[array,dataframe]>=2024.1", "distributed>=2024.1",
    ],
    "bench": ["statsmodels>=0.14", "matplotlib>=3.7"],
    "sweep": ["statsmodels>=0.14", "matplotlib>=3.7"],
    "bench-pytest": ["pytest-benchmark>=4", "statsmodels>=0.14", "matplotlib>=3.7"],
    "reproduce": ["pyod>=2", "pandas>=2", "tqdm>=4.60", "matplotlib>=3.7"],
}


# nonconform, the test oracle of contract §11's p-values, needs Python >= 3.12,
# which the test environment's Python may predate: it gets a small second
# environment on the newest CPython >= 3.12 found (PATH, then pyenv), and the
# comparison tests run it in a subprocess (tests/nonconform_oracle.py).
NONCONFORM_VENV = ROOT / ".venv-nonconform"
NONCONFORM = ["nonconform==2.0.0"]


def nonconform_python() -> str | None:
    """The nonconform environment's interpreter (made on first use), or None
    when no CPython >= 3.12 is installed."""
    exe = NONCONFORM_VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not exe.exists():
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        found = [shutil.which(f"python3.{m}") for m in range(20, 11, -1)]
        found += sorted(map(str, pyenv.glob("3.1[2-9]*/bin/python3")), reverse=True)
        check = "import sys; assert sys.version_info >= (3, 12) and sys.implementation.name == 'cpython'"
        base = next((c for c in found if c and subprocess.run(
            [c, "-c", check], capture_output=True, check=False).returncode == 0), None)
        if base is None:
            print("! no CPython >= 3.12 found: the nonconform comparison tests are skipped", flush=True)
            return None
        run([base, "-m", "venv", str(NONCONFORM_VENV)])
    run([str(exe), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *NONCONFORM])
    return str(exe)


def run(cmd: list[str], **env: str) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True, env={**os.environ, **env})


def python() -> str:
    exe = BIN / ("python.exe" if os.name == "nt" else "python")
    if not exe.exists():
        print(f"+ creating virtual environment {VENV}", flush=True)
        venv.create(VENV, with_pip=True)
    return str(exe)


def setup(extras: list[str]) -> str:
    py = python()
    run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *BUILD, *extras])
    env = {"VIRTUAL_ENV": str(VENV), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run([str(BIN / "maturin"), "develop", "--release", "--quiet"], **env)
    return py


def cargo(*args: str) -> None:
    run(["cargo", *args])


def lint_rust() -> None:
    # rustfmt and clippy ship with rustup's default profile; a minimal
    # toolchain may lack them, which is reported rather than fatal.
    for tool, cmd in (
        ("rustfmt", ["fmt", "--all", "--check"]),
        ("clippy", ["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]),
    ):
        probe = subprocess.run(
            ["cargo", cmd[0], "--version"], cwd=ROOT, capture_output=True, check=False
        )
        if probe.returncode != 0:
            print(f"! cargo {cmd[0]} is not installed: {tool} check not run", flush=True)
            continue
        cargo(*cmd)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXTRAS:
        print(__doc__)
        return 2
    job, rest = argv[0], argv[1:]
    if shutil.which("cargo") is None:
        print("cargo not found: install a Rust toolchain (https://rustup.rs)", file=sys.stderr)
        return 1
    py = setup(EXTRAS[job])
    if job == "demo":
        run([py, "examples/demo.py", *rest])
    elif job == "test":
        lint_rust()
        cargo("test", "-p", "outprob-core", "--release")
        # The fuzz targets' checks over the committed corpus (fuzz/README.md),
        # on the stable toolchain.
        cargo("test", "-p", "outprob-fuzz", "--release")
        oracle = nonconform_python()
        run(
            [py, "-m", "pytest", "tests", "python/outprob", "README.md",
             "--doctest-modules", "--doctest-glob=README.md", *rest],
            HYPOTHESIS_PROFILE=os.environ.get("HYPOTHESIS_PROFILE", "ci"),
            **({"OUTPROB_NONCONFORM_PYTHON": oracle} if oracle else {}),
        )
    elif job == "reproduce":
        run([py, "-m", "outprob", "reproduce", "--out", "paper", *rest])
    elif job == "bench":
        run([py, "benches/compare.py", *rest])
    elif job == "sweep":
        run([py, "benches/sweep.py", *rest])
    else:
        run([py, "-m", "pytest", "benches", "--benchmark-only", *rest])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
