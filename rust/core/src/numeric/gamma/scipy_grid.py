"""Writes `scipy_grid.bin`: SciPy's P(a, x) and Q(a, x) (`gammainc`,
`gammaincc`) at the points `tests.rs::scipy_grid_points` draws, as
little-endian float64 pairs, for the test `matches_scipy_on_a_wide_grid`.

The points are drawn by splitmix64 with exact arithmetic only (powers of
two, +, ×, /, √), so that Python and Rust draw the same doubles.

    python rust/core/src/numeric/gamma/scipy_grid.py
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from scipy import special

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed: int) -> None:
        self.state = seed & MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def unit(self) -> float:
        return (self.next() >> 11) * 2.0**-53

    def log_uniform(self, lo: int, hi: int) -> float:
        """2^e·(1 + u), e uniform in [lo, hi)."""
        e = lo + self.next() % (hi - lo)
        return math.ldexp(1.0 + self.unit(), e)


def points() -> tuple[list[float], list[float]]:
    rng = SplitMix64(12)
    a: list[float] = []
    x: list[float] = []
    # Orders 1e-6..1e4, arguments 1e-3..1e3 times the order.
    for _ in range(60_000):
        ai = rng.log_uniform(-20, 14)
        a.append(ai)
        x.append(ai * rng.log_uniform(-10, 10))
    # Near the median, where the methods meet: x ≈ a(1 + z/√a), z ≈ N(0, 1)
    # (Irwin–Hall of 12).
    for _ in range(20_000):
        ai = rng.log_uniform(-7, 14)
        z = -6.0
        for _ in range(12):
            z += rng.unit()
        a.append(ai)
        x.append(max(ai * (1.0 + z / math.sqrt(ai)), 1e-3))
    return a, x


def main() -> None:
    a, x = (np.array(v) for v in points())
    pq = np.empty((a.size, 2))
    pq[:, 0], pq[:, 1] = special.gammainc(a, x), special.gammaincc(a, x)
    out = Path(__file__).with_name("scipy_grid.bin")
    out.write_bytes(pq.astype("<f8").tobytes())
    print(f"{out}: {a.size} points, scipy {__import__('scipy').__version__}")


if __name__ == "__main__":
    main()
