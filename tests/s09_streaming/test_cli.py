"""The outprob command (contract §9, "Command line"; §8 for ``outprob
reproduce``, in s08_study): help of every command, ``evaluate`` equal to
``outprob.metrics``, ``scale`` on CSV and Parquet, ``stream`` mapping each
batch after fitting it, ``fit`` printing JSON that ``from_dict`` loads,
and errors a user can fix as one line without a traceback."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import outprob
from outprob import metrics


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "outprob", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, check=False)


@pytest.fixture()
def table(tmp_path):
    rng = np.random.default_rng(7)
    s = np.r_[rng.normal(size=80), rng.normal(5, 1, size=8)]
    y = np.r_[np.zeros(80, int), np.ones(8, int)]
    path = tmp_path / "scores.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "s", "y"])
        w.writerows([i, repr(float(a)), b] for i, (a, b) in enumerate(zip(s, y)))
    return path, s, y


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.mark.parametrize("command", ["", "evaluate", "scale", "reproduce", "stream", "fit"])
def test_help(command):
    proc = run(*([command] if command else []), "--help")
    assert proc.returncode == 0 and proc.stdout.startswith("usage: outprob")
    if not command:
        for name in ("evaluate", "scale", "reproduce", "stream", "fit"):
            assert name in proc.stdout


def test_evaluate_matches_the_metrics(table):
    path, s, y = table
    proc = run("evaluate", path, "--label-column", "y", "--score-column", "s", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = {(t, m, c): float(v) for t, m, c, v in list(csv.reader(proc.stdout.splitlines()))[1:]}
    p = outprob.scaler("mean_nmad").fit_transform(s)
    assert rows[("mean_nmad", "brier_score", "outliers")] == metrics.brier_score(y, p, stratify="outlier")
    assert rows[("mean_nmad", "calibration_error", "inliers")] == metrics.calibration_error(y, p, stratify="inlier")
    assert {t for t, _, _ in rows} == set(outprob.TRANSFORMATIONS)
    text = run("evaluate", path, "-y", "y", "-s", "s", "--variant", "mean_std", "--variant", "huber")
    assert text.returncode == 0 and "88 scores, 8 outliers" in text.stdout
    assert [ln.split()[0] for ln in text.stdout.splitlines()[2:]] == ["mean_std", "huber"]
    prob = run("evaluate", path, "-y", "y", "-s", "s", "--probabilities", "--format", "json")
    assert prob.returncode == 1 and "probabilities" not in prob.stdout  # scores are not in [0, 1]


def test_scale_csv_and_parquet(table, tmp_path):
    path, s, y = table
    out = tmp_path / "p.csv"
    proc = run("scale", path, "--score-column", "s", "--variant", "median_nmad", "--out", out)
    assert proc.returncode == 0, proc.stderr
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["id", "s", "y", "s_median_nmad"]
    got = np.array([float(r["s_median_nmad"]) for r in rows])
    np.testing.assert_array_equal(got, outprob.scaler("median_nmad").fit_transform(s))
    pq = tmp_path / "p.parquet"
    assert run("scale", path, "-s", "s", "--out", pq, "--output-column", "p").returncode == 0
    pd = pytest.importorskip("pandas")
    frame = pd.read_parquet(pq)
    np.testing.assert_array_equal(frame["p"].to_numpy(), outprob.scaler("mean_nmad").fit_transform(s))
    back = run("evaluate", pq, "-s", "p", "-y", "y", "--probabilities", "--format", "csv")
    assert back.returncode == 0 and "brier_score,outliers" in back.stdout.replace("p,", "", 1)


def test_errors_are_one_line_in_a_subprocess(table, tmp_path):
    path, _, _ = table
    assert_one_line_error(run("evaluate", tmp_path / "nope.csv"), "nope.csv: no such file")
    assert_one_line_error(run("reproduce", "--data", tmp_path / "none"), "no such folder")
    usage = run("scale", path)  # argparse: missing --out
    assert usage.returncode == 2 and "--out" in usage.stderr and "Traceback" not in usage.stderr


@pytest.mark.parametrize("args, fragments", [
    (["evaluate", "{path}", "-s", "score", "-y", "y"], ["no column 'score'", "id, s, y"]),
    (["evaluate", "{path}", "-y", "y"], ["--score-column"]),
    (["scale", "{path}", "-s", "s", "--variant", "mean_nmda", "--out", "{tmp}/o.csv"],
     ["unknown variant 'mean_nmda'", "mean_nmad"]),
    (["scale", "{path}", "-s", "s", "--out", "{path}"], ["overwrite"]),
    (["scale", "{path}", "-s", "s", "--out", "{tmp}/no/o.csv"], ["does not exist"]),
    (["scale", "{tmp}/bad.csv", "-s", "s", "--out", "-"], ["row 2", "'abc' is not a number"]),
    (["reproduce", "--data", "{tmp}", "--out", "{tmp}/r"], ["no .npz datasets"]),
    (["reproduce", "--detectors", "KNNN", "--out", "{tmp}/r"], ["unknown detector"]),
    (["reproduce", "--jobs", "0"], ["--jobs must be at least 1"]),
])
def test_errors_are_one_line(table, tmp_path, capsys, args, fragments):
    from outprob.cli import main

    path, _, _ = table
    (tmp_path / "bad.csv").write_text("s,y\n1.0,0\nabc,1\n")
    code = main([a.format(path=path, tmp=tmp_path) for a in args])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1 and "error:" in err
    for f in fragments:
        assert f in err, err


def stream(lines: str, *args: str) -> subprocess.CompletedProcess:
    """``outprob stream ARGS < lines`` in this process (startup is slow)."""
    import contextlib
    import io

    from outprob.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin
    sys.stdin = io.StringIO(lines)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["stream", *args])
    finally:
        sys.stdin = old
    return subprocess.CompletedProcess(["stream"], code, out.getvalue(), err.getvalue())


def test_stream_in_a_subprocess():
    proc = subprocess.run([sys.executable, "-m", "outprob", "stream", "--variant", "linear"],
                          input="1\n3\nnan\n2\n", capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0 and proc.stdout.split() == ["0.0", "1.0", "nan", "0.5"]


def test_stream_maps_each_batch_after_fitting_it():
    x = np.random.default_rng(3).lognormal(size=3000)
    x[[5, 100]] = np.nan
    text = "".join(f"{float(v)!r}\n" for v in x)
    proc = stream(text, "--variant", "median_nmad", "--flush-every", "1000")
    assert proc.returncode == 0, proc.stderr
    got = np.array([float(t) for t in proc.stdout.split()])
    # The oracle: the scaler's own partial_fit/transform per batch of 1000.
    model = outprob.scaler("median_nmad")
    want = np.concatenate([model.partial_fit(b).transform(b) for b in np.split(x, 3)])
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[[5, 100]]).all()


def test_stream_window_and_one_line_errors():
    proc = stream("".join(f"{v}\n" for v in range(1, 2001)), "--variant", "linear",
                  "--window", "100", "--flush-every", "1")
    got = np.array([float(t) for t in proc.stdout.split()])
    assert proc.returncode == 0 and got.size == 2000 and np.all(got[1:] == 1.0)
    # A bad line stops the stream with --on-error stop (the default, nan,
    # is tested in test_cli_stream.py).
    assert_one_line_error(stream("1.0\n2.0\nabc\n", "--on-error", "stop"), "line 3", "'abc' is not a number")
    # (linear: the one score before the bad line fits without a zero-scale warning)
    assert_one_line_error(stream("1.0\n\n", "-v", "linear", "--on-error", "stop"), "line 2", "empty line")
    assert_one_line_error(stream("1\n-inf\n", "-v", "linear", "--flush-every", "1", "--on-error", "stop"),
                          "line 2", "infinite")


def test_fit_prints_json_that_from_dict_loads(table, tmp_path, capsys):
    import json

    from outprob.cli import main

    path, s, _ = table
    (tmp_path / "s.txt").write_text("".join(f"{float(v)!r}\n" for v in s))
    np.save(tmp_path / "s.npy", s)
    want = outprob.scaler("median_nmad").fit(s)
    for args in ([str(path), "--column", "s"], [str(tmp_path / "s.txt")], [str(tmp_path / "s.npy")],
                 [str(tmp_path / "s.npy"), "--dask"], [str(path), "--column", "s", "--dask"]):
        assert main(["fit", *args, "--variant", "median_nmad"]) == 0
        got = outprob.from_dict(json.loads(capsys.readouterr().out))
        assert (got.center_, got.scale_) == (want.center_, want.scale_), args
    assert main(["fit", str(path), "--variant", "median_nmad"]) == 1
    assert "--column" in capsys.readouterr().err
    (tmp_path / "bad.txt").write_text("1\n2\nx\n")
    assert main(["fit", str(tmp_path / "bad.txt")]) == 1
    assert "line 3" in capsys.readouterr().err
