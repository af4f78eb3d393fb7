"""Contract §12, ``outprob stream`` with ``--pvalues``, ``--alert``,
``--monitor``, ``--id`` and ``--csv-column``: the core's stream writes
each column as the public parts give it — ``OnlineConformal`` (missing
scores not ranked), ``OnlineFDR`` and ``Martingale(on_alarm="restart")``
on those p-values, the probability as the plain stream writes it. That
it writes, byte for byte, what the batch loop over those parts wrote is
held by ``test_stream_cli_goldens.py``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import outprob

from .test_stream_cli_goldens import inputs


def stream(text: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "outprob", "stream", *args], input=text,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("layout", ["lines", "ids"])
def test_stop_writes_the_rows_before_the_bad_one(layout):
    text = inputs()[layout]
    extra = ["--id"] if layout == "ids" else []
    r = stream(text, "--pvalues", "--monitor", "jumper", *extra, "--on-error", "stop",
               "--flush-every", "64")
    assert r.returncode == 1 and "line 302" in r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert len(rows) == 301  # lines 1..301, the bad one is line 302
    if layout == "ids":
        assert [row[0] for row in rows] == [f"r{i}" for i in range(301)]
    plain = stream(inputs()["lines"], "--on-error", "stop", "--flush-every", "64")
    plain = plain.stdout.splitlines()
    assert [row[-4] for row in rows] == plain  # probability, p-value, ln M, alarm


def test_columns_are_the_public_parts():
    rng = np.random.default_rng(2)
    x = rng.normal(size=2000)
    x[1500:] += 1.5  # a shift for the monitor
    x[rng.uniform(size=x.size) < 0.02] = np.nan
    text = "".join(f"{v!r}\n" for v in x.tolist())
    r = stream(text, "--pvalues", "--alert", "lord++", "--alpha", "0.1", "--monitor", "jumper",
               "--alarm", "20", "--seed", "5", "--flush-every", "300")
    assert r.returncode == 0, r.stderr
    rows = np.array([[float(v) for v in line.split("\t")] for line in r.stdout.splitlines()])
    ok = ~np.isnan(x)
    p = outprob.OnlineConformal(seed=5).pvalues(x[ok])
    alert = outprob.OnlineFDR("lord++", alpha=0.1).decide(p)
    steps = outprob.Martingale("jumper", threshold=20.0, on_alarm="restart").update(p)
    np.testing.assert_array_equal(rows[ok, 1], p)
    np.testing.assert_array_equal(rows[ok, 2], steps.log_martingale)
    np.testing.assert_array_equal(rows[ok, 3] == 1, alert)
    np.testing.assert_array_equal(rows[ok, 4] == 1, steps.alarm)
    assert np.isnan(rows[~ok, 1:3]).all() and (rows[~ok, 3:] == 0).all()
    assert steps.alarm.any()
    plain = stream(text, "--flush-every", "300").stdout.splitlines()
    assert [line.split("\t")[0] for line in r.stdout.splitlines()] == plain
