#!/usr/bin/env python3
"""outprob against what a user would use instead: one table, one run.

    python benches/compare.py                 # N = 1e3, 1e5, 1e7; float64 and float32
    python benches/compare.py --large         # adds N = 1e8 (needs ~8 GB of memory)
    python benches/compare.py --quick         # fewer timed runs
    python benches/compare.py --only median --sizes 1e6 --dtypes float64
    python benches/compare.py --markdown      # tables as Markdown, for the README
    python benches/compare.py --memory-only   # just the peak-memory section
    python benches/compare.py --plot bench.png

For every operation of ``operations.OPERATIONS`` and every N and dtype it
prints outprob's time per element on ONE thread, the baseline's (NumPy,
SciPy, statsmodels or ``outprob.reference``), and their ratio, all measured
in the same run after checking that both compute the same numbers; then
outprob on one thread against all threads, beside the machine's memory
floors on one and on all threads and each operation's *memory cap*, the
speed-up its streaming of the scores leaves it (``memory_floor.py``); and
the peak memory of the fits and of ``transform(out=)``, each measured in a
fresh subprocess.

Timing: ``time.perf_counter_ns`` (``--cpu``: ``time.process_time_ns``); one warm-up call; then timed runs, each
looping the call until it lasts at least ``--min-sample-ms`` (with
``gc.collect()`` before and the garbage collector off during a run); the
median per-call time of ``--repeat`` runs, fewer when a call is slow (at
most ``--budget`` seconds per measurement; a call slower than 5 s is timed
once, by its warm-up call). outprob and its baseline (and outprob on one
and on all threads) are timed in alternating runs, so that a change of the
machine's load hits both sides of a ratio alike. A baseline estimated (from a smaller N) to take
longer than ``--max-baseline-seconds`` is skipped; outprob always runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

import baselines
from machine import cpu_model
import memory_floor
import operations as ops
import peak_memory
from operations import MEMORY_OPS, OPERATIONS, Case, Operation, fmt_n

#: The clock of every timed run: wall time, or with ``--cpu`` this
#: process's CPU time (steadier on a shared machine, where a loaded run
#: waits for a core; outprob's one-thread rows and single-threaded NumPy
#: baselines are then compared by the work each does).
CLOCK: Callable[[], int] = time.perf_counter_ns

#: A call slower than this is timed by its warm-up call alone when the
#: budget leaves room for no second call.
SLOW_CALL_S = 5.0
#: N at which a slow baseline is probed when no smaller N was measured.
PROBE_N = 10**5


# -- command line ----------------------------------------------------------------------------


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time outprob against NumPy/SciPy/statsmodels baselines (one table).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1].split("\n\nFor every", 1)[0],
    )
    p.add_argument("--sizes", default="1e3,1e5,1e7", help="comma-separated N (default: %(default)s)")
    p.add_argument("--large", action="store_true", help="add N = 1e8")
    p.add_argument("--dtypes", default="float64,float32", help="default: %(default)s")
    p.add_argument("--repeat", type=int, default=7, help="timed runs per measurement, median taken (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="fewer (3), shorter (10 ms) timed runs, 3 s budget")
    p.add_argument("--min-sample-ms", type=float, default=30.0, help="shortest timed run; fast calls loop (default: %(default)s)")
    p.add_argument("--budget", type=float, default=10.0, help="seconds per measurement before runs are cut (default: %(default)s)")
    p.add_argument("--max-baseline-seconds", type=float, default=120.0,
                   help="skip a baseline estimated to take longer per call (default: %(default)s)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="the 'all threads' count of the thread-scaling table (default: all cores, %(default)s)")
    p.add_argument(
        "--only",
        default="",
        help="run only operations whose name contains this (case-insensitive); "
        "comma-separated alternatives select each operation that contains any of them",
    )
    p.add_argument("--plot", metavar="PATH", help="write a bar chart (PNG) of the largest N")
    p.add_argument("--cpu", action="store_true", help="time CPU time of this process (time.process_time_ns) instead of wall time")
    p.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    p.add_argument("--memory-only", action="store_true", help="run only the peak-memory section")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory section")
    p.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.sizes = sorted({int(float(s)) for s in args.sizes.split(",") if s.strip()} | ({10**8} if args.large else set()))
    args.dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    for d in args.dtypes:
        if d not in ("float64", "float32"):
            p.error(f"--dtypes: {d!r} is not float64 or float32")
    if args.quick:
        args.repeat = min(args.repeat, 3)
        args.min_sample_ms = min(args.min_sample_ms, 10.0)
        args.budget = min(args.budget, 3.0)
    if args.repeat < 1 or args.threads < 1:
        p.error("--repeat and --threads must be positive")
    return args


def selected(name: str, only: str) -> bool:
    return any(part.strip().lower() in name.lower() for part in only.split(","))


# -- the machine ------------------------------------------------------------------------------


def machine_info() -> List[str]:
    import scipy
    import statsmodels

    import outprob

    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    lines = [
        f"CPU: {cpu_model()}; {cores} logical cores ({usable} usable); {platform.system()} {platform.release()}",
        f"Python {platform.python_version()}; outprob {outprob.__version__}; numpy {np.__version__}; "
        f"scipy {scipy.__version__}; statsmodels {statsmodels.__version__}",
    ]
    if hasattr(os, "getloadavg"):
        lines.append("load average at start: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    cap = os.environ.get("OUTPROB_NUM_THREADS")
    if cap:
        lines.append(f"OUTPROB_NUM_THREADS={cap} caps outprob's threads")
    return lines


# -- timing ------------------------------------------------------------------------------------


@dataclass
class Timing:
    """Median seconds per call over ``runs`` timed runs of ``loops`` calls.
    ``value`` is what the warm-up call returned (for the agreement checks)."""

    seconds: float
    runs: int
    loops: int
    value: Any = None
    warmup_only: bool = False

    def ns_per_element(self, n: int) -> float:
        return self.seconds * 1e9 / n


#: Shortest timed run of the thread-scaling table.
SCALING_SAMPLE_S = 0.25


def _run(fn: Callable[[], Any], loops: int) -> float:
    """Seconds for ``loops`` calls, garbage collector off."""
    gc.collect()
    gc.disable()
    try:
        start = CLOCK()
        for _ in range(loops):
            fn()
        return (CLOCK() - start) * 1e-9
    finally:
        gc.enable()


@dataclass
class _Plan:
    """A call after its warm-up: what it returned, how many calls make one
    timed run, how many runs fit the budget."""

    fn: Callable[[], Any]
    value: Any
    first: float
    loops: int
    runs: int


def _plan(fn: Callable[[], Any], args: argparse.Namespace) -> _Plan:
    gc.collect()
    start = CLOCK()
    value = fn()
    first = max((CLOCK() - start) * 1e-9, 1e-9)
    runs = max(1, min(args.repeat, int(args.budget / first)))
    if first >= SLOW_CALL_S and args.budget / first < 2:
        return _Plan(fn, value, first, 0, 1)
    min_sample = args.min_sample_ms / 1e3
    loops = max(1, math.ceil(min_sample / first))
    if loops > 1:  # the warm-up call may have been slow: calibrate once more
        per_call = _run(fn, loops) / loops
        loops = max(1, math.ceil(min_sample / per_call))
    return _Plan(fn, value, first, loops, runs)


def _timing(plan: _Plan, samples: List[float]) -> Timing:
    if plan.loops == 0:
        return Timing(plan.first, 1, 1, plan.value, warmup_only=True)
    return Timing(statistics.median(samples), len(samples), plan.loops, plan.value)


def measure(fn: Callable[[], Any], args: argparse.Namespace) -> Timing:
    """Warm-up call, loop calibration, then the median of up to
    ``args.repeat`` timed runs within ``args.budget`` seconds."""
    return measure_planned(_plan(fn, args))


def measure_pair(a: _Plan, b: _Plan, args: argparse.Namespace) -> Tuple[Timing, Timing]:
    """Two planned calls timed in alternating runs (a, b, a, b, ...), so
    that a change of the machine's load during the measurement hits both
    alike and their ratio stays fair. Calls too slow for the full number of
    runs are timed one after the other instead."""
    a_time, b_time = measure_alternating([a, b], args)
    return a_time, b_time


def measure_alternating(plans: Sequence[_Plan], args: argparse.Namespace) -> List[Timing]:
    """``measure_pair`` of any number of planned calls: one run of each in
    turn, ``args.repeat`` times."""
    if any(p.loops == 0 for p in plans) or min(p.runs for p in plans) < args.repeat:
        return [measure_planned(p) for p in plans]
    samples: List[List[float]] = [[] for _ in plans]
    for _ in range(args.repeat):
        for p, s in zip(plans, samples):
            s.append(_run(p.fn, p.loops) / p.loops)
    return [_timing(p, s) for p, s in zip(plans, samples)]


def measure_planned(plan: _Plan) -> Timing:
    if plan.loops == 0:
        return _timing(plan, [])
    return _timing(plan, [_run(plan.fn, plan.loops) / plan.loops for _ in range(plan.runs)])


# -- the comparison table ------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the comparison table."""

    op: Operation
    n: int
    dtype: str
    ours: Optional[Timing] = None
    base: Optional[Timing] = None
    base_note: str = ""  # why there is no baseline time
    problem: Optional[str] = None  # ours and baseline disagree

    @property
    def ratio(self) -> Optional[float]:
        if self.ours is None or self.base is None:
            return None
        return self.base.seconds / self.ours.seconds

    def verdict(self) -> str:
        if self.problem:
            return "MISMATCH"
        target, ratio = self.op.target(self.n, self.dtype), self.ratio
        if target is None or ratio is None:
            return "–"
        return "yes" if ratio >= target.ratio else "NO"


