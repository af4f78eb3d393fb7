#!/usr/bin/env python3
"""Online decisions on a stream (contract §12) against their baselines,
measured in the same run, printed as a Markdown report.

    flock /tmp/outprob-bench.lock .venv/bin/python benches/sequential.py \
        --out benches/results/DATE-sequential-MACHINE.md

* Martingales: ``outprob.Martingale.update`` on 10⁶ uniform p-values in one
  call, per kind, against nonconform 2.0's ``update_many`` (run in its own
  Python ≥ 3.12 environment, ``.venv-nonconform``, made by
  ``scripts/dev.py test``) on the first ``--n-baseline`` of them — its cost
  per p-value does not depend on the stream's length; the values are
  checked equal (1e-9, log scale) on that prefix.
* Online FDR: ``outprob.OnlineFDR.decide`` on 10⁶ uniform p-values, per
  rule, against ``online-fdr`` 1.0's ``test_one`` loop on the same
  p-values (decisions checked equal); and outprob on 10⁶ p-values with 1 %
  strong signals (thousands of rejections carrying weight).
* Online conformal p-values: ``outprob.OnlineConformal.pvalues`` on 10⁵
  and 10⁶ normal scores (no baseline: the cost per score shows the
  O(log n) growth).

Times are the best of ``--repeat`` runs (baselines: one run), wall clock
and the thread's CPU time (``time.thread_time``: every call here runs on
the calling thread, so on a shared machine the CPU time is the work and
the wall clock adds the waits for a core); ratios are baseline / outprob
per p-value, in CPU time.
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
from timing import best_wall_cpu as best, load, report  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

NONCONFORM_TIMER = r"""
import json, sys, time
import numpy as np
from nonconform import martingales as mg
p = np.load(sys.argv[1])
out = {}
for kind in ("jumper", "power", "mixture"):
    m = {"jumper": mg.SimpleJumperMartingale(), "power": mg.PowerMartingale(),
         "mixture": mg.SimpleMixtureMartingale()}[kind]
    t, c = time.perf_counter(), time.thread_time()
    states = m.update_many(p)
    out[kind] = (time.perf_counter() - t, time.thread_time() - c)
    np.save(sys.argv[2] + kind + ".npy", np.array([s.log_martingale for s in states]))
