#!/usr/bin/env python3
"""What each layer of the M-estimation earns: every layer switched off in
turn, its Huber and Tukey fits timed against all layers on, in one run.

    python3 benches/ablation.py --out benches/results/DATE-mest-ablation-MACHINE.md
    python3 benches/ablation.py --layers far_tails,runs --sizes 3e4,1e5 --rounds 2   # a few

Each layer is a ``cfg`` of the core (``--cfg outprob_ablate="far_tails"``,
declared in the workspace's ``Cargo.toml``; the layers are described in
``docs/design/m-estimation.md``). The script builds the example
``mest_profile`` once per layer with that layer off (each in its own
target directory under ``target/ablation``, so rebuilds are incremental),
once with every layer on, and times the fits of the suite's long-tailed
scores with each binary in turn, round after round (the order rotated each
round), so that every comparison is between runs minutes apart. The
builds run first, niced; each round of timings then holds the benchmark
lock (``--lock``, ``/tmp/outprob-bench.lock``: one benchmark at a time on a
shared machine) and records the load average before and after it.

A layer is only timed at the sizes where it is used (``ACTIVE``): switched
off elsewhere, the code that runs is the same. One thread is timed by the
process's CPU time (on a shared machine, wall time also counts the time
other processes ran); two threads by wall time, at the sizes where the fit
reads the scores in parallel. The table gives, per layer and size, the time
with the layer off over the time with all on: the median over the rounds
and their range. The direct path (``m_estimate_direct``, every score read
at every step) is timed the same way.

Memory: the scores of 1e8 take 0.8 GB; the direct path copies them (1.6
GB); the sorted path at 1e8 would hold 5-10 GB of prefix sums and is not
run there (``bucketed`` is timed up to 1e7).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from machine import cpu_model

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "target" / "ablation"
#: The sizes of the table; 1.5e4 is where `fetch_all` applies to Huber's fits.
SIZES = "1e2,1e3,1e4,1.5e4,3e4,1e5,1e6,1e7,1e8"
#: Where the fit reads the scores in parallel (``numeric::par::PARALLEL_MIN``).
PARALLEL_MIN = 1 << 18
#: Sorted below this many scores (``mest::bucketed_min``: Huber 12 288,
#: Tukey 16 384), bucketed from it.
SORTED_BELOW = 16_384
BUCKETED_FROM = 12_288
#: Far tails are set apart below this many scores (``mest::FAR_BELOW``).
FAR_BELOW = 1 << 18
#: The first fetch takes every leaf up to this many (``blocks::FETCH_ALL``).
FETCH_ALL = 1 << 14
BIG = 10**9

#: Each layer and the sizes [lo, hi) where it is used.
ACTIVE: Dict[str, Tuple[int, int]] = {
    "sorted": (0, SORTED_BELOW),
    "bucketed": (BUCKETED_FROM, 10**8),  # not at 1e8: see the memory note
    "bulk": (0, BIG),
    "bulk_avx2": (0, BIG),
    "tail_expansion": (0, SORTED_BELOW),
    "edge_guess": (0, SORTED_BELOW),
    "far_tails": (BUCKETED_FROM, FAR_BELOW),
    "band_gather": (BUCKETED_FROM, BIG),
    "fetch_all": (BUCKETED_FROM, FETCH_ALL + 1),
    "fetch_edges": (BUCKETED_FROM, BIG),
    "runs": (BUCKETED_FROM, BIG),
    "second_cut": (BUCKETED_FROM, BIG),
    "run_length": (BUCKETED_FROM, BIG),
    "counting_sort": (BUCKETED_FROM, BIG),
    "lanes": (BUCKETED_FROM, BIG),
    "branch_free": (BUCKETED_FROM, BIG),
    "grouping": (BUCKETED_FROM, BIG),
    "read_chunks": (PARALLEL_MIN, BIG),
    "tree_kernels": (BUCKETED_FROM, BIG),
}
ALL_ON = "all on"
DIRECT = "direct path"


def parse_sizes(text: str) -> List[int]:
    return [int(float(s)) for s in text.split(",") if s]


def fmt_n(n: int) -> str:
    e = len(str(n)) - 1
    m = n / 10**e
    return f"1e{e}" if m == 1 else f"{m:g}e{e}"


def binary(layer: Optional[str]) -> Path:
    """Builds `mest_profile` with `layer` off (None: all on); returns a copy
    of the binary that later builds leave alone."""
    name = layer or "all_on"
    env = dict(os.environ, CARGO_TARGET_DIR=str(TARGET / name))
    flags = os.environ.get("RUSTFLAGS", "")
    if layer:
        flags += f' --cfg outprob_ablate="{layer}"'
    env["RUSTFLAGS"] = flags.strip()
    cmd = ["nice", "-n", "10", "cargo", "build", "--quiet", "--release", "-p", "outprob-core",
           "--example", "mest_profile"]
    print(f"building {name}", file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    out = TARGET / "bin" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(TARGET / name / "release" / "examples" / "mest_profile", out)
    return out


def run(exe: Path, sizes: List[int], threads: int, direct: bool) -> List[dict]:
    if not sizes:
        return []
    cmd = [str(exe), "--json", "--threads", str(threads), *(str(n) for n in sizes)]
    if direct:
        cmd.insert(1, "--direct")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@contextlib.contextmanager
def locked(path: str):
    """Holds the benchmark lock `path` (none if empty) while timing."""
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def seconds(rec: dict, threads: int) -> float:
    """The median CPU time of one thread's calls, else the median wall time."""
    return statistics.median(rec["cpu"] if threads == 1 else rec["wall"])


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--layers", default=",".join(ACTIVE), help="comma-separated (default: every layer)")
    p.add_argument("--sizes", default=SIZES)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--large-rounds", type=int, default=1, help="rounds that include N >= 1e8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--no-direct", action="store_true")
    p.add_argument("--out", help="markdown file to write (also printed)")
    p.add_argument("--build-only", action="store_true", help="build the binaries, time nothing")
    p.add_argument("--lock", default="/tmp/outprob-bench.lock", help="held during each round ('' for none)")
    args = p.parse_args(argv)
    layers = [x for x in args.layers.split(",") if x]
    unknown = [x for x in layers if x not in ACTIVE]
    if unknown:
        p.error(f"unknown layers {unknown}; known: {', '.join(ACTIVE)}")
    sizes = parse_sizes(args.sizes)
    thread_counts = [int(t) for t in args.threads.split(",")]
    started = time.time()
    exes = {ALL_ON: binary(None), **{x: binary(x) for x in layers}}
    if args.build_only:
        return 0
    variants: List[Tuple[str, Path, bool]] = [(ALL_ON, exes[ALL_ON], False)]
    if not args.no_direct:
        variants.append((DIRECT, exes[ALL_ON], True))
    variants += [(x, exes[x], False) for x in layers]
    # times[(variant, threads, fit, n)] = one time per round
    times: Dict[Tuple[str, int, str, int], List[float]] = {}
    loads: List[Tuple[Tuple[float, ...], Tuple[float, ...]]] = []
    for r in range(args.rounds):
        with locked(args.lock):
            loads.append((os.getloadavg(), ()))
            one_round(r, variants, sizes, thread_counts, args, times)
            loads[-1] = (loads[-1][0], os.getloadavg())
    lines = report(times, variants, sizes, thread_counts, args, loads, started)
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