class Bench:
    """Runs the operations over sizes and dtypes, remembering the
    baselines' per-element times (to skip those that would be too slow at
    a larger N)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.base_ns: Dict[Tuple[str, str, str], List[Tuple[int, float]]] = {}
        self.cases: Dict[Tuple[int, str], Case] = {}

    def case(self, n: int, dtype: str) -> Case:
        key = (n, dtype)
        if key not in self.cases:
            progress(f"making {fmt_n(n)} {dtype} scores")
            self.cases[key] = Case.make(n, dtype)
        return self.cases[key]

    def drop_cases(self, keep_n: int) -> None:
        """Frees the inputs of other sizes (N = 1e8 needs the memory)."""
        for key in [k for k in self.cases if k[0] not in (keep_n, PROBE_N)]:
            del self.cases[key]
        gc.collect()

    def estimate_baseline(self, op: Operation, n: int, dtype: str) -> Optional[float]:
        """Seconds per baseline call at N, from the largest smaller N measured
        (or, for a slow baseline, a probe at N = 1e5)."""
        done = [(m, ns) for m, ns in self.base_ns.get((op.name, op.baseline_name, dtype), []) if m < n]
        if not done and op.slow_baseline and n > 10**6:
            probe = self.case(PROBE_N, dtype)
            start = CLOCK()
            op.baseline(probe)
            done = [(PROBE_N, (CLOCK() - start) / PROBE_N)]
        if not done:
            return None
        return max(done)[1] * n * 1e-9

    def row(self, op: Operation, case: Case) -> Row:
        """outprob (one thread) and the baseline, timed in alternating runs."""
        row = Row(op, case.n, case.dtype.name)
        ours = None
        try:
            if op.ours is not None:
                ours = _plan(lambda: op.ours(case, 1), self.args)
        except Exception as e:
            row.problem = f"outprob failed: {type(e).__name__}: {e}"
            return row
        estimate = self.estimate_baseline(op, case.n, row.dtype)
        if estimate is not None and estimate > self.args.max_baseline_seconds:
            row.base_note = f"skipped (too slow: ~{estimate:.0f} s/call)"
            row.ours = None if ours is None else measure_planned(ours)
            return row
        try:
            base = _plan(lambda: op.baseline(case), self.args)
        except Exception as e:  # e.g. statsmodels not converging
            row.base_note = f"failed: {type(e).__name__}: {e}"
            row.problem = row.base_note
            return row
        if ours is None:
            row.base = measure_planned(base)
        else:
            row.ours, row.base = measure_pair(ours, base, self.args)
        key = (op.name, op.baseline_name, row.dtype)
        self.base_ns.setdefault(key, []).append((case.n, row.base.ns_per_element(case.n)))
        if op.check is not None and row.ours is not None:
            row.problem = op.check(row.ours.value, row.base.value, case) or (
                dtype_problem(row.ours.value, case) if op.keeps_dtype else None
            )
        row.base.value = None
        forget_large(row.ours, case)
        return row

    def table(self) -> List[Row]:
        """Every selected operation at every N and dtype (an operation with
        ``max_n`` at most at that N), in ascending N."""
        rows: List[Row] = []
        chosen = [op for op in OPERATIONS if selected(op.name, self.args.only)]
        for n in self.args.sizes:
            self.drop_cases(n)
            for dtype in self.args.dtypes:
                for op in chosen:
                    size = op.size(n)
                    if any(r.op is op and r.n == size and r.dtype == dtype for r in rows):
                        continue
                    row = self.row(op, self.case(size, dtype))
                    report_row(row)
                    rows.append(row)
        return rows

    def scaling(self, rows: List[Row]) -> Scaling:
        """outprob on one thread against ``--threads`` threads, at each
        operation's largest N; and the machine's memory floors there."""
        largest: Dict[Tuple[str, str], Row] = {}
        for row in rows:  # ascending N; of rows sharing a name and N, the first
            key = (row.op.name, row.dtype)
            if row.ours is not None and (key not in largest or row.n > largest[key].n):
                largest[key] = row
        # Runs of at least SCALING_SAMPLE_S: the first calls after switching
        # between one and several threads run slow on a VM (idle cores wake
        # up), which in 10 ms runs moved the ratio between 1.0 and 2.4x.
        args = argparse.Namespace(**{**vars(self.args), "min_sample_ms": max(self.args.min_sample_ms, SCALING_SAMPLE_S * 1e3)})

        out = Scaling(self.args.threads)
        threads = self.args.threads
        for row in largest.values():
            case = self.case(row.n, row.dtype)
            floors = None
            if row.op.streams is not None:
                # The floors right before the row: the VM's share of the
                # memory system moves from minute to minute. (Timed in the
                # row's own alternating runs, they slowed the first-touch
                # page faults of the fits that allocate their output.)
                calls = memory_floor.plans(case.x, case.scratch, threads, row.op.streams[1] > 0)
                times = measure_alternating([_plan(c, args) for c in calls], args)
                floors = memory_floor.floors(threads, row.n, [t.seconds for t in times])
            one, many = measure_pair(
                _plan(lambda: row.op.ours(case, 1), args),
                _plan(lambda: row.op.ours(case, threads), args),
                args,
            )
            forget_large(one, case)
            forget_large(many, case)
            progress(f"  {row.op.name} N={fmt_n(row.n)} {row.dtype}: 1 thread / {threads} threads = "
                     f"{one.seconds / many.seconds:.2f}x" + (f" (floors {floors.speedups()})" if floors else ""))
            out.rows.append((row.op, row.n, row.dtype, one, many, floors))
        return out


@dataclass
class Scaling:
    """The thread-scaling table: (operation, N, dtype, one thread, all
    threads, the memory floors timed right before them) rows."""

    threads: int
    rows: List[Tuple[Operation, int, str, Timing, Timing, Optional[memory_floor.Floors]]] = field(
        default_factory=list
    )

    def verdicts(self) -> List[Tuple[Operation, int, str, Timing, Timing, Optional[memory_floor.Floors],
                                     Optional[float], Optional[str]]]:
        """Each row with its memory cap and, where the target applies (N =
        1e7, float64, two threads or more), its verdict."""
        out = []
        for op, n, dtype, one, many, floors in self.rows:
            cap = None if floors is None or op.streams is None else floors.cap(op.streams, one.ns_per_element(n))
            applies = op.scaling_target is not None and n == 10**7 and dtype == "float64" and self.threads >= 2
            v = memory_floor.verdict(one.seconds / many.seconds, op.scaling_target, cap) if applies else None
            out.append((op, n, dtype, one, many, floors, cap, v))
        return out


def dtype_problem(value: Any, case: Case) -> Optional[str]:
    """float32 in → float32 out."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.kind == "f" and dtype != case.dtype:
        return f"{case.dtype} scores gave a {dtype} result"
    return None


