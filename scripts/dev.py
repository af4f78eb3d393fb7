#!/usr/bin/env python3
"""Build outprob in its own virtual environment and run a job.

    python3 scripts/dev.py demo           # build, then score the breast-cancer demo
    python3 scripts/dev.py test           # build the wheel, then the Rust module-circle check,
                                          # cargo fmt/clippy/test, pytest against the installed
                                          # wheel, actionlint, the API docs
    python3 scripts/dev.py wheel          # the abi3 wheel and the sdist into dist/, checked,
                                          # and a wheel built from the sdist
    python3 scripts/dev.py test-wheel W   # install wheel W into a fresh environment, no Rust
                                          # toolchain needed, and run pytest against it
    python3 scripts/dev.py docs           # build, then the documentation site (docs/_build/html)
    python3 scripts/dev.py bench          # build, then benches/compare.py (the comparison table)
    python3 scripts/dev.py sweep          # build, then benches/sweep.py (sizes 1e2..1e7, latency, log-log plot)
    python3 scripts/dev.py bench-pytest   # build, then the pytest-benchmark suite
    python3 scripts/dev.py reproduce      # build, then `outprob reproduce --out paper` (the paper's study)

Needs only Python 3 (with venv and pip) and a Rust toolchain: the
environment ``.venv`` is created on first use and everything else is
installed into it. Every job builds the extension as a release wheel
(``maturin build --release``) and installs that wheel, with the extras of
``pyproject.toml`` the job needs, into ``.venv``; the tests run against the
installed package with no Rust toolchain on their PATH. Extra arguments after
the job go to pytest / the demo / compare.py / sphinx-build / ``outprob
reproduce`` (e.g. ``bench --quick``, ``reproduce --quick --out /tmp/quick``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
DEV_WHEELS = ROOT / "target" / "dev-wheels"

# Each job and the extras of pyproject.toml it installs (the lists live there).
JOBS = {
    "demo": [],
    "test": ["test", "docs", "wheel", "lint"],
    "wheel": ["wheel"],
    "docs": ["docs"],
    "bench": ["bench"],
    "sweep": ["bench"],
    "bench-pytest": ["bench"],
    "reproduce": ["study"],
    "test-wheel": ["test"],
}


# nonconform, the test oracle of contract §11's p-values, needs Python >= 3.12,
# which the test environment's Python may predate: it gets a small second
# environment on the newest CPython >= 3.12 found (PATH, then pyenv), and the
# comparison tests run it in a subprocess (tests/nonconform_oracle.py).
NONCONFORM_VENV = ROOT / ".venv-nonconform"


def nonconform_requirement(project: dict) -> str:
    """The test extra's pin of nonconform, without its environment marker."""
    (req,) = [r for r in project["project"]["optional-dependencies"]["test"]
              if r.startswith("nonconform")]
    return req.split(";")[0].strip()


def nonconform_python(project: dict) -> str | None:
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
    pip_install(str(exe), nonconform_requirement(project))
    return str(exe)


def run(cmd: list[str], cwd: Path = ROOT, **env: str) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=cwd, check=True, env={**os.environ, **env})


def python(env: Path = VENV) -> str:
    exe = env / BIN.name / ("python.exe" if os.name == "nt" else "python")
    if not exe.exists():
        print(f"+ creating virtual environment {env}", flush=True)
        venv.create(env, with_pip=True)
    return str(exe)


def pyproject(py: str) -> dict:
    """pyproject.toml, read by tomllib (Python 3.11+) or, on an older
    interpreter, by tomli installed into the environment."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "tomli"])
    code = "import json, sys, tomli; print(json.dumps(tomli.load(open(sys.argv[1], 'rb'))))"
    out = subprocess.run([py, "-c", code, str(ROOT / "pyproject.toml")], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def pip_install(py: str, *args: str) -> None:
    run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args])


def build_wheel(out: Path) -> Path:
    """The release abi3 wheel, built by maturin into ``out`` (emptied first)."""
    shutil.rmtree(out, ignore_errors=True)
    run([BIN / "maturin", "build", "--release", "--quiet", "--out", out])
    (wheel,) = out.glob("outprob-*.whl")
    return wheel


def setup(job: str) -> tuple[str, Path]:
    """Build the wheel and install it with the job's extras; returns the
    environment's python and the wheel."""
    py = python()
    project = pyproject(py)
    extras = JOBS[job]
    unknown = set(extras) - set(project["project"]["optional-dependencies"])
    if unknown:
        raise SystemExit(f"pyproject.toml has no extra {sorted(unknown)} (job {job})")
    pip_install(py, *project["build-system"]["requires"])
    wheel = build_wheel(DEV_WHEELS)
    # The wheel replaces whatever was installed (an earlier wheel, an editable
    # `maturin develop`); its dependencies and extras come from its metadata.
    pip_install(py, "--force-reinstall", "--no-deps", str(wheel))
    pip_install(py, f"{wheel}[{','.join(extras)}]" if extras else str(wheel))
    return py, wheel


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


