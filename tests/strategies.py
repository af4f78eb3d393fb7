"""Hypothesis strategies for outlier-score arrays.

Arrays come in kinds that stress the estimators: continuous and heavy-tailed
samples, heavy ties, constant arrays and constant runs, two-valued data, and
small arrays of Hypothesis-chosen values (shrinkable edge cases). Each is
scaled by a power of ten from 1e-150 to 1e150 (float32: 1e-30 to 1e30),
optionally negated, with or without far outliers. N runs from 1 to
several thousand.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

KINDS = (
    "normal",
    "lognormal",
    "pareto",
    "integers",
    "constant",
    "constant_run",
    "two_values",
    "drawn",
)


def _exponents(dtype) -> st.SearchStrategy[int]:
    return st.integers(-150, 150) if dtype == np.float64 else st.integers(-30, 30)


@st.composite
def score_arrays(draw, *, min_size: int = 1, max_size: int = 3000, dtype=np.float64, kinds=KINDS):
    """1-D finite score arrays of the given dtype."""
    kind = draw(st.sampled_from(kinds))
    n = draw(st.integers(min_size, max(min_size, min(max_size, 12))) | st.integers(min_size, max_size))
    width = 64 if dtype == np.float64 else 32
    if kind == "drawn":
        bound = 1e150 if dtype == np.float64 else float(np.float32(1e30))
        elements = st.floats(-bound, bound, allow_nan=False, allow_infinity=False, width=width)
        small = draw(st.integers(min_size, max(min_size, min(n, 60))))
        return draw(hnp.arrays(dtype, small, elements=elements))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "normal":
        x = rng.normal(size=n)
    elif kind == "lognormal":
        x = rng.lognormal(size=n)
    elif kind == "pareto":
        x = rng.pareto(1.5, size=n)
    elif kind == "integers":
        x = rng.integers(0, draw(st.integers(1, 8)), size=n).astype(np.float64)
    elif kind == "constant":
        x = np.full(n, draw(st.floats(-10, 10)))
    elif kind == "constant_run":
        x = rng.lognormal(size=n)
        x[rng.random(n) < draw(st.floats(0.3, 0.95))] = x[0]
    else:  # two_values
        a, b = draw(st.floats(-10, 10)), draw(st.floats(-10, 10))
        x = rng.choice(np.array([a, b]), size=n)
    if n >= 5 and draw(st.booleans()):
        k = max(1, n // 25)
        spread = float(np.max(x) - np.min(x)) or 1.0
        x[rng.choice(n, size=k, replace=False)] += rng.uniform(10, 100, size=k) * spread
    if draw(st.booleans()):
        x = x + draw(st.floats(-1e3, 1e3))
    x = x * 10.0 ** draw(_exponents(dtype))
    if draw(st.booleans()):
        x = -x
    return x.astype(dtype)


def float_dtypes() -> st.SearchStrategy:
    return st.sampled_from([np.float64, np.float32])


def bound_values(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Python ints about an inclusive bound [lo, hi] (contract §5): its ends
    and their neighbours, ints past 64 bits and below 0, and any int."""
    edges = [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, -1, 0, 1, 2**63, 2**64 - 1, 2**64,
             2**70, -(2**64)]
    return st.sampled_from(edges) | st.integers() | st.integers(-(2**80), 2**80)


@st.composite
def conformal_states(draw):
    """A genuine ``ConformalScaler.to_dict()`` as JSON carries it: a fit
    (with or without a contamination trim), an exact window or a sketch
    stream, of every conditional adjustment, oriented either way."""
    import json

    import outprob

    kind = draw(st.sampled_from(["fit", "window", "sketch"]))
    params = dict(
        conditional=draw(st.sampled_from([None, "simes", "dkwm", "mc"])),
        mc_simulations=100,
        seed=draw(st.integers(0, 2**64 - 1)),
        higher_is_outlier=draw(st.booleans()),
        simes_k=draw(st.none() | st.integers(1, 30)),
        delta=draw(st.sampled_from([0.05, 0.2])),
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 60))
    x = rng.normal(size=n) if draw(st.booleans()) else rng.integers(0, 5, size=n).astype(float)
    if kind == "fit":
        c = draw(st.none() | st.sampled_from([0.0, 0.1, 0.25]))
        s = outprob.ConformalScaler(contamination=c, **params).fit(x)
    else:
        extra = {"window": draw(st.integers(1, 30))} if kind == "window" else {"k": 8}
        s = outprob.ConformalScaler(**params, **extra)
        for batch in np.array_split(x, draw(st.integers(1, 4))):
            s.partial_fit(batch)
    return json.loads(json.dumps(s.to_dict()))


def examples(n: int) -> int:
    """The example count of a property whose examples are costly: ``n`` in
    the dev and ci profiles; in the thorough profile its 10,000 still, so
    that a thorough run (tests/THOROUGH.md) reaches every property."""
    return 10_000 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else n