def forget_large(timing: Optional[Timing], case: Case) -> None:
    """Drops a remembered result array (a fit_transform's output) once it
    has been checked; scalars and ``case.out`` stay."""
    if timing is not None and isinstance(timing.value, np.ndarray) and timing.value.size > 1 \
            and timing.value is not case.__dict__.get("out"):
        timing.value = None


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def report_row(row: Row) -> None:
    ours = f"{row.ours.ns_per_element(row.n):.3g}" if row.ours else "–"
    base = f"{row.base.ns_per_element(row.n):.3g}" if row.base else row.base_note
    ratio = f" ratio {ratio_text(row.ratio)}" if row.ratio else ""
    progress(f"  {row.op.name} N={fmt_n(row.n)} {row.dtype}: ours {ours} ns/elem, "
             f"{row.op.baseline_name} {base} ns/elem{ratio}")
    if row.problem:
        progress(f"!!! MISMATCH {row.op.name} N={fmt_n(row.n)} {row.dtype} vs {row.op.baseline_name}: {row.problem}")


# -- output ---------------------------------------------------------------------------------------


def render(headers: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    """An aligned text table, or a Markdown one."""
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    fmt = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(headers), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)])


def ns(timing: Optional[Timing], n: int) -> str:
    if timing is None:
        return "–"
    v = timing.ns_per_element(n)
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def ratio_text(ratio: Optional[float]) -> str:
    if ratio is None:
        return "–"
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2g}x"


