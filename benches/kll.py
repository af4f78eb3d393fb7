#!/usr/bin/env python3
"""The KLL sketch against Apache DataSketches, in one run (issue #33's
"sketch" row): update, merge, quantile and serialise of

* ours through the public API (``outprob.streaming.KLLSketch``),
* DataSketches' C++ sketch through its Python package (``datasketches``,
  the baseline; outprob's test extra),
* ours in Rust (``outprob-core``) and DataSketches' Rust crate
  (``datasketches`` 0.6, feature ``kll``), both from the small crate in
  ``benches/kll_crate`` (built here; not part of the workspace),

on the same long-tailed scores, float64, k = 800. Times are the smallest
CPU time of several runs (on a shared machine it leaves out the time spent
waiting for a core); the ratios are of times measured in this run.

    .venv/bin/python benches/kll.py [--n 1e7] [--runs 5] [--markdown]

`update`: the scores in 10 equal batches into an empty sketch (the crate
has no batch update and takes them one at a time); `merge`: the 10 batch
sketches into an empty one; `quantile`: 99 quantiles, the sorted view built
once (in Python after a one-item update, so that no cached view is reused);
`serialise` / `deserialise`: the whole sketch's DataSketches bytes. The run
also checks that the crate and ours read the C++ sketch's bytes and write
them back unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_model  # noqa: E402
from operations import long_tailed_scores  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CRATE = ROOT / "benches" / "kll_crate"
OPS = ("update", "merge", "quantile", "serialize", "deserialize")
RANKS = [i / 100 for i in range(1, 100)]


def best(runs, fn, setup=lambda: None):
    """Smallest CPU and wall seconds of ``runs`` calls of ``fn(setup())``."""
    cpu = wall = float("inf")
    for _ in range(runs):
        arg = setup()
        c, w = time.process_time(), time.perf_counter()
        fn(arg)
        cpu = min(cpu, time.process_time() - c)
        wall = min(wall, time.perf_counter() - w)
    return cpu, wall


def python_side(name, x, k, batches, runs):
    """The four operations (and deserialise) of ours or of C++, from Python."""
    if name == "ours":
        from outprob.streaming import KLLSketch

        def new():
            return KLLSketch(k=k)

        def quantiles(s):
            s.update(np.array([1.0]))
            return s.quantiles(RANKS)

        def deserialize(b):
            return KLLSketch.deserialize(b)
    else:
        import datasketches

        def new():
            return datasketches.kll_doubles_sketch(k)

        def quantiles(s):
            s.update(1.0)
            return s.get_quantiles(RANKS)

        deserialize = datasketches.kll_doubles_sketch.deserialize
    parts = np.array_split(x, batches)

    def build(_=None):
        s = new()
        for p in parts:
            s.update(p)
        return s

    sketches = []
    for p in parts:
        s = new()
        s.update(p)
        sketches.append(s)

    def merge(_):
        s = new()
        for p in sketches:
            s.merge(p)
        return s

    whole = build()
    data = whole.serialize()
    out = {
        "update": best(runs, build),
        "merge": best(runs, merge),
        "quantile": best(runs * 20, quantiles, lambda: whole),
        "serialize": best(runs * 20, lambda s: s.serialize(), lambda: whole),
        "deserialize": best(runs * 20, deserialize, lambda: data),
    }
    return out, whole


def rust_side(name, path, k, batches, runs, cpp_bytes, out_bytes, target):
    exe = Path(target) / "release" / "kll-crate-bench"
    cmd = [str(exe), name, str(path), str(k), str(batches), str(runs), str(cpp_bytes), str(out_bytes)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def build_crate(target):
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    subprocess.run(
        ["cargo", "build", "--quiet", "--release", "--manifest-path", str(CRATE / "Cargo.toml")],
        check=True, env=env,
    )


def versions():
    from importlib.metadata import version

    def run(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT).stdout.strip()
        except OSError:
            return "?"

    lock = (CRATE / "Cargo.lock").read_text() if (CRATE / "Cargo.lock").exists() else ""
    crate = "?"
    for block in lock.split("[[package]]"):
        if 'name = "datasketches"' in block:
            crate = block.split('version = "')[1].split('"')[0]
    return (
        f"CPU: {cpu_model()}; {os.cpu_count()} logical cores; Linux {platform.release()}\n"
        f"Python {platform.python_version()}; NumPy {np.__version__}; outprob {version('outprob')} "
        f"(commit {run('git', 'rev-parse', '--short', 'HEAD')}); datasketches (C++, PyPI) "
        f"{version('datasketches')}; datasketches (Rust crate) {crate}; {run('rustc', '--version')}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e7)
    ap.add_argument("--k", type=int, default=800)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--target", default=str(ROOT / "target"), help="cargo target folder")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    n = int(args.n)
    build_crate(args.target)
    load_start = os.getloadavg()
    x, _ = long_tailed_scores(n)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.f64"
        path.write_bytes(x.astype("<f8").tobytes())
        rows["ours (Python)"], ours = python_side("ours", x, args.k, args.batches, args.runs)
        rows["C++ (Python)"], cpp = python_side("cpp", x, args.k, args.batches, args.runs)
        cpp_bytes, checks = Path(tmp) / "cpp.bin", {}
        cpp_bytes.write_bytes(cpp.serialize())
        for name, label in (("ours", "ours (Rust)"), ("crate", "crate (Rust)")):
            back = Path(tmp) / f"{name}.bin"
            r = rust_side(name, path, args.k, args.batches, args.runs, cpp_bytes, back, args.target)
            rows[label] = {op: tuple(r[op]) for op in OPS}
            checks[label] = (r["n"], back.read_bytes() == cpp_bytes.read_bytes())
        from outprob.streaming import KLLSketch

        checks["ours (Python)"] = (
            ours.n, KLLSketch.deserialize(cpp_bytes.read_bytes()).serialize() == cpp_bytes.read_bytes())
    load_end = os.getloadavg()

    def per(op, cpu):
        return f"{cpu / n * 1e9:.2f} ns/score" if op == "update" else f"{cpu * 1e6:.1f} µs"

    names = list(rows)
    print("# KLL sketch: ours vs DataSketches (C++ and Rust), one run\n")
    print(versions())
    print(f"load average at start: {', '.join(f'{v:.2f}' for v in load_start)}; "
          f"at end: {', '.join(f'{v:.2f}' for v in load_end)}")
    print(f"N = {n:.0e} long-tailed float64 scores, k = {args.k}, {args.batches} batches; "
          f"smallest CPU time of {args.runs} runs (20x as many for the µs operations)\n")
    print("| operation | " + " | ".join(names) + " | C++ / ours (Python) | crate / ours (Rust) |")
    print("|---|" + "---|" * (len(names) + 2))
    for op in OPS:
        cells = [per(op, rows[nm][op][0]) for nm in names]
        r1 = rows["C++ (Python)"][op][0] / rows["ours (Python)"][op][0]
        r2 = rows["crate (Rust)"][op][0] / rows["ours (Rust)"][op][0]
        print(f"| {op} | " + " | ".join(cells) + f" | {r1:.2f}x | {r2:.2f}x |")
    print("\nWall time (smallest of the same runs):\n")
    print("| operation | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for op in OPS:
        print(f"| {op} | " + " | ".join(per(op, rows[nm][op][1]) for nm in names) + " |")
    print("\nBytes: each implementation read the C++ sketch's bytes and wrote them back:")
    for label, (count, same) in checks.items():
        print(f"- {label}: n = {count}; C++ bytes written back unchanged: {same}")


if __name__ == "__main__":
    main()