def without_rust_path(bin_dir: Path) -> str:
    """PATH without the directories that hold cargo or rustc: the installed
    wheel must not need a Rust toolchain."""
    tools = ("cargo", "rustc", "cargo.exe", "rustc.exe")
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not any((Path(d) / tool).exists() for tool in tools)]
    return os.pathsep.join([str(bin_dir), *keep])


def check_wheel(wheel: Path) -> None:
    """What a published wheel must pass: its file list, the stable ABI, and
    (on Linux) the manylinux policy."""
    run([BIN / "check-wheel-contents", wheel])
    run([BIN / "abi3audit", "--strict", "--report", wheel])
    if sys.platform.startswith("linux"):
        run([BIN / "auditwheel", "show", wheel])


def test(py: str, wheel: Path, rest: list[str]) -> None:
    # No module of a Rust crate may depend on one that depends on it.
    run([sys.executable, ROOT / "scripts" / "rust_module_circles.py"])
    lint_rust()
    cargo("test", "-p", "outprob-core", "--release")
    # The fuzz targets' checks over the committed corpus (fuzz/README.md),
    # on the stable toolchain.
    cargo("test", "-p", "outprob-fuzz", "--release")
    check_wheel(wheel)
    run([BIN / "actionlint", "-no-color"])
    oracle = nonconform_python(pyproject(py))
    pytest_installed(py, rest, **({"OUTPROB_NONCONFORM_PYTHON": oracle} if oracle else {}))


def pytest_installed(py: str, rest: list[str], **env: str) -> None:
    """The suite against the installed package: --pyargs collects the
    installed package's doctests, importlib mode keeps python/ off sys.path,
    and OUTPROB_TEST_INSTALLED makes a test assert both and that no Rust
    toolchain is on PATH."""
    run(
        [py, "-m", "pytest", ROOT / "tests", "README.md", "--pyargs", "outprob",
         "--import-mode=importlib", "--doctest-modules", "--doctest-glob=README.md", *rest],
        PATH=without_rust_path(Path(py).parent),
        OUTPROB_TEST_INSTALLED="1",
        HYPOTHESIS_PROFILE=os.environ.get("HYPOTHESIS_PROFILE", "ci"),
        **env,
    )


def test_wheel(wheel: str, rest: list[str]) -> None:
    """A built wheel in a fresh environment (target/wheel-venv), with the
    test extra, and the suite against it; needs no Rust toolchain."""
    env = ROOT / "target" / "wheel-venv"
    shutil.rmtree(env, ignore_errors=True)
    py = python(env)
    pip_install(py, f"{Path(wheel).resolve()}[{','.join(JOBS['test-wheel'])}]")
    pytest_installed(py, rest)


def release(py: str) -> None:
    """dist/: the wheel and the sdist, checked; then a wheel built from the
    sdist alone (as pip would, in an isolated build), which proves the sdist
    is complete."""
    dist = ROOT / "dist"
    wheel = build_wheel(dist)
    run([BIN / "maturin", "sdist", "--out", dist])
    (sdist,) = dist.glob("outprob-*.tar.gz")
    check_wheel(wheel)
    from_sdist = ROOT / "target" / "sdist-wheel"
    shutil.rmtree(from_sdist, ignore_errors=True)
    run([py, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", from_sdist, sdist])
    check_wheel(next(from_sdist.glob("outprob-*.whl")))
    print(f"built {wheel.name} and {sdist.name} in {dist}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in JOBS:
        print(__doc__)
        return 2
    job, rest = argv[0], argv[1:]
    if job == "test-wheel":
        if not rest:
            print("usage: python3 scripts/dev.py test-wheel WHEEL [pytest arguments]", file=sys.stderr)
            return 2
        test_wheel(rest[0], rest[1:])
        return 0
    if shutil.which("cargo") is None:
        print("cargo not found: install a Rust toolchain (https://rustup.rs)", file=sys.stderr)
        return 1
    py, wheel = setup(job)
    if job == "demo":
        run([py, "examples/demo.py", *rest])
    elif job == "test":
        test(py, wheel, rest)
    elif job == "wheel":
        release(py)
    elif job == "docs":
        run([BIN / "sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html", *rest])
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
