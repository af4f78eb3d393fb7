"""Non-convergence of the joint M-estimate (contract §3; §5,
"Non-convergence"): after ``maxiter`` steps the last iterate is kept,
``converged_`` is false and a ``ConvergenceWarning`` states the number of
iterations run — never an exception."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import outprob
from outprob import stats

from ..samples import scores


@pytest.mark.parametrize("name", ["huber", "tukey"])
def test_non_convergence_warns_and_keeps_last_iterate(name):
    x = scores(2000)
    with pytest.warns(outprob.ConvergenceWarning, match="did not converge"):
        s = outprob.scaler(name, maxiter=3).fit(x)
    assert s.converged_ is False and s.n_iter_ == 3
    assert np.isfinite(s.center_) and s.scale_ > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", outprob.ConvergenceWarning)
        done = outprob.scaler(name, maxiter=200).fit(x)
    assert done.converged_ is True and done.n_iter_ < 200


@pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")
def test_convergence_warning_states_the_iterations_run():
    x = np.array([1.0, 2.0, 6.0, 40.0, 3.0])
    with pytest.warns(outprob.ConvergenceWarning, match=r"stopped after 2 of at most maxiter=2 iterations"):
        stats.m_estimate(x, "huber", maxiter=2)
