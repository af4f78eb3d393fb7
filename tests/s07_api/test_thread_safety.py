"""Threads sharing scalers (contract §7, "Thread safety"; §5, "Thread
safety"): while some threads refit a scaler, the others' transforms see
the old fit or the new one, complete, never a mix of both or none; many
threads transforming and fitting at once get the results of one thread."""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import outprob

pytestmark = pytest.mark.filterwarnings("ignore::outprob.OutprobWarning")
NAMES = list(outprob.VARIANTS)


def _fits(seed):
    rng = np.random.default_rng(seed)
    a = rng.lognormal(size=(50, 2))
    b = rng.lognormal(size=(50, 2)) * 5 + 3
    return a, b


@pytest.mark.parametrize("name", ["mean_nmad", "huber", "linear"])
@pytest.mark.parametrize("two_d", [False, True])
def test_concurrent_fit_publishes_the_old_or_the_new_fit(name, two_d):
    a, b = _fits(1)
    if not two_d:
        a, b = a[:, 0], b[:, 0]
    new = np.linspace(0.0, 12.0, 2 * 7).reshape(7, 2)
    new = new if two_d else new[:, 0]
    # The two acceptable answers, from scalers nobody else touches.
    want = [outprob.scaler(name).fit(d).transform(new) for d in (a, b)]
    assert not np.array_equal(want[0], want[1])
    shared = outprob.scaler(name).fit(a)
    errors: list = []
    stop = threading.Event()

    def fitter():
        k = 0
        while not stop.is_set():
            shared.fit(b if k % 2 == 0 else a)
            k += 1

    def reader():
        try:
            for _ in range(300):
                got = shared.transform(new)
                if not (np.array_equal(got, want[0]) or np.array_equal(got, want[1])):
                    errors.append(f"a mix of two fits: {got}")
                d = shared.to_dict()
                assert d["ndim"] == (2 if two_d else 1)
        except Exception as exc:  # noqa: BLE001 - every failure is the finding
            errors.append(f"{type(exc).__name__}: {exc}")

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        fitters = [threading.Thread(target=fitter) for _ in range(3)]
        readers = [threading.Thread(target=reader) for _ in range(5)]
        for t in fitters + readers:
            t.start()
        for t in readers:
            t.join()
        stop.set()
        for t in fitters:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, f"{len(errors)} bad transforms, first: {errors[0]}"
    # Whatever fit came last is complete and usable.
    final = shared.transform(new)
    assert any(np.array_equal(final, w) for w in want)


def test_concurrent_transforms_of_one_scaler_agree():
    x = np.random.default_rng(3).lognormal(size=(20_000, 3))
    s = outprob.scaler("median_nmad").fit(x)
    want = s.transform(x)
    results = [None] * 6

    def work(i):
        results[i] = s.transform(x)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert_array_equal(r, want)


def test_concurrent_transforms_are_identical():
    x = np.random.default_rng(5).lognormal(size=200_000)
    scalers = {n: outprob.scaler(n).fit(x) for n in NAMES}
    want = {n: s.transform(x) for n, s in scalers.items()}
    got: dict = {}
    errors: list = []

    def work(i: int) -> None:
        try:
            for n in NAMES[i % 3 :: 1]:
                got[(i, n)] = scalers[n].transform(x)
                outprob.scaler(n).fit(x)  # fits run concurrently too
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for (_, n), p in got.items():
        assert_array_equal(p, want[n])
