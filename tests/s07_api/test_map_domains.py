"""A fitted map's parameters within the domain of the map they feed
(contract §7 "Fitted maps", ``load_map``; the maps are §4's and §10's).

A stored map is untrusted: a parameter outside the domain of its map is a
``ValueError`` naming it, never an output of NaN or a constant; a mixture
map (§10) maps every finite score to its posterior, oracle the posterior
in 60-digit decimal arithmetic.
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest

import outprob

from ..stored_edits import edited

X = np.arange(40.0)


# -- §7: a map's parameters within the domain of the map they feed ------------------
def test_a_sqrt_map_needs_a_finite_smallest_score():
    """§7 "Fitted maps": pre_min = NaN mapped every score to 0."""
    d = outprob.GaussianScaler(pretransform="sqrt").fit(np.arange(1.0, 50.0)).to_map().to_dict()
    for bad in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError, match="pre_min"):
            outprob.load_map(edited(d, ("map", "params", "pre_min"), [bad]))


def test_a_top_k_flag_is_one_or_zero():
    d = outprob.TopKScaler(k=3).fit(X).to_map().to_dict()
    for bad in (0.5, 2.0, float("nan")):
        with pytest.raises(ValueError, match="binary"):
            outprob.load_map(edited(d, ("map", "params", "binary"), [bad]))


def _posterior(s, scale, alpha, mu, sigma, lam):
    """The mixture posterior (§10) in 60-digit decimal arithmetic."""
    with localcontext() as ctx:
        ctx.prec = 60
        u = Decimal(s) / Decimal(scale)
        w = (u - Decimal(mu)) / Decimal(sigma)
        two_pi = Decimal(2) * Decimal("3.14159265358979323846264338327950288419716939937510")
        z = ((1 - Decimal(alpha)).ln() + Decimal(lam).ln() - Decimal(alpha).ln()
             + Decimal(sigma).ln() + two_pi.ln() / 2 - Decimal(lam) * u + w * w / 2)
        if z > 800:
            return 0.0
        if z < -800:
            return 1.0
        return float(1 / (1 + z.exp()))


@pytest.mark.parametrize(
    "params",
    [
        # The reported map: λ = 1e308 gave NaN at the finite score 1e308.
        dict(scale=1.4162635477691745, alpha=0.11496655779286861, mu=0.4777625846521614,
             sigma=0.20686051730078162, lam=1e308),
        # λ > 1 at unit 1: λu and w²/2 overflow together near 1.8e308 (a
        # fit leaves such maps: EM caps λ at the largest double).
        dict(scale=1.0, alpha=0.1, mu=3.0, sigma=0.5, lam=2.5),
        dict(scale=1.0, alpha=0.3, mu=1.0, sigma=1e-8, lam=1.7976931348623157e308),
    ],
)
def test_a_mixture_map_never_maps_a_finite_score_to_nan(params):
    """§10: the posterior where both log-density terms exceed the double
    range is decided by the larger; oracle: the posterior in decimal."""
    m = {"format": "outprob.FittedMap", "version": 1, "map": {
        "kind": "mixture", "negate": False, "two_d": False, "pretransform": None, "sorted": None,
        "params": {"scale": [params["scale"]], "alpha": [params["alpha"]], "mu": [params["mu"]],
                   "sigma": [params["sigma"]], "lambda": [params["lam"]]}}}
    fitted = outprob.load_map(m)
    s = np.array([2.0, 1e300, 1e307, 1e308, 1.7e308, np.finfo(float).max])
    got = fitted.transform(s)
    want = [_posterior(v, params["scale"], params["alpha"], params["mu"], params["sigma"], params["lam"])
            for v in s]
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)