def comparison_lines(rows: List[Row], args: argparse.Namespace) -> List[str]:
    headers = ["operation", "N", "dtype", "ours ns/elem (1 thread)", "baseline", "baseline ns/elem",
               "ratio (baseline/ours)", "target", "met?"]
    cells, notes = [], []
    for r in rows:
        base = r.base_note if r.base is None else ns(r.base, r.n)
        if r.base is not None and r.base.runs < args.repeat:
            base += " †"
            how = "1 run: its warm-up call" if r.base.warmup_only else f"{r.base.runs} runs"
            notes.append(f"† {r.op.name} N={fmt_n(r.n)} {r.dtype}, {r.op.baseline_name}: "
                         f"{r.base.ns_per_element(r.n) * r.n / 1e9:.2g} s per call, timed by {how}")
        target = r.op.target(r.n, r.dtype)
        cells.append([
            r.op.name, fmt_n(r.n), r.dtype, ns(r.ours, r.n), r.op.baseline_name, base,
            ratio_text(None if r.problem else r.ratio),
            target.text() if target else "–", r.verdict(),
        ])
    lines = [render(headers, cells, args.markdown)]
    mismatches = [r for r in rows if r.problem]
    if mismatches:
        lines += ["", "!!! ours and the baseline DISAGREE, no ratio printed:"]
        lines += [f"!!! {r.op.name} N={fmt_n(r.n)} {r.dtype} vs {r.op.baseline_name}: {r.problem}" for r in mismatches]
    lines += ["", *notes] if notes else []
    return lines