def one_round(r, variants, sizes, thread_counts, args, times) -> None:
    """Round `r`: every variant at its sizes, in an order rotated by `r`."""
    k = r % len(variants)
    for name, exe, direct in variants[k:] + variants[:k]:
        lo, hi = ACTIVE.get(name, (0, BIG))
        for threads in thread_counts:
            chosen = [n for n in sizes if lo <= n < hi and (threads == 1 or n >= PARALLEL_MIN)
                      and (n < 10**8 or r < args.large_rounds)]
            print(f"round {r + 1}: {name}, {threads} thread(s), N = {', '.join(map(fmt_n, chosen))}",
                  file=sys.stderr, flush=True)
            for rec in run(exe, chosen, threads, direct):
                fit = rec["fit"].split()[0]
                times.setdefault((name, threads, fit, rec["n"]), []).append(seconds(rec, threads))


def version(cmd: List[str]) -> str:
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def ratio_cell(off: List[float], on: List[float]) -> str:
    """Median over the rounds of off/on (round by round), and the range."""
    ratios = [a / b for a, b in zip(off, on)]
    if not ratios:
        return "–"
    med = statistics.median(ratios)
    if len(ratios) == 1:
        return f"{med:.2f}"
    return f"{med:.2f} ({min(ratios):.2f}–{max(ratios):.2f})"


