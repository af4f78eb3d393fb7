"""``outprob stream`` as a process: one output line per input line, the
--on-error rules, size arguments refused as usage errors (contract §9,
"Command line")."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import outprob


def stream(text: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "outprob", "stream", *args], input=text,
                          capture_output=True, text=True, timeout=120, check=False)


def want(batches, variant="mean_nmad"):
    """The oracle: the scaler's own partial_fit/transform, batch by batch."""
    model = outprob.scaler(variant)
    return np.concatenate([model.partial_fit(np.asarray(b, float)).transform(np.asarray(b, float))
                           for b in batches])


def floats(stdout: str) -> np.ndarray:
    return np.array([float(t) for t in stdout.splitlines()])


def test_every_valid_line_is_written_before_a_bad_one_stops_the_stream():
    # printf '1\n2\n3\nabc\n' | outprob stream --on-error stop: the three
    # valid scores are fitted and written, then the error names line 4.
    proc = stream("1\n2\n3\nabc\n", "--on-error", "stop")
    assert proc.returncode == 1
    np.testing.assert_array_equal(floats(proc.stdout), want([[1, 2, 3]]))
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "line 4" in err[0] and "'abc' is not a number" in err[0]
    assert "Traceback" not in proc.stderr


def test_by_default_a_bad_line_is_a_missing_score():
    proc = stream("1\n2\n3\nabc\n")
    assert proc.returncode == 0, proc.stderr
    got = floats(proc.stdout)
    assert got.size == 4 and np.isnan(got[3])
    np.testing.assert_array_equal(got, want([[1, 2, 3, np.nan]]))
    assert "warning: standard input, line 4: 'abc' is not a number" in proc.stderr
    assert "its probability is nan" in proc.stderr


@pytest.mark.parametrize("policy", ["nan", "skip", "stop"])
def test_bad_lines_inside_batches(policy):
    text = "1\n2\n\n4\n-inf\n6\n7\nx y\n9\n"
    proc = stream(text, "--flush-every", "3", "--on-error", policy)
    got = floats(proc.stdout)
    if policy == "nan":
        # Nine lines in, nine out; each batch of three fitted, then mapped.
        expected = want([[1, 2, np.nan], [4, np.nan, 6], [7, np.nan, 9]])
        assert proc.returncode == 0 and got.size == 9
    elif policy == "skip":
        expected = want([[1, 2], [4, 6], [7, 9]])
        assert proc.returncode == 0 and got.size == 6
    else:
        expected = want([[1, 2]])
        assert proc.returncode == 1 and "line 3: an empty line" in proc.stderr
    np.testing.assert_array_equal(got, expected)
    if policy != "stop":
        for fragment in ("line 3: an empty line", "line 5: '-inf' is infinite", "line 8: 'x y'"):
            assert fragment in proc.stderr, proc.stderr


def test_bad_lines_past_the_tenth_are_counted():
    proc = stream("1\n" + "x\n" * 25 + "2\n")
    assert proc.returncode == 0 and floats(proc.stdout).size == 27
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 11 and "25 bad lines in all (10 shown)" in lines[-1]


def test_lines_without_a_final_newline_and_crlf():
    proc = stream("1\r\n 2 \r\n3")
    assert proc.returncode == 0 and floats(proc.stdout).size == 3
    assert stream("").stdout == "" and stream("").returncode == 0


