"""Types (contract §7, "Types"): the stub of the compiled core matches the
extension (what mypy.stubtest checks), typical user code passes ``mypy
--strict`` with the public names seen precisely despite the lazy loading,
and every module of outprob is ``--strict`` clean (bar those named in
``NOT_YET_STRICT``, each with its reason)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[2]
USER_CODE = Path(__file__).resolve().parents[1] / "typecheck" / "user_code.py"
# Every module of the package, as imported: the installed package when the
# suite runs against a wheel, as users type-check against it.
PACKAGE = Path(importlib.util.find_spec("outprob").origin).parent
# Modules not yet held to --strict, each with its reason.
NOT_YET_STRICT: set[str] = set()
MODULES = sorted(
    ".".join(f.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
    for f in PACKAGE.rglob("*.py")
)
STRICT_MODULES = [m for m in MODULES if m not in NOT_YET_STRICT]


def mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    cache = ROOT / ".mypy_cache"
    cmd = [sys.executable, "-m", "mypy", "--cache-dir", str(cache), "--no-error-summary", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=os.environ.copy())


def _stub_parameters(fn, skip=0):
    """(name, kind, has a default) of each parameter of a stub function."""
    import inspect

    a = fn.args
    out = [(p.arg, inspect.Parameter.POSITIONAL_ONLY, False) for p in a.posonlyargs]
    out += [(p.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, False) for p in a.args]
    for k, d in enumerate(a.defaults):  # defaults belong to the last positional parameters
        name, kind, _ = out[len(out) - len(a.defaults) + k]
        out[len(out) - len(a.defaults) + k] = (name, kind, True)
    if a.vararg is not None:
        out.append((a.vararg.arg, inspect.Parameter.VAR_POSITIONAL, False))
    out += [
        (p.arg, inspect.Parameter.KEYWORD_ONLY, d is not None)
        for p, d in zip(a.kwonlyargs, a.kw_defaults)
    ]
    if a.kwarg is not None:
        out.append((a.kwarg.arg, inspect.Parameter.VAR_KEYWORD, False))
    return out[skip:]


def _runtime_parameters(fn, skip=0):
    import inspect

    params = list(inspect.signature(fn).parameters.values())[skip:]
    return [(p.name, p.kind, p.default is not p.empty) for p in params]


def test_core_stub_matches_the_extension():
    """What ``python -m mypy.stubtest outprob._core`` checks (it passes too, in
    ~10 s): the same functions and classes; each function, constructor and
    method with the same parameters in the same order, of the same kind
    (positional or keyword-only), with a default where the extension has
    one; each class with the same methods and readable attributes."""
    import ast
    import inspect

    from outprob import _core

    tree = ast.parse((PACKAGE / "_core.pyi").read_text())
    stubs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    # TypedDicts of keyword parameters (``**params: Unpack[...]``) exist in the stub only.
    classes = {
        c.name: c for c in tree.body
        if isinstance(c, ast.ClassDef) and [getattr(b, "id", "") for b in c.bases] != ["TypedDict"]
    }
    declared = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "__all__"
    )
    runtime = [n for n in dir(_core) if callable(getattr(_core, n)) and not n.startswith("__")]
    assert sorted([*stubs, *classes]) == sorted(runtime) == sorted(declared) == sorted(_core.__all__)

    for name, stub in stubs.items():
        assert _stub_parameters(stub) == _runtime_parameters(getattr(_core, name)), name
    for name, cls in classes.items():
        runtime_cls = getattr(_core, name)
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
        attributes = {a.target.id for a in cls.body if isinstance(a, ast.AnnAssign)}
        public = {m for m in vars(runtime_cls) if not m.startswith("__")}
        assert (set(methods) | attributes) - {"__new__"} == public, name
        if "__new__" in methods:  # constructor: the class's text signature (cls is not in it)
            assert _stub_parameters(methods["__new__"], skip=1) == _runtime_parameters(runtime_cls), name
        else:  # built by static methods only
            with pytest.raises(TypeError):
                runtime_cls()
        for m in public - attributes:
            raw = inspect.getattr_static(runtime_cls, m)
            stub = methods[m]
            decorators = {getattr(d, "id", None) for d in stub.decorator_list}
            if not callable(raw) and not isinstance(raw, staticmethod):  # a readable attribute
                assert "property" in decorators, (name, m)
            elif isinstance(raw, staticmethod):
                assert "staticmethod" in decorators, (name, m)
                assert _stub_parameters(stub) == _runtime_parameters(getattr(runtime_cls, m)), (name, m)
            else:  # bound through an instance-free descriptor: drop self
                assert _stub_parameters(stub, skip=1) == _runtime_parameters(
                    getattr(runtime_cls, m), skip=1
                ), (name, m)


def test_keyword_parameters_are_the_cores():
    """A ``**params: Unpack[_X]`` of the stub names exactly the parameters the
    core declares for it, in its order: the core refuses a call that lacks
    one by naming it, and a name it does not declare with ``TypeError``."""
    import ast
    import re

    import numpy as np

    from outprob import _core

    tree = ast.parse((PACKAGE / "_core.pyi").read_text())
    typed = {
        c.name: [(a.target.id, ast.unparse(a.annotation)) for a in c.body if isinstance(a, ast.AnnAssign)]
        for c in tree.body
        if isinstance(c, ast.ClassDef) and [getattr(b, "id", "") for b in c.bases] == ["TypedDict"]
    }
    sorted_scores = np.sort(np.random.default_rng(1).normal(size=50))
    # What each callable takes besides its keyword parameters.
    given = {
        "m_estimate": ((np.ones(3),), {"nan_policy": "omit"}),
        "ConformalTail": ((sorted_scores,), {}),
        "ColumnPlan": ((_core.GaussianSpec(center="median", scale="nmad"),), {}),
    }
    dummy = {"str": "", "int": 0, "float": 0.0, "bool": False}
    callables = [(f.name, getattr(_core, f.name), f) for f in tree.body if isinstance(f, ast.FunctionDef)]
    for c in tree.body:
        if isinstance(c, ast.ClassDef) and c.name not in typed:
            for m in c.body:
                if isinstance(m, ast.FunctionDef):
                    runtime = getattr(_core, c.name)
                    fn = runtime if m.name == "__new__" else getattr(runtime, m.name)
                    callables.append((c.name if m.name == "__new__" else f"{c.name}.{m.name}", fn, m))
    checked = []
    for name, fn, stub in callables:
        kw = stub.args.kwarg
        if kw is None:
            continue
        fields = typed[kw.annotation.slice.id]
        args, extra = given.get(name, ((), {}))
        with pytest.raises(TypeError, match='unexpected keyword argument "not_a_parameter"'):
            fn(*args, **extra, **{f: dummy.get(t) for f, t in fields}, not_a_parameter=1)
        named, values = [], {}
        while True:
            try:
                fn(*args, **extra, **values)
                break
            except ValueError as e:
                missing = re.match(r'parameters: missing "(\w+)"', str(e))
                if missing is None:
                    break
                key = missing.group(1)
                assert key in dict(fields), (name, key)
                named.append(key)
                values[key] = dummy.get(dict(fields)[key])
        assert named == [f for f, _ in fields], name
        checked.append(name)
    assert len(checked) == len(typed)


def test_user_code_passes_mypy_strict():
    text = USER_CODE.read_text()
    assert "type: ignore" not in text
    assert NOT_YET_STRICT <= set(MODULES) and "reference.metrics" in STRICT_MODULES
    # By module name, so that they are the package under test (installed
    # or not); mypy takes files or modules, not both, so two runs.
    modules = [a for m in STRICT_MODULES
               for a in ("-m", "outprob" if m == "__init__" else f"outprob.{m}")]
    for args in ([str(USER_CODE)], modules):
        run = mypy("--strict", *args)
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
