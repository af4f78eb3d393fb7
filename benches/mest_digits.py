#!/usr/bin/env python3
"""The M-estimates of a fixed set of score vectors, saved or compared.

    python benches/mest_digits.py --save /tmp/before.json      # this build's estimates
    python benches/mest_digits.py --against /tmp/before.json   # another build's, compared

A change to how the M-estimation sums its steps (a layer removed, a sum
taken in another order) may move the estimates' last digits; it must not
move them by more than ``LIMIT`` relative (the location in units of
|μ| + σ, as the tests compare it). ``--against`` prints the largest
difference from the saved estimates and from statsmodels (where it
converges, up to ``SM_MAX`` scores), next to the saved estimates' own
distance from statsmodels, and exits 1 above ``LIMIT``.

The score vectors: the benchmark suite's long-tailed scores and four other
shapes at sizes from 1e2 to 1e7 (both sides of every size threshold of the
M-estimation), float32 ones, and the 18 ODDS datasets' features and the
squared distance of each row to the feature means.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
import warnings
from typing import Dict, Iterator, List, Tuple

import numpy as np

from operations import long_tailed_scores

from outprob import stats

LIMIT = 1e-12
SM_MAX = 100_000
SIZES = (100, 1000, 10_000, 12_287, 12_288, 16_383, 16_384, 30_000, 100_000, 262_143,
         262_144, 1_000_000, 10_000_000)
ODDS = "/work/shared/data/odds"


def cases() -> Iterator[Tuple[str, np.ndarray]]:
    rng = np.random.default_rng(21)
    for n in SIZES:
        yield f"long_tailed {n}", long_tailed_scores(n)[0]
        yield f"negated long_tailed {n}", -long_tailed_scores(n, seed=1)[0]
        yield f"normal {n}", rng.normal(3.0, 2.0, n)
        yield f"cauchy {n}", rng.standard_cauchy(n)
        yield f"ties {n}", np.round(rng.lognormal(0.0, 1.0, n), 1)
        if n <= 1_000_000:
            yield f"float32 long_tailed {n}", long_tailed_scores(n, np.float32, seed=2)[0]
    for path in sorted(glob.glob(f"{ODDS}/*.npz")):
        name = path.rsplit("/", 1)[-1][:-4]
        x = np.load(path)["X"].astype(np.float64)
        for j in range(min(x.shape[1], 10)):
            yield f"{name} feature {j}", np.ascontiguousarray(x[:, j])
        z = (x - x.mean(axis=0)) / np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
        yield f"{name} distance", np.einsum("ij,ij->i", z, z)


def estimates() -> Dict[str, List[float]]:
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, x in cases():
            for norm in ("huber", "tukey"):
                e = stats.m_estimate(x, norm, threads=1)
                out[f"{name} {norm}"] = [e.location, e.scale, e.n_iter, e.converged]
    return out


def statsmodels_estimate(x: np.ndarray, norm: str) -> Tuple[float, float] | None:
    from statsmodels.robust.norms import HuberT, TukeyBiweight
    from statsmodels.robust.scale import Huber

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loc, scale = Huber(norm=HuberT() if norm == "huber" else TukeyBiweight())(x)
    except ValueError:
        return None
    return float(loc), float(scale)


def distance(a: List[float], b: Tuple[float, float] | List[float]) -> float:
    """The larger of |Δμ|/(|μ| + σ) and |Δσ|/σ, relative to `b`."""
    if b[1] == 0.0:
        return 0.0 if (a[0], a[1]) == (b[0], b[1]) else float("inf")
    return max(abs(a[0] - b[0]) / (abs(b[0]) + b[1]), abs(a[1] - b[1]) / b[1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--save")
    p.add_argument("--against")
    args = p.parse_args()
    got = estimates()
    if args.save:
        with open(args.save, "w") as f:
            json.dump(got, f)
        print(f"saved {len(got)} estimates to {args.save}")
    if not args.against:
        return 0
    with open(args.against) as f:
        saved = json.load(f)
    worst = max(((distance(got[k], v), k) for k, v in saved.items()), default=(0.0, ""))
    steps = sum(got[k][2] != v[2] or got[k][3] != v[3] for k, v in saved.items())
    print(f"{len(saved)} estimates: largest difference from the saved ones {worst[0]:.2e} ({worst[1]}); "
          f"n_iter or convergence differs in {steps}")
    sm_now, sm_saved = 0.0, 0.0
    counted = 0
    for name, x in cases():
        if x.size > SM_MAX or x.dtype != np.float64:
            continue
        for norm in ("huber", "tukey"):
            ref = statsmodels_estimate(x, norm)
            key = f"{name} {norm}"
            if ref is None or not np.isfinite(ref[0]) or not (ref[1] > 0) or not saved[key][3]:
                continue
            counted += 1
            sm_now = max(sm_now, distance(got[key], ref))
            sm_saved = max(sm_saved, distance(saved[key], ref))
    print(f"against statsmodels ({counted} converged fits up to {SM_MAX} scores): "
          f"largest difference now {sm_now:.2e}, saved {sm_saved:.2e}")
    return 0 if worst[0] <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
