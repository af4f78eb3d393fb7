"""Contract §12, ``outprob stream`` with ``--pvalues``, ``--alert``,
``--monitor``, ``--id`` and ``--csv-column``: the p-values against the
O(n²) definition with the same draws, the decisions against online-fdr
1.0 on those p-values, the power martingale against its formula, the
identifiers and CSV rows written back, and bad arguments."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from outprob.reference.conformal import uniforms as splitmix_uniforms


def stream(text: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "outprob", "stream", *args], input=text,
                          capture_output=True, text=True, timeout=120, check=False)


def definition(s: np.ndarray, seed: int = 0) -> np.ndarray:
    """p_n = (#{i ≤ n: s_i > s_n} + θ_n #{i ≤ n: s_i = s_n})/n, θ = 1 − U."""
    theta = 1.0 - splitmix_uniforms(seed, s.size)
    return np.array([((s[: n + 1] > s[n]).sum() + theta[n] * (s[: n + 1] == s[n]).sum()) / (n + 1)
                     for n in range(s.size)])  # fmt: skip


def lines(x) -> list:
    return [repr(float(v)) for v in x]


def table(stdout: str) -> list:
    return [line.split("\t") for line in stdout.splitlines()]


def scores(n: int = 600, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n), 2)  # ties included
    x[rng.uniform(size=n) < 0.05] += 6  # outliers for the FDR rule
    return x


def test_pvalues_follow_the_definition_and_missing_scores_are_not_ranked():
    x = scores(300)
    text = "\n".join([*lines(x[:100]), "nan", *lines(x[100:])]) + "\n"
    r = stream(text, "--pvalues", "--seed", "7", "--flush-every", "64")
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    assert len(rows) == 301 and rows[100] == ["nan", "nan"]
    got = np.array([float(row[1]) for i, row in enumerate(rows) if i != 100])
    np.testing.assert_array_equal(got, definition(x, 7))
    plain = stream(text, "--flush-every", "64")
    assert [row[0] for row in rows] == plain.stdout.splitlines()  # the probabilities as without flags


@pytest.mark.parametrize("method", ["lord++", "saffron", "lond"])
def test_alerts_equal_online_fdr_on_the_same_pvalues(method):
    online_fdr = pytest.importorskip("online_fdr", reason="online-fdr is in the test extra")
    from online_fdr.p_values import Lond, LordPlusPlus, Saffron

    # Online p-values are at least θ/t: only a score above every earlier
    # one gets a small p. Outliers that keep rising (30%) give rejections.
    rng = np.random.default_rng(3)
    x = rng.normal(size=3000)
    rising = rng.uniform(size=x.size) < 0.3
    x[rising] = 10 + np.cumsum(rng.uniform(size=rising.sum()))
    r = stream("\n".join(lines(x)) + "\n", "--pvalues", "--alert", method, "--alpha", "0.3",
               "--flush-every", "100")
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    p = np.array([float(row[1]) for row in rows])
    got = np.array([row[2] == "1" for row in rows])
    # §12 defaults: w0 = α/10 (LORD++), α/2 and λ = 1/2 (SAFFRON).
    ref = {"lord++": lambda: LordPlusPlus(0.3, wealth=0.03),
           "saffron": lambda: Saffron(0.3, wealth=0.15, lambda_=0.5), "lond": lambda: Lond(0.3)}[method]()
    want = np.array([ref.test_one(float(v)) for v in p])
    assert want.sum() >= 100
    np.testing.assert_array_equal(got, want)
    assert online_fdr is not None


def test_power_monitor_follows_its_formula_and_restarts_after_an_alarm():
    rng = np.random.default_rng(4)
    x = np.r_[rng.normal(size=300), rng.normal(3, 1, size=200)]
    r = stream("\n".join(lines(x)) + "\n", "--monitor", "power", "--alarm", "20", "--pvalues")
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    p = np.array([float(row[1]) for row in rows])
    logm = np.array([float(row[2]) for row in rows])
    alarm = np.array([row[3] == "1" for row in rows])
    # ln M_t = t ln ε + (ε − 1) Σ ln p since the last restart, ε = 0.5.
    want, t, s, flags = [], 0, 0.0, []
    for v in p:
        t, s = t + 1, s + np.log(v)
        lm = t * np.log(0.5) - 0.5 * s
        want.append(lm)
        flags.append(lm >= np.log(20))
        if flags[-1]:
            t, s = 0, 0.0
    np.testing.assert_allclose(logm, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(alarm, flags)
    assert alarm[300:].any()


def test_identifiers_and_csv_rows_are_written_back():
    r = stream("a\t1.5\nb c\t2\nx\ty\t3\nd\tbad\ne\t4\n", "--id", "--pvalues", "--on-error", "skip")
    assert r.returncode == 0, r.stderr
    rows = table(r.stdout)
    assert [row[:-2] for row in rows] == [["a"], ["b c"], ["x", "y"], ["e"]]
    np.testing.assert_array_equal([float(row[-1]) for row in rows], definition(np.array([1.5, 2, 3, 4])))
    assert "line 4" in r.stderr
    r = stream('id;note;score\n1;"a;b";0.5\n2;c;3\n3;d;1\n', "--csv-column", "score", "--alert", "lond")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "id;note;score;probability;alert"
    assert [line.rsplit(";", 2)[0] for line in lines[1:]] == ['1;"a;b";0.5', "2;c;3", "3;d;1"]
    r = stream("s,t\n1,a\n2,b\n", "--csv-column", "s", "--alert", "lond", "--monitor", "power",
               "--pvalues")
    assert r.returncode == 0, r.stderr
    head, first = r.stdout.splitlines()[:2]
    assert head == "s,t,probability,pvalue,log_martingale,alert,alarm"
    p = float(first.split(",")[3])
    assert float(first.split(",")[4]) == pytest.approx(np.log(0.5) - 0.5 * np.log(p), rel=1e-12)


@pytest.mark.parametrize("args,code,fragment", [
    (["--alarm", "0", "--monitor", "power"], 2, "positive"),
    (["--alpha", "1", "--alert", "lond"], 2, "(0, 1)"),
    (["--id", "--csv-column", "s"], 1, "one"),
    (["--csv-column", "nope"], 1, "nope"),
])
def test_bad_arguments(args, code, fragment):
    r = stream("s\n1\n", *args)
    assert r.returncode == code and fragment in r.stderr, r.stderr
