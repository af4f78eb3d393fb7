#!/usr/bin/env python3
"""Streaming and scale-out measurements (contract §9), printed as a table.

    .venv/bin/python benches/streaming.py            # sketch, window, moments
    .venv/bin/python benches/streaming.py --dask 1e8 # + exact Dask fit vs da.percentile
    .venv/bin/python benches/streaming.py --cli      # only the `outprob stream` rows
    .venv/bin/python benches/streaming.py --cli --before main /work/main/.venv/bin/python \
        --variants mean_nmad median_nmad             # the same rows with main's outprob too
    .venv/bin/python benches/streaming.py --alerts --lines 1e7   # stream with/without
        --pvalues --alert lord++ --monitor jumper (contract §12), in one run
    .venv/bin/python benches/streaming.py --cli --window 100000 --before main PYTHON
    .venv/bin/python benches/streaming.py --cli --map --before main PYTHON
        # the stream's exact window, or a stored map (fitted on the first 10^5 scores)

* KLL update throughput of outprob.streaming.KLLSketch vs the
  ``datasketches`` package (same k, same float64 arrays, one thread).
* A windowed exact refit (median/nMAD and mean/std) at W = 10^6.
* Running mean/std partial updates (batches of 1e4, 1e5, 1e6) vs the
  in-memory fit per score.
* Exact Dask fit (median/nMAD) on a 2-worker LocalCluster with lazily
  generated chunks vs ``da.percentile`` on the same array: time, passes,
  bytes the partitions returned, and da.percentile's error.
* ``outprob stream`` on 2e6 lines from a file against ``awk '{print $1*2}'``
  on the same file, and the time to its first output line.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def best(fn, repeat=5):
    """Smallest wall time of ``repeat`` runs (the CPU time of that run is in
    ``best.cpu``: on a shared machine it shows the cost without waiting)."""
    times = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        times.append((time.perf_counter() - t, time.process_time() - c))
    wall, cpu = min(times)
    best.cpu = cpu
    return wall


def sketch_rows(n=10_000_000, k=800):
    from outprob.streaming import KLLSketch

    x = np.random.default_rng(0).lognormal(size=n)
    rows = []

    def ours():
        s = KLLSketch(k=k)
        for c in np.array_split(x, 10):
            s.update(c)

    t = best(ours, 3)
    rows.append(("KLL update (outprob), k=800", f"{n / t / 1e6:.1f} M scores/s "
                                                f"({n / best.cpu / 1e6:.1f} per CPU second)"))
    try:
        import datasketches

        def theirs():
            s = datasketches.kll_doubles_sketch(k)
            for c in np.array_split(x, 10):
                s.update(c)

        t2 = best(theirs, 3)
        rows.append(("KLL update (datasketches), k=800", f"{n / t2 / 1e6:.1f} M scores/s "
                                                         f"({n / best.cpu / 1e6:.1f} per CPU second)"))
        rows.append(("  ratio outprob/datasketches", f"{t2 / t:.2f}x"))
    except ImportError:
        rows.append(("KLL update (datasketches)", "not installed"))
    return rows


def window_rows(w=1_000_000):
    from outprob.streaming import StreamingFit

    x = np.random.default_rng(1).lognormal(size=2 * w)
    rows = []
    for center, scale in (("median", "nmad"), ("mean", "std"), ("huber", "huber")):
        fit = StreamingFit(center, scale, window=w)
        fit.update(x)
        t = best(fit.refit, 5)
        rows.append((f"window refit {center}/{scale}, W=10^6", f"{t * 1e3:.2f} ms"))
    return rows


def moments_rows(n=4_000_000, batches=(10_000, 100_000, 1_000_000)):
    """partial_fit in batches of each size vs fit on the whole array, per
    score (the in-memory fit is the baseline, timed in the same run)."""
    import outprob

    x = np.random.default_rng(2).normal(size=n)
    rows = []
    for name, make in (("mean/std", lambda: outprob.GaussianScaler("mean", "std")),
                       ("linear", outprob.LinearScaler)):
        t0 = best(lambda: make().fit(x), 3)
        c0 = best.cpu
        for size in batches:
            parts = [x[i:i + size] for i in range(0, n, size)]

            def streamed():
                s = make()
                for c in parts:
                    s.partial_fit(c)

            t = best(streamed, 3)
            c = best.cpu
            rows.append((f"partial_fit {name}, batches of {size:.0e}, vs fit",
                         f"{t / t0:.2f}x the wall time, {c / c0:.2f}x the CPU time "
                         f"({t / n * 1e9:.2f} vs {t0 / n * 1e9:.2f} ns/score)"))
    return rows


def dask_rows(n, chunk=10_000_000):
    import dask.array as da
    from distributed import Client, LocalCluster

    import outprob
    import outprob.dask as odask

    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            Client(cl):
        x = da.random.RandomState(0).lognormal(size=int(n), chunks=chunk)
        t = time.perf_counter()
        s, info = odask.fit(outprob.GaussianScaler("median", "nmad"), x, return_info=True)
        t_exact = time.perf_counter() - t
        t = time.perf_counter()
        approx = float(np.asarray(da.percentile(x, 50).compute()).reshape(-1)[0])
        t_pct = time.perf_counter() - t
        rows += [
            (f"Dask exact median+nMAD, n={n:.0e}", f"{t_exact:.1f} s, {info['passes']} passes, "
                                                   f"{info['bytes'] / 1e6:.1f} MB returned"),
            ("da.percentile(x, 50)", f"{t_pct:.1f} s, error {abs(approx - s.center_):.3g} "
                                     f"({abs(approx - s.center_) / s.scale_:.2g} σ)"),
            ("  ratio exact median+nMAD / da.percentile", f"{t_exact / t_pct:.2f}x"),
        ]
    return rows


# -- the command line ----------------------------------------------------------


def _child_run(argv, stdin_path, repeat=3):
    """Smallest wall time and the CPU time (user + system) of that run of a
    command reading ``stdin_path`` and writing to /dev/null."""
    import os
    import subprocess

    times = []
    for _ in range(repeat):
        before = os.times()
        t = time.perf_counter()
        with open(stdin_path, "rb") as inp, open(os.devnull, "wb") as out:
            subprocess.run(argv, stdin=inp, stdout=out, check=True)
        wall = time.perf_counter() - t
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        times.append((wall, cpu))
    return min(times)


def _first_line(argv, stdin_path, repeat=5):
    """Smallest time from starting the command to reading its first output
    line."""
    import subprocess

    best_t = float("inf")
    for _ in range(repeat):
        with open(stdin_path, "rb") as inp:
            t = time.perf_counter()
            proc = subprocess.Popen(argv, stdin=inp, stdout=subprocess.PIPE)
            proc.stdout.readline()
            best_t = min(best_t, time.perf_counter() - t)
            proc.stdout.close()
            proc.wait()
    return best_t


def stream_cli_rows(n=2_000_000, before=(), variants=("mean_nmad",), repeat=3, window=None,
                    stored=False):
    """``outprob stream`` (default batches) on n lines of a file vs ``awk
    '{print $1*2}'`` on the same file, in one run: for each variant, with
    this interpreter and with each ``(label, python)`` of ``before`` (an
    interpreter with another outprob installed, e.g. main's), alternating
    with awk so that the load they see is alike. ``window``: with
    ``--window``; ``stored``: with ``--map`` of median/nMAD fitted on the
    first 10^5 scores."""
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    x = np.random.default_rng(3).lognormal(size=n)
    rows = []
    awk = shutil.which("awk")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.txt"
        path.write_text("".join(f"{v!r}\n" for v in x.tolist()))
        extra = [] if window is None else ["--window", str(window)]
        if stored:
            import json

            import outprob

            fitted = outprob.scaler("median_nmad").fit(x[:100_000]).to_map().to_dict()
            (Path(tmp) / "map.json").write_text(json.dumps(fitted))
            extra, variants = ["--map", str(Path(tmp) / "map.json")], ["mean_nmad"]
        for variant in variants:
            for label, python in (("now", sys.executable),) + tuple(before):
                ours = [python, "-m", "outprob", "stream", "--variant", variant, *extra]
                t, c = _child_run(ours, path, repeat)
                shown = " ".join(["--map" if stored else f"--variant {variant}", *extra[:2 * (not stored)]])
                rows.append((f"outprob stream {shown} ({label}), {n:.0e} lines",
                             f"{t:.3f} s ({n / t / 1e6:.1f} M lines/s), CPU {c:.3f} s"))
                if awk is not None:
                    ta, ca = _child_run([awk, "{print $1*2}"], path, repeat)
                    rows.append(("  awk '{print $1*2}', same file", f"{ta:.3f} s, CPU {ca:.3f} s"))
                    rows.append(("  ratio outprob stream / awk", f"{t / ta:.2f}x the wall time, "
                                                                 f"{c / ca:.2f}x the CPU time"))
        rows.append(("outprob stream, first line",
                     f"{_first_line([sys.executable, '-m', 'outprob', 'stream'], path):.3f} s"))
    return rows


ALERT_FLAGS = ("--pvalues", "--alert", "lord++", "--alpha", "0.05", "--monitor", "jumper", "--alarm", "100")


def alerts_cli_rows(n=10_000_000, before=(), repeat=3, path=None):
    """``outprob stream`` with and without ``ALERT_FLAGS`` on the same n
    lines, alternating, for this interpreter and each ``(label, python)``
    of ``before``: the ratio of the alerts path to the plain stream
    (contract §12). ``path``: an existing file of scores to read instead
    of writing n lognormal scores to a temporary file."""
    import sys
    import tempfile
    from pathlib import Path

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if path is None:
            path = Path(tmp) / "scores.txt"
            x = np.random.default_rng(3).lognormal(size=n)
            with open(path, "w") as f:
                for i in range(0, n, 1_000_000):
                    f.write("".join(f"{v!r}\n" for v in x[i:i + 1_000_000].tolist()))
        else:
            with open(path, "rb") as f:
                n = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 24), b""))
        for label, python in (("now", sys.executable),) + tuple(before):
            plain = [python, "-m", "outprob", "stream"]
            runs = {"plain": [], "alerts": []}
            for _ in range(repeat):  # alternating, so that both see alike loads
                runs["plain"].append(_child_run(plain, path, 1))
                runs["alerts"].append(_child_run(plain + list(ALERT_FLAGS), path, 1))
            (tp, cp), (ta, ca) = (min(runs["plain"]), min(runs["alerts"]))
            cpu_p, cpu_a = min(c for _, c in runs["plain"]), min(c for _, c in runs["alerts"])
            rows.append((f"outprob stream ({label}), {n:.0e} lines", f"{tp:.2f} s wall, CPU {cpu_p:.2f} s"))
            rows.append((f"  {' '.join(ALERT_FLAGS)}", f"{ta:.2f} s wall, CPU {cpu_a:.2f} s"))
            rows.append(("  ratio alerts / plain", f"{ta / tp:.2f}x the wall time, {cpu_a / cpu_p:.2f}x the CPU time"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dask", type=float, default=0.0, help="also the Dask fit on this many scores")
    ap.add_argument("--cli", action="store_true", help="only the command-line rows")
    ap.add_argument("--before", nargs=2, action="append", default=[], metavar=("LABEL", "PYTHON"),
                    help="also time `outprob stream` with this interpreter (another outprob)")
    ap.add_argument("--variants", nargs="+", default=["mean_nmad"],
                    help="variants of the `outprob stream` rows (default: mean_nmad)")
    ap.add_argument("--lines", type=float, default=2e6, help="lines of the `outprob stream` rows")
    ap.add_argument("--alerts", action="store_true",
                    help="only `outprob stream` with and without p-values, lord++ and a jumper")
    ap.add_argument("--input", help="with --alerts: read this file of scores (one per line)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per command line (the best is kept)")
    ap.add_argument("--window", type=int, help="the `outprob stream` rows with --window W")
    ap.add_argument("--map", action="store_true",
                    help="the `outprob stream` rows with --map (median/nMAD of the first 10^5)")
    ap.add_argument("--only", choices=("sketch", "window", "moments"),
                    help="only these rows (and their baselines)")
    args = ap.parse_args()
    cli = dict(n=int(args.lines), before=[tuple(b) for b in args.before], variants=args.variants,
               window=args.window, stored=args.map)
    if args.alerts:
        rows = alerts_cli_rows(int(args.lines), cli["before"], args.repeat, args.input)
    elif args.cli:
        rows = stream_cli_rows(**cli, repeat=args.repeat)
    elif args.only:
        rows = {"sketch": sketch_rows, "window": window_rows, "moments": moments_rows}[args.only]()
    else:
        rows = sketch_rows() + window_rows() + moments_rows() + stream_cli_rows(**cli)
    if args.dask:
        rows += dask_rows(args.dask)
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
