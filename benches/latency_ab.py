#!/usr/bin/env python3
"""Per-call latency of two builds of outprob, side by side, in CPU time.

    python benches/latency_ab.py --a DIR_A --b DIR_B [--rounds 5] [--repeat 5] [--min-ms 20]

``DIR_A`` and ``DIR_B`` each hold an installed outprob (``pip install
--no-deps --target DIR wheel``); each round runs one child process per
build, in turn (a, b; then b, a; …), so that a change of the machine's
load, or the cost of running second, hits both alike. A child times the calls of ``latency.py`` (``transform``
of 1–1000 scores by a fitted scaler; ``fit_transform`` of 100 scores, with
and without constructing the scaler) with ``time.process_time`` — CPU
time, which a shared machine inflates less than wall time — each the
median of ``--repeat`` runs of at least ``--min-ms`` ms. The table gives,
per call, the median over rounds of each build, their ratio, and the
range of the ratio within a round (how far noise alone moves it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent

CHILD = r"""
import gc, json, math, statistics, sys, time
sys.path.insert(0, {here!r})
import latency, sweep
import outprob

def cpu(fn, loops):
    gc.collect(); gc.disable()
    try:
        t = time.process_time()
        for _ in range(loops):
            fn()
        return (time.process_time() - t) / loops
    finally:
        gc.enable()

out = {{"version": outprob.__version__, "path": outprob.__file__, "calls": {{}}}}
for label, ours, _, _ in latency.calls(sweep.parse_args([])):
    ours()
    loops = 1
    while cpu(ours, loops) * loops < {min_s}:
        loops *= 4
    out["calls"][label] = statistics.median(cpu(ours, loops) for _ in range({repeat}))
print(json.dumps(out))
"""


def child(path: str, args: argparse.Namespace) -> Dict[str, object]:
    env = dict(os.environ, PYTHONPATH=path, OUTPROB_NUM_THREADS="1")
    code = CHILD.format(here=str(HERE), min_s=args.min_ms / 1e3, repeat=args.repeat)
    res = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a", required=True, help="directory holding build A (the baseline)")
    p.add_argument("--b", required=True, help="directory holding build B")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=5, help="timed runs per call and round")
    p.add_argument("--min-ms", type=float, default=20.0, help="shortest timed run (CPU ms)")
    args = p.parse_args(argv)
    started = time.perf_counter()
    load_before = os.getloadavg()
    runs: Dict[str, List[Dict[str, object]]] = {"a": [], "b": []}
    for r in range(args.rounds):
        for key in ("a", "b") if r % 2 == 0 else ("b", "a"):
            runs[key].append(child(getattr(args, key), args))
            print(f"round {r + 1}/{args.rounds} {key} done", file=sys.stderr, flush=True)
    labels = list(runs["a"][0]["calls"])  # type: ignore[arg-type]
    rows = []
    for label in labels:
        a = statistics.median(run["calls"][label] for run in runs["a"])  # type: ignore[index]
        b = statistics.median(run["calls"][label] for run in runs["b"])  # type: ignore[index]
        per_round = [rb["calls"][label] / ra["calls"][label]  # type: ignore[index]
                     for ra, rb in zip(runs["a"], runs["b"])]
        rows.append((label, a * 1e6, b * 1e6, b / a, min(per_round), max(per_round)))
    print(f"# latency, A = {runs['a'][0]['path']}, B = {runs['b'][0]['path']}")
    print(f"command: latency_ab.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"load average before: {load_before}; after: {os.getloadavg()}")
    print()
    print("| call | A µs (CPU) | B µs (CPU) | B / A | B / A per round, min–max |")
    print("|---|---|---|---|---|")
    for label, a, b, ratio, lo, hi in rows:
        print(f"| {label} | {a:.2f} | {b:.2f} | {ratio:.3f} | {lo:.3f}–{hi:.3f} |")
    print()
    print(f"wall time: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
