"""The scalers of contract §10 as scikit-learn estimators: every check of
``parametrize_with_checks`` (LogRankScaler and TopKScaler(binary=False)
share the machinery of the ones checked)."""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import outprob

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")

#: As s07_api/test_sklearn.py: 1-D scores are one score vector (contract §5).
EXPECTED_FAILED_CHECKS = {
    "check_fit1d": "1-D scores are one score vector (contract §5), so fit accepts them",
}


def expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks(
    [
        outprob.RankScaler(),
        outprob.TopKScaler(k=3),
        outprob.SigmoidScaler(),
        outprob.MixtureScaler(),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)