def scaling_lines(scaling: Scaling, args: argparse.Namespace) -> List[str]:
    headers = ["operation", "N", "dtype", "ours 1 thread ns/elem", f"ours {args.threads} threads ns/elem",
               "speed-up", "streams", "floors' speed-up", "memory cap", "target (2 threads)", "met?"]
    cells = []
    for op, n, dtype, one, many, floors, cap, verdict in scaling.verdicts():
        streams = "–" if op.streams is None else f"{op.streams[0]}R" + (f"+{op.streams[1]}W" if op.streams[1] else "")
        cells.append([
            op.name, fmt_n(n), dtype, ns(one, n), ns(many, n), f"{one.seconds / many.seconds:.2f}x",
            streams, "–" if floors is None else floors.speedups(), "–" if cap is None else f"{cap:.2f}x",
            f">={op.scaling_target:g}x" if verdict is not None else "–",
            verdict or "–",
        ])
    notes = [
        "",
        "streams: full reads (R) and writes (W) of the scores' size; floors' speed-up: x.sum() (and np.copyto) "
        f"on {args.threads} slices against one, timed right before the row; memory cap: the "
        "speed-up left if all but the streaming were perfectly parallel (benches/memory_floor.py); "
        "memory-bound: below the target, and so is the cap.",
    ]
    return [render(headers, cells, args.markdown), *notes]