@pytest.mark.parametrize("args", [
    ["--k", "18446744073709551616"], ["--window", "18446744073709551616"],
    ["--refit-every", "18446744073709551616", "--window", "10"],
    ["--flush-every", str(2**70)], ["--flush-every", "0"], ["--k", "7"], ["--window", "-1"],
    ["--k", "1e3"],
])
def test_sizes_out_of_range_are_usage_errors(args):
    proc = stream("1\n", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith("usage: outprob stream")
    assert f"argument {args[0]}" in proc.stderr.splitlines()[-1]


@pytest.mark.parametrize("variant, fragment", [
    ("rank", "--variant rank cannot be fitted incrementally"),
    ("sigmoid", "--variant sigmoid cannot be fitted incrementally"),
    ("mean_nmda", "unknown variant 'mean_nmda'"),
])
def test_variants_that_cannot_stream_are_refused(variant, fragment):
    proc = stream("1\n", "--variant", variant)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in proc.stderr


def test_written_probabilities_read_back_exactly():
    x = np.random.default_rng(5).lognormal(size=20_000)
    proc = stream("".join(f"{float(v)!r}\n" for v in x), "--variant", "median_nmad")
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal(floats(proc.stdout), want(np.split(x, [8192, 16384]), "median_nmad"))


def refitted_as_the_contract_says(x, batch, variant, k):
    """The oracle of contract §9, "Command line" (Refits): the scaler's
    partial_fit after each batch, its map kept until more than
    floor(eps·n) scores came since the last refit (every batch while the
    sketch is exact, or when the center is the mean). Also returns how
    many batches kept an older map."""
    import copy

    model = outprob.scaler(variant, k=k)
    out, kept, current, last_n = [], 0, None, None
    for i in range(0, len(x), batch):
        b = x[i:i + batch]
        model.partial_fit(b)
        n, eps = int(model.n_samples_seen_), float(model.rank_error_)
        reads_moments = variant.startswith("mean")
        if current is None or reads_moments or eps == 0 or n - last_n > np.floor(eps * n):
            current, last_n = copy.deepcopy(model), n
        else:
            kept += 1
        out.append(current.transform(b))
    return np.concatenate(out), kept


@pytest.mark.parametrize("variant", ["median_nmad", "mean_nmad"])
def test_the_sketch_is_queried_again_once_eps_n_scores_came(variant):
    # k = 8: eps ≈ 0.30, so that a sketch-only fit keeps its map for many
    # batches; a fit reading the mean refits at every batch.
    x = np.random.default_rng(5).lognormal(size=3000)
    proc = stream("".join(f"{v!r}\n" for v in x.tolist()), "--variant", variant, "--k", "8",
                  "--flush-every", "100")
    assert proc.returncode == 0, proc.stderr
    expected, kept = refitted_as_the_contract_says(x, 100, variant, 8)
    assert (kept > 5) == (variant == "median_nmad")
    np.testing.assert_array_equal(floats(proc.stdout), expected)


def test_a_linear_stream_maps_each_batch_with_the_extremes_after_it():
    """§9 "Command line" (Refits): only a fit that reads the sketch keeps
    an older map; linear scaling reads the exact extremes, so each batch
    is mapped by §4's p = clip((s − min)/(max − min), 0, 1) with the min
    and max of every score up to the end of that batch."""
    x = np.random.default_rng(6).lognormal(size=1000)
    proc = stream("".join(f"{v!r}\n" for v in x.tolist()), "--variant", "linear", "--flush-every", "100")
    assert proc.returncode == 0, proc.stderr
    expected = []
    for end in range(100, 1001, 100):
        lo, hi = x[:end].min(), x[:end].max()
        expected.append(np.clip((x[end - 100:end] - lo) / (hi - lo), 0, 1))
    np.testing.assert_array_equal(floats(proc.stdout), np.concatenate(expected))


@pytest.mark.parametrize("higher_is_outlier", [True, False])
def test_a_linear_stream_fit_is_fresh_after_every_batch(higher_is_outlier):
    """§9 "Command line" (Refits), the core's rule the stream asks
    (``stream_fit``): for a linear fit there is no older fit to keep, so
    whatever the last fit (none, a batch ago, this very batch) it hands
    the extremes of the oriented scores seen, in every column."""
    from outprob.streaming import StreamingFit

    rng = np.random.default_rng(3)
    x = np.c_[rng.normal(size=600), rng.lognormal(size=600)]
    x[[5, 250], [1, 0]] = np.nan  # omitted: the columns count apart
    fit = StreamingFit(scaling="linear", higher_is_outlier=higher_is_outlier, k=8)
    oriented = x if higher_is_outlier else -x
    for end in range(50, 601, 50):
        before = fit.n or None
        fit.update(x[end - 50:end])
        for last in (None, before, fit.n):
            fresh = fit._state.stream_fit(last)
            assert len(fresh) == 2
            for j, r in enumerate(fresh):
                seen = oriented[:end, j][~np.isnan(oriented[:end, j])]
                assert (r.center, r.scale, r.n) == (seen.min(), seen.max(), seen.size)


@pytest.mark.parametrize("variant", ["mean_nmad", "linear"])
def test_the_plain_stream_runs_without_numpy(variant):
    # contract §9 "Command line": lines in, probabilities out, the same as
    # partial_fit's — read, fitted, mapped and written by the extension,
    # without NumPy's import (which cost more than fitting 2e6 lines).
    code = ("import sys; from outprob.cli import main; code = main(['stream', '-v', sys.argv[1]]); "
            "print('numpy' in sys.modules, file=sys.stderr); sys.exit(code)")
    proc = subprocess.run([sys.executable, "-c", code, variant], input="1\n2\n7\n", capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stderr.strip() == "False", proc.stderr
    np.testing.assert_array_equal(floats(proc.stdout), want([[1, 2, 7]], variant))
