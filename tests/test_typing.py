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
    "__init__.py", "_base.py", "_incremental.py", "_scalers.py", "_input.py", "_output.py",
    "_exceptions.py", "_variants.py", "_gamma.py", "stats.py", "pyod.py", "_rank.py",
    "_sigmoid.py", "_parametric.py", "_ensemble.py", "_auto_trim.py",
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
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    declared = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__"
    )
    runtime = [n for n in dir(_core) if callable(getattr(_core, n)) and not n.startswith("__")]
    assert sorted([*stubs, *classes]) == sorted(runtime) == sorted(declared) == sorted(_core.__all__)

    def same_parameters(stub, fn, name, skip=0):
        params = list(inspect.signature(fn).parameters.values())
        assert [a.arg for a in stub.args.args[skip:]] == [p.name for p in params], name
        assert all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params), name
        assert not stub.args.defaults and not stub.args.kwonlyargs, name

    for name, stub in stubs.items():
        same_parameters(stub, getattr(_core, name), name)
    for name, cls in classes.items():
        runtime_cls = getattr(_core, name)
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
        public = {m for m in vars(runtime_cls) if not m.startswith("__")}
        assert set(methods) - {"__new__"} == public, name
        if "__new__" in methods:  # constructor: the class's text signature (cls is not in it)
            same_parameters(methods["__new__"], runtime_cls, name, skip=1)
        else:  # built by static methods only
            with pytest.raises(TypeError):
                runtime_cls()
        for m in public:
            static = isinstance(inspect.getattr_static(runtime_cls, m), staticmethod)
            fn = getattr(runtime_cls, m)
            if not static:  # bound through an instance-free descriptor: drop self
                sig = inspect.signature(fn)
                params = [p for p in sig.parameters.values()][1:]
                assert [a.arg for a in methods[m].args.args[1:]] == [p.name for p in params], (name, m)
            else:
                same_parameters(methods[m], fn, (name, m))


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