def memory_lines(rows: List[peak_memory.MemoryRow], args: argparse.Namespace) -> List[str]:
    headers = ["operation", "N", "dtype", "input MB", "ours peak +MB", "ours × input", "target",
               "met?", "baseline peak +MB", "baseline × input"]
    cells = []
    for r in rows:
        cells.append([
            r.op.name, fmt_n(r.n), r.dtype, peak_memory.mb(r.nbytes), peak_memory.mb(r.ours),
            f"{r.ours / r.nbytes:.2f}" if r.ours is not None else "–",
            f"<={r.op.max_multiple:g}x", r.verdict(), peak_memory.mb(r.base) if r.base is not None else r.note or "–",
            f"{r.base / r.nbytes:.2f}" if r.base is not None else "–",
        ])
    lines = [render(headers, cells, args.markdown)]
    if any(not r.reset for r in rows):
        lines.append("warning: /proc/self/clear_refs refused; the peak includes loading the input")
    return lines


def summary_lines(rows: List[Row], scaling: Optional[Scaling], memory: List[peak_memory.MemoryRow]) -> List[str]:
    verdicts = [r.verdict() for r in rows] + [m.verdict() for m in memory]
    bound = 0
    if scaling is not None:
        threaded = [v for *_, v in scaling.verdicts() if v is not None]
        bound = threaded.count("memory-bound")
        verdicts += [v for v in threaded if v != "memory-bound"]
    met, missed = verdicts.count("yes"), verdicts.count("NO")
    lines = [f"targets met: {met} of {met + missed}"
             + (f"; {bound} thread-scaling target(s) below 1.7x and memory-bound (see the table)" if bound else "")]
    mismatches = sum(1 for r in rows if r.problem)
    if mismatches:
        lines.append(f"!!! {mismatches} MISMATCH(ES) between outprob and a baseline: see above")
    return lines