def report(times, variants, sizes, thread_counts, args, loads, started) -> List[str]:
    out = [
        "# M-estimation: what each layer earns",
        "",
        "Command: `python3 benches/ablation.py "
        + " ".join(a for a in (sys.argv[1:] if args is not None else [])) + "`",
        "",
        f"CPU: {cpu_model()}; {os.cpu_count()} logical cores; {platform.system()} {platform.release()}",
        f"{version(['rustc', '-V'])}; outprob at {version(['git', 'rev-parse', '--short', 'HEAD'])}",
        "load average (1, 5, 15 min) before and after each round: " + "; ".join(
            f"round {i + 1}: {' '.join(f'{v:.2f}' for v in a)} → {' '.join(f'{v:.2f}' for v in b)}"
            for i, (a, b) in enumerate(loads)),
        f"{args.rounds} rounds ({args.large_rounds} with 1e8); wall time {time.time() - started:.0f} s",
        "",
        "Scores: long-tailed (lognormal bulk, 3% outliers at 10 + lognormal(2, 1); "
        "`rust/core/examples/common/scores.rs`), float64, maxiter 100. One thread: the "
        "process's CPU time per fit; two threads: wall time. Each cell: the fit's time with "
        "the layer switched off over its time with every layer on, the median over the rounds "
        "(each round's pair measured minutes apart) and, in parentheses, the range; > 1 means "
        "the layer makes the fit faster. '–': the layer is not used at that size.",
    ]
    for threads in thread_counts:
        shown = [n for n in sizes if threads == 1 or n >= PARALLEL_MIN]
        for fit in ("huber", "tukey"):
            out += ["", f"## {fit.capitalize()}, {threads} thread{'s' if threads > 1 else ''}", ""]
            out.append("| layer off | " + " | ".join(f"N={fmt_n(n)}" for n in shown) + " |")
            out.append("|---" * (len(shown) + 1) + "|")
            base = [f"{statistics.median(times[(ALL_ON, threads, fit, n)]) * 1e6:.4g} µs"
                    if (ALL_ON, threads, fit, n) in times else "–" for n in shown]
            out.append("| (all on: time per fit) | " + " | ".join(base) + " |")
            spread = []
            for n in shown:
                v = times.get((ALL_ON, threads, fit, n), [])
                spread.append(f"{max(v) / min(v):.2f}" if len(v) > 1 else "–")
            out.append("| (all on: slowest/fastest round) | " + " | ".join(spread) + " |")
            for name, _, _ in variants[1:]:
                cells = []
                for n in shown:
                    off = times.get((name, threads, fit, n))
                    on = times.get((ALL_ON, threads, fit, n))
                    cells.append(ratio_cell(off, on) if off and on else "–")
                out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "## Each layer's largest gain", "",
            "The cell of the tables above with the largest median, and the smallest "
            "ratio of any round in it.", "",
            "| layer | largest median (range) | at |", "|---|---|---|"]
    for name, _, _ in variants[1:]:
        best = None
        for threads in thread_counts:
            for fit in ("huber", "tukey"):
                for n in sizes:
                    off, on = times.get((name, threads, fit, n)), times.get((ALL_ON, threads, fit, n))
                    if off and on:
                        ratios = [a / b for a, b in zip(off, on)]
                        key = statistics.median(ratios)
                        if best is None or key > best[0]:
                            best = (key, ratio_cell(off, on), f"{fit}, N={fmt_n(n)}, {threads} thread(s)")
        if best:
            out.append(f"| {name} | {best[1]} | {best[2]} |")
    base_med = {}
    for (name, threads, fit, n), v in times.items():
        if name == ALL_ON and fit == "median_nmad":
            base_med[(threads, n)] = statistics.median(v)
    out += ["", "## All on, against a median + nMAD fit of the same scores", ""]
    for threads in thread_counts:
        shown = [n for n in sizes if (threads == 1 or n >= PARALLEL_MIN) and (threads, n) in base_med]
        out.append(f"{threads} thread(s): " + "; ".join(
            f"N={fmt_n(n)} huber {statistics.median(times[(ALL_ON, threads, 'huber', n)]) / base_med[(threads, n)]:.1f}x, "
            f"tukey {statistics.median(times[(ALL_ON, threads, 'tukey', n)]) / base_med[(threads, n)]:.1f}x"
            for n in shown if (ALL_ON, threads, "huber", n) in times))
    return out


if __name__ == "__main__":
    sys.exit(main())
