"""Types (issue #7): the stub of the compiled core matches the extension
(what mypy.stubtest checks), typical user code passes ``mypy --strict`` with the public
names seen precisely despite the lazy loading, and outprob's own modules of
the public API are ``--strict`` clean."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parent.parent
USER_CODE = Path(__file__).parent / "typecheck" / "user_code.py"
# The modules behind the public API; compare, metrics and reference are
# checked by the plain ``mypy -p outprob`` run.
PACKAGE = ROOT / "python" / "outprob"
STRICT_MODULES = [
    "__init__.py", "_base.py", "_scalers.py", "_input.py", "_output.py",
    "_exceptions.py", "_variants.py", "stats.py", "pyod.py",
]  # fmt: skip


def mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    cache = ROOT / ".mypy_cache"
    cmd = [sys.executable, "-m", "mypy", "--cache-dir", str(cache), "--no-error-summary", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=os.environ.copy())


def test_core_stub_matches_the_extension():
    """What ``python -m mypy.stubtest outprob._core`` checks of functions
    (it passes too, in ~10 s): the same functions, each with the same
    parameters in the same order, read from the extension's signatures."""
    import ast
    import inspect

    from outprob import _core

    tree = ast.parse((PACKAGE / "_core.pyi").read_text())
    stubs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    declared = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__"
    )
    runtime = [n for n in dir(_core) if callable(getattr(_core, n)) and not n.startswith("__")]
    assert sorted(stubs) == sorted(runtime) == sorted(declared) == sorted(_core.__all__)
    for name, stub in stubs.items():
        params = inspect.signature(getattr(_core, name)).parameters.values()
        assert [a.arg for a in stub.args.args] == [p.name for p in params], name
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params), name
        assert not stub.args.defaults and not stub.args.kwonlyargs, name


def test_user_code_passes_mypy_strict():
    text = USER_CODE.read_text()
    assert "type: ignore" not in text
    modules = [str(PACKAGE / m) for m in STRICT_MODULES]
    run = mypy("--strict", str(USER_CODE), *modules)
    assert run.returncode == 0, run.stdout + run.stderr


def test_public_names_are_not_any_to_type_checkers(tmp_path):
    # Each line is a type error only if mypy knows the real type.
    wrong = textwrap.dedent(
        """
        import numpy as np
        import outprob
        from outprob import stats
        a: str = outprob.GaussianScaler()
        b: str = outprob.scaler("mean_std")
        c: str = outprob.VARIANTS
        d: str = outprob.from_dict({})
        e: str = stats.median([1.0, 2.0])
        f: str = stats.median(np.ones(3, dtype=np.float32))
        g: str = outprob.NotFittedError()
        h: str = outprob.LinearScaler().fit([1.0]).transform(np.ones(2))
        """
    )
    (tmp_path / "wrong.py").write_text(wrong)
    run = mypy("--strict", str(tmp_path / "wrong.py"))
    errors = [line for line in run.stdout.splitlines() if "Incompatible types in assignment" in line]
    assert len(errors) == 8, run.stdout
    for line, want in zip(errors, [
        "GaussianScaler", "GaussianScaler | LinearScaler", "Mapping[str, Variant]",
        "GaussianScaler | LinearScaler", "float64", "floating[_32Bit]", "NotFittedError",
        "float64",
    ]):  # fmt: skip
        assert want in line, line