def plot(rows: List[Row], path: str) -> None:
    """Bar chart of ns/element, ours against the baseline, at each
    operation's largest N, one panel per dtype; floors as lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = sorted({r.dtype for r in rows}, reverse=True)
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(14, 5 * len(dtypes)), squeeze=False)
    for ax, dtype in zip(axes[:, 0], dtypes):
        mine = [r for r in rows if r.dtype == dtype]
        largest = {}
        for r in mine:
            largest[(r.op.name, r.op.baseline_name)] = r  # rows come in ascending N
        bars = [r for r in largest.values() if r.ours is not None]
        xs = np.arange(len(bars))
        ax.bar(xs - 0.2, [r.ours.ns_per_element(r.n) for r in bars], 0.4, label="outprob (1 thread)")
        ax.bar(xs + 0.2, [r.base.ns_per_element(r.n) if r.base else np.nan for r in bars], 0.4, label="baseline")
        for r in largest.values():
            if r.ours is None and r.base is not None:
                ax.axhline(r.base.ns_per_element(r.n), ls="--", lw=1, color="grey")
                ax.annotate(r.op.baseline_name, (len(bars) - 0.5, r.base.ns_per_element(r.n)), fontsize=8, color="grey")
        ax.set_xticks(xs, [f"{r.op.name}\nvs {r.op.baseline_name}\nN={fmt_n(r.n)}" for r in bars],
                      rotation=90, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("ns per element")
        ax.set_title(f"outprob vs baselines, {dtype}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    progress(f"wrote {path}")


# -- main -----------------------------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.cpu:
        global CLOCK
        CLOCK = time.process_time_ns
    if args.memory_child:
        peak_memory.memory_child(json.loads(args.memory_child))
        return 0
    out: List[str] = ["# outprob benchmark: " + " ".join(["compare.py", *(argv if argv is not None else sys.argv[1:])])]
    out += machine_info()
    out.append(
        f"sizes {', '.join(map(fmt_n, args.sizes))}; dtypes {', '.join(args.dtypes)}; "
        f"long-tailed scores: lognormal(0, 1) bulk + {ops.OUTLIER_FRACTION:.0%} outliers at 10 + lognormal(2, 1); "
        f"M-estimates with maxiter={baselines.MAXITER}"
    )
    if not args.memory_only:
        out.append(
            f"time per call: median of {args.repeat} timed runs (fewer for slow calls, † below), each >= "
            f"{args.min_sample_ms:g} ms, after a warm-up call; gc.collect() before each run"
        )
    started = time.perf_counter()
    rows: List[Row] = []
    scaling: Optional[Scaling] = None
    if not args.memory_only:
        bench = Bench(args)
        rows = bench.table()
        if args.threads > 1:
            progress(f"thread scaling: 1 vs {args.threads} threads")
            scaling = bench.scaling(rows)
        del bench
        gc.collect()
    memory: List[peak_memory.MemoryRow] = []
    if not args.no_memory:
        progress(f"peak memory at N = {fmt_n(max(args.sizes))}, one subprocess per call")
        chosen = [op for op in MEMORY_OPS if selected(op.name, args.only)]
        memory = peak_memory.memory_table(max(args.sizes), args.dtypes, chosen, args.threads, progress)

    if rows:
        out += ["", "## outprob (1 thread) vs baseline", *comparison_lines(rows, args)]
    if scaling is not None and scaling.rows:
        out += ["", f"## Threads: outprob on 1 vs {args.threads} threads", *scaling_lines(scaling, args)]
    elif rows:
        out += ["", "## Threads: --threads 1, no scaling table"]
    if memory:
        out += [
            "",
            f"## Peak memory: VmHWM increase during one call ({args.threads} threads, fresh process per call)",
            *memory_lines(memory, args),
        ]
    out.append("")
    if hasattr(os, "getloadavg"):
        out.append("load average at end: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    out.append(f"wall time: {time.perf_counter() - started:.0f} s")
    out += summary_lines(rows, scaling, memory)
    print("\n".join(out), flush=True)
    if args.plot and rows:
        plot(rows, args.plot)
    return 1 if any(r.problem for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
