"""Helpers of the pytest-benchmark suite (``test_bench_*.py``): which
operations to time and how."""

from __future__ import annotations

import re
from functools import lru_cache, partial
from typing import Iterator

import pytest

from operations import OPERATIONS, Case, Operation, fmt_n

#: N of the pytest-benchmark suite.
SIZES = (10**5, 10**6)
#: Rounds of a baseline that takes seconds per call at N = 1e6.
SLOW_ROUNDS = 3


@lru_cache(maxsize=None)
def make_case(n: int, dtype: str = "float64") -> Case:
    return Case.make(n, dtype)


def size_id(n: int) -> str:
    return f"N{fmt_n(n)}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", text).strip("_")


def params(*kinds: str) -> Iterator:
    """(operation, side) pairs of the given kinds: outprob once per
    operation name, every baseline."""
    seen = set()
    for op in OPERATIONS:
        if op.kind not in kinds:
            continue
        if op.ours is not None and op.name not in seen:
            seen.add(op.name)
            yield pytest.param(op, "ours", id=_slug(f"{op.name}-outprob"))
        yield pytest.param(op, "baseline", id=_slug(f"{op.name}-{op.baseline_name}"))


def run(benchmark, op: Operation, side: str, n: int, dtype: str = "float64") -> None:
    """Times outprob's call (one thread) or the baseline's on ``n`` scores."""
    size = op.size(n)
    case = make_case(size, dtype)
    benchmark.group = f"{op.name} N={fmt_n(size)} {dtype}"
    benchmark.extra_info.update(n=size, dtype=dtype, side=side, baseline=op.baseline_name)
    if side == "ours":
        benchmark(partial(op.ours, case, 1))
    elif op.slow_baseline:
        benchmark.pedantic(partial(op.baseline, case), rounds=SLOW_ROUNDS, iterations=1, warmup_rounds=0)
    else:
        benchmark(partial(op.baseline, case))