import nonconform
out["version"] = nonconform.__version__
print(json.dumps(out))
"""






def ns(t: tuple, n: int) -> str:
    return f"{t[1] / n * 1e9:.1f}"


def ratio(base: tuple, nb: int, ours: tuple, n: int) -> str:
    return f"{(base[1] / nb) / (ours[1] / n):.0f}×"


def martingales(args, rng, rows):
    import outprob

    n, nb = int(args.n), int(args.n_baseline)
    p = rng.uniform(size=n)
    ours = {}
    for kind in ("jumper", "power", "mixture"):
        ours[kind] = best(lambda: outprob.Martingale(kind).update(p), args.repeat)
    nc_python = os.environ.get("OUTPROB_NONCONFORM_PYTHON") or str(ROOT / ".venv-nonconform/bin/python")
    theirs, version = {}, "not run"
    if Path(nc_python).exists():
        with tempfile.TemporaryDirectory() as d:
            np.save(Path(d) / "p.npy", p[:nb])
            run = subprocess.run([nc_python, "-c", NONCONFORM_TIMER, str(Path(d) / "p.npy"), d + "/m_"],
                                 capture_output=True, text=True, check=True)
            out = json.loads(run.stdout)
            version = out.pop("version")
            for kind, t in out.items():
                want = np.load(Path(d) / f"m_{kind}.npy")
                got = outprob.Martingale(kind).update(p[:nb]).log_martingale
                # 1e-12 holds over the tests' 2000 p-values; over 10^5 the
                # jumper's uncompensated sum in nonconform drifts (4e-10 at
                # ln M = -392, against 2e-12 here, both to a 40-digit sum).
                assert np.all(np.abs(got - want) <= 1e-9 * (1 + np.abs(want))), kind
                theirs[kind] = tuple(t)
    for kind, t in ours.items():
        r = ""
        if kind in theirs:
            r = ratio(theirs[kind], nb, t, n)
            rows.append((f"martingale {kind}: nonconform {version} update_many, {nb:,} p-values",
                         theirs[kind], ns(theirs[kind], nb), ""))
        rows.append((f"martingale {kind}: outprob update, {n:,} p-values", t, ns(t, n), r))
    return version


def online_fdr_rows(args, rng, rows):
    import online_fdr
    from online_fdr.p_values import Addis, Lond, LordPlusPlus, Saffron

    import outprob

    n = int(args.n)
    p = rng.uniform(size=n)
    make = {
        "lord++": lambda: LordPlusPlus(0.05, wealth=0.005),
        "saffron": lambda: Saffron(0.05, wealth=0.025, lambda_=0.5),
        "addis": lambda: Addis(0.05, wealth=0.025, lambda_=0.25, tau=0.5),
        "lond": lambda: Lond(0.05),
    }
    for method, ref in make.items():
        t_ours = best(lambda: outprob.OnlineFDR(method).decide(p), args.repeat)
        nb = int(args.n_fdr_baseline)
        rule = ref()
        values = p[:nb].tolist()
        t0, c0 = time.perf_counter(), time.thread_time()
        want = [rule.test_one(x) for x in values]
        t_ref = (time.perf_counter() - t0, time.thread_time() - c0)
        got = outprob.OnlineFDR(method).decide(p[:nb])
        assert got.tolist() == want, method
        rows.append((f"online FDR {method}: online-fdr {online_fdr.__version__} test_one loop, {nb:,} p-values",
                     t_ref, ns(t_ref, nb), ""))
        rows.append((f"online FDR {method}: outprob decide, {n:,} uniform p-values", t_ours, ns(t_ours, n),
                     ratio(t_ref, nb, t_ours, n)))
    signal = rng.uniform(size=n) < 0.01
    q = np.where(signal, rng.uniform(size=n) * 1e-7, rng.uniform(size=n))
    for method in ("lord++", "saffron"):
        fdr = outprob.OnlineFDR(method)
        t = best(lambda: outprob.OnlineFDR(method).decide(q), args.repeat)
        r = int(fdr.decide(q).sum())
        rows.append((f"online FDR {method}: outprob, {n:,} p-values with 1 % signals ({r:,} rejections)",
                     t, ns(t, n), ""))
    return online_fdr.__version__


def pvalue_rows(args, rng, rows):
    import outprob

    for n in (int(args.n) // 10, int(args.n)):
        x = rng.normal(size=n)
        t = best(lambda: outprob.OnlineConformal().pvalues(x), args.repeat)
        rows.append((f"online p-values: outprob, {n:,} normal scores", t, ns(t, n), ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=float, default=1e6)
    ap.add_argument("--n-baseline", type=float, default=1e5, help="p-values nonconform runs")
    ap.add_argument("--n-fdr-baseline", type=float, default=1e6, help="p-values online-fdr runs")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import outprob

    rng = np.random.default_rng(0)
    before = load()
    rows: list = []
    nc_version = martingales(args, rng, rows)
    ofdr_version = online_fdr_rows(args, rng, rows)
    pvalue_rows(args, rng, rows)
    after = load()
    lines = [
        "# Online decisions on a stream: outprob against its baselines",
        "",
        f"Command: `flock /tmp/outprob-bench.lock {sys.executable} benches/sequential.py "
        f"--n {args.n:g} --n-baseline {args.n_baseline:g} --n-fdr-baseline {args.n_fdr_baseline:g} "
        f"--repeat {args.repeat}`",
        "",
        f"Uniform p-values (seed 0); outprob best of {args.repeat}, baselines one run; "
        "ratio = baseline / outprob per p-value in CPU time; parameters are each library's defaults "
        "(online-fdr: α = 0.05 and R onlineFDR's w₀, λ, τ).",
        "",
        "| what | wall s | CPU s | CPU ns per p-value | ratio (CPU) |",
        "|---|---|---|---|---|",
        *[f"| {name} | {t[0]:.4f} | {t[1]:.4f} | {per} | {r} |" for name, t, per, r in rows],
        "",
        f"Machine: {cpu_model()}, {os.cpu_count()} cores; {platform.platform()}. Python "
        f"{platform.python_version()}, outprob {outprob.__version__}, NumPy {np.__version__}, "
        f"online-fdr {ofdr_version}, nonconform {nc_version} (its own Python ≥ 3.12 environment).",
        "",
        f"Load average (1, 5, 15 min) before: {before}; after: {after}.",
        "",
    ]
    report(lines, args.out)


if __name__ == "__main__":
    main()
