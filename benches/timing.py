"""Timing helpers shared by the benchmarks (standard library only): the
best of repeated runs, the load average, and writing a Markdown report."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple


def best(fn: Callable[[], object], repeat: int, warmup: bool = False) -> float:
    """Wall seconds: the best of ``repeat`` runs of ``fn`` (after one
    untimed run if ``warmup``)."""
    return best_wall_cpu(fn, repeat, warmup)[0]


def best_on(clock: str, fn: Callable[[], object], repeat: int) -> float:
    """Seconds on ``time.<clock>`` (``perf_counter``; ``process_time`` for
    the CPU of every thread): the best of ``repeat`` runs of ``fn``."""
    timer = getattr(time, clock)
    out = []
    for _ in range(repeat):
        t = timer()
        fn()
        out.append(timer() - t)
    return min(out)


def best_wall_cpu(fn: Callable[[], object], repeat: int, warmup: bool = False) -> Tuple[float, float]:
    """(wall, CPU of this thread) seconds: the best of ``repeat`` runs of
    each (after one untimed run if ``warmup``)."""
    if warmup:
        fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.thread_time()
        fn()
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - t)
    return min(wall), min(cpu)


def load() -> str:
    """The load averages (1, 5, 15 min)."""
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def report(lines: List[str], out: Optional[Path]) -> str:
    """Joins the report's lines, prints it and writes it to ``out``."""
    text = "\n".join(lines)
    print(text)
    if out:
        out.write_text(text, encoding="utf-8")
    return text
