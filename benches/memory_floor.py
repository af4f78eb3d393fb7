"""The machine's memory floor, for the thread-scaling table (issue #11).

Two threads share one memory system. On the 2-vCPU VMs this project is
measured on, NumPy reads 80 MB of scores only ~1.3x faster on two threads
than on one, where computation runs 2x faster. An operation that must
stream the scores from memory is held to that.

An operation that reads the scores ``R`` times and writes ``W`` arrays of
their size (its ``streams``) spends at least

    M(t) = R·read(t) + W·(copy(t) − read(t))

per element on ``t`` threads, where ``read`` is ``x.sum()`` and ``copy``
is ``np.copyto(out, x)``, run by ``t`` Python threads on contiguous slices
(NumPy releases the GIL in both), timed right before the operation (the
share of the memory system a VM gets moves from minute to minute: the read
floor's two-thread speed-up measured 1.2x in one run and 1.8x in
another). Suppose everything else the operation does
were perfectly parallel and none of it overlapped the streaming. Its time on
``t`` threads would then be ``M(t) + (T1 − M(1))/t``, with ``T1`` its time
on one. The speed-up that allows,

    cap = T1 / (M(t) + (T1 − M(1))/t),

is the table's *memory cap*. An operation below the target whose memory cap
is below the target too is **memory-bound**: on this machine, no
parallelisation of its computation could reach the target. The model is
deliberately simple. Computation that overlaps the streaming can beat the
cap (the Gaussian transform does). Serial work (a sample, a selection, the
M-iteration) lowers the real speed-up below it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

#: (reads of the scores, writes of an array of their size).
Streams = Tuple[int, int]

_pools: Dict[int, ThreadPoolExecutor] = {}


def _on_threads(threads: int, work: Callable[[slice], Any], n: int) -> None:
    """``work`` on ``threads`` contiguous slices of ``range(n)``, one Python
    thread each (the calling thread takes the first)."""
    if threads == 1:
        work(slice(0, n))
        return
    if threads not in _pools:
        _pools[threads] = ThreadPoolExecutor(threads - 1, thread_name_prefix="floor")
    bounds = np.linspace(0, n, threads + 1).astype(int)
    parts = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    futures = [_pools[threads].submit(work, s) for s in parts[1:]]
    work(parts[0])
    for f in futures:
        f.result()


def read_on(x: np.ndarray, threads: int) -> None:
    """The read floor: ``x.sum()`` over ``threads`` slices at once."""
    _on_threads(threads, lambda s: x[s].sum(), x.size)


def copy_on(x: np.ndarray, out: np.ndarray, threads: int) -> None:
    """The read+write floor: ``np.copyto(out, x)`` over ``threads`` slices at once."""
    _on_threads(threads, lambda s: np.copyto(out[s], x[s]), x.size)


@dataclass
class Floors:
    """Nanoseconds per element of the read floor and (for operations that
    write) the read+write floor, each on one thread and on ``threads``,
    timed right before the operation they judge."""

    threads: int
    read: Tuple[float, float]
    copy: Optional[Tuple[float, float]] = None

    def streaming(self, streams: Streams, many: bool) -> float:
        """``M(1)`` or ``M(t)``: the time per element of streaming the scores
        as ``streams`` says."""
        reads, writes = streams
        i = int(many)
        read = self.read[i]
        if writes == 0:
            return reads * read
        if self.copy is None:
            raise ValueError("an operation that writes needs the read+write floor")
        return reads * read + writes * (self.copy[i] - read)

    def cap(self, streams: Streams, one_thread_ns: float) -> float:
        """The memory cap: the speed-up on ``threads`` threads left to an
        operation of ``one_thread_ns`` per element with these streams."""
        rest = max(one_thread_ns - self.streaming(streams, False), 0.0)
        return one_thread_ns / (self.streaming(streams, True) + rest / self.threads)

    def speedups(self) -> str:
        """The floors' own speed-ups, for the table: read[, read+write]."""
        text = f"{self.read[0] / self.read[1]:.2f}x"
        if self.copy is not None:
            text += f" / {self.copy[0] / self.copy[1]:.2f}x"
        return text


def plans(x: np.ndarray, out: np.ndarray, threads: int, writes: bool) -> List[Callable[[], None]]:
    """The floor calls to time before an operation: read on one thread and
    on ``threads``, then (if it ``writes``) read+write on both."""
    calls: List[Callable[[], None]] = [lambda: read_on(x, 1), lambda: read_on(x, threads)]
    if writes:
        calls += [lambda: copy_on(x, out, 1), lambda: copy_on(x, out, threads)]
    return calls


def floors(threads: int, n: int, seconds: Sequence[float]) -> Floors:
    """Floors from the seconds per call of ``plans``'s calls."""
    per = [t * 1e9 / n for t in seconds]
    return Floors(threads, (per[0], per[1]), (per[2], per[3]) if len(per) == 4 else None)


def verdict(speedup: float, target: float, cap: Optional[float]) -> str:
    """'yes' at the target, 'memory-bound' below it where the memory cap is
    below it too, else 'NO'."""
    if speedup >= target:
        return "yes"
    if cap is not None and cap < target:
        return "memory-bound"
    return "NO"
