"""Input files the command line must not misread (contract §9, "Command
line"): the kind of a file for ``outprob fit`` (its suffix or --format,
never a guess), CSV that is not UTF-8, infinite scores in ``outprob
evaluate``, a byte order mark before the lines of ``outprob stream``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import outprob

from .test_cli_tables import cli, one_line_error

SCORES = np.array([1.0, 2.0, 3.0, 4.0])
TEXT = "".join(f"{float(v)!r}\n" for v in SCORES)


def fitted_center(out: str) -> float:
    return float(outprob.from_dict(json.loads(out)).center_)


# -- the kind of a file: its suffix, or --format -------------------------------------


@pytest.mark.parametrize("name", ["scores", "x.log", "scores.text"])
def test_fit_refuses_a_file_whose_kind_it_does_not_know(capsys, tmp_path, name):
    # Read as a CSV table, the text "1 2 3 4" lost its first score to the
    # header and fitted center_ 3.0.
    path = tmp_path / name
    path.write_text(TEXT)
    code, out, err = cli(capsys, "fit", path)
    one_line_error(code, err, str(path), ".parquet/.pq", ".csv/.tsv", ".npy", ".txt/.dat/.scores",
                   "--format parquet|csv|npy|txt")
    assert out == ""


@pytest.mark.parametrize("name", ["x.TXT", "x.Scores", "x.dat"])
def test_fit_reads_text_by_its_suffix_in_any_case(capsys, tmp_path, name):
    path = tmp_path / name
    path.write_text(TEXT)
    code, out, err = cli(capsys, "fit", path)
    assert code == 0, err
    assert fitted_center(out) == SCORES.mean()  # mean_nmad: the mean of all four


def test_fit_reads_what_format_names(capsys, tmp_path):
    text = tmp_path / "scores"
    text.write_text(TEXT)
    code, out, err = cli(capsys, "fit", text, "--format", "txt")
    assert code == 0 and fitted_center(out) == SCORES.mean(), err
    table = tmp_path / "table.dat"  # --format wins over the suffix
    table.write_text("s\n" + TEXT)
    code, out, err = cli(capsys, "fit", table, "--format", "csv", "--column", "s")
    assert code == 0 and fitted_center(out) == SCORES.mean(), err
    array = tmp_path / "array.bin"
    with open(array, "wb") as fh:
        np.save(fh, SCORES)
    code, out, err = cli(capsys, "fit", array, "--format", "npy")
    assert code == 0 and fitted_center(out) == SCORES.mean(), err
    code, out, err = cli(capsys, "fit", text, "--format", "txt", "--column", "s")
    one_line_error(code, err, "--column applies to tables")


def test_fit_reads_parquet_that_format_names(capsys, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "scores.bin"
    pq.write_table(pa.table([SCORES], names=["s"]), path)
    code, out, err = cli(capsys, "fit", path, "--format", "parquet")
    assert code == 0 and fitted_center(out) == SCORES.mean(), err


# -- CSV that is not UTF-8 -----------------------------------------------------------


@pytest.mark.parametrize("command", [
    ["fit", "{p}", "--column", "s"],
    ["scale", "{p}", "--score-column", "s", "--out", "-"],
    ["evaluate", "{p}", "--score-column", "s", "--label-column", "y"],
])
@pytest.mark.parametrize("where", ["header", "row"])
def test_a_csv_that_is_not_utf8_is_refused_naming_the_line(capsys, tmp_path, command, where):
    # Latin-1 é (0xe9): the codec's own message named neither file nor line.
    path = tmp_path / "latin1.csv"
    head, line = ("s,y,caf\xe9\n", 1) if where == "header" else ("s,y,c\n", 4)
    rows = ["1,0,a\n", "2,0,b\n", "3,1,caf\xe9\n", "4,1,d\n"] if where == "row" else ["1,0,a\n", "2,1,b\n"]
    path.write_bytes((head + "".join(rows)).encode("latin-1"))
    code, out, err = cli(capsys, *[c.format(p=path) for c in command])
    one_line_error(code, err, f"{path}, line {line}", "0xe9", "not UTF-8")
    assert out == ""


def test_a_csv_that_is_not_utf8_past_the_sniffed_start_with_dask(capsys, tmp_path):
    pytest.importorskip("dask.dataframe")
    path = tmp_path / "late.csv"
    body = "".join(f"{i % 7}.5,x\n" for i in range(20_000))  # > 64 KiB read by the sniffer
    path.write_bytes(("s,t\n" + body + "9.5,caf\xe9\n").encode("latin-1"))
    code, _, err = cli(capsys, "fit", path, "--column", "s", "--dask")
    one_line_error(code, err, f"{path}, line 20002", "not UTF-8")


# -- outprob evaluate and infinite scores ---------------------------------------------


@pytest.mark.parametrize("bad", ["inf", "-inf", "1e400"])
def test_evaluate_refuses_infinite_scores_as_scale_and_fit_do(capsys, tmp_path, bad):
    path = tmp_path / "t.csv"
    path.write_text(f"y,s\n0,1\n1,{bad}\n0,2\n1,3\n")
    for command in (["scale", path, "-s", "s", "--out", "-"], ["fit", path, "--column", "s"]):
        code, _, err = cli(capsys, *command)
        one_line_error(code, err, "1 infinite value", "fitting needs finite scores")
    # It printed nan for every measure and exited 0.
    for fmt in ("text", "csv", "json"):
        code, out, err = cli(capsys, "evaluate", path, "--format", fmt)
        one_line_error(code, err, "column 's'", "1 infinite value (first at index 1)",
                       "fitting needs finite scores")
        assert out == ""


def test_evaluate_names_a_transformation_that_refuses_the_scores(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("y,s\n0,-1\n1,5\n0,2\n1,-3\n0,0.5\n1,6\n")
    code, out, err = cli(capsys, "evaluate", path, "-v", "mixture", "-v", "mean_std", "--format", "json")
    assert code == 0, err
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "mixture refuses column 's'" in warning[0]
    assert "non-negative" in warning[0] and "its measures are nan" in warning[0]
    measures = json.loads(out)
    assert all(np.isfinite(v) for m in measures["mean_std"].values() for v in m.values())
    code, out, err = cli(capsys, "evaluate", path, "-v", "mixture")
    one_line_error(code, err, "mixture refuses column 's'", "non-negative")
    assert out == ""


# -- a byte order mark before the lines ---------------------------------------------


def test_stream_ignores_a_leading_byte_order_mark():
    # Called a bad line 1, written as nan, while the tables ignore the mark.
    data = "\ufeff1\n2\n3\n".encode()
    proc = subprocess.run([sys.executable, "-m", "outprob", "stream", "--on-error", "stop"],
                          input=data, capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    got = np.array([float(t) for t in proc.stdout.decode().split()])
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(got, outprob.scaler("mean_nmad").partial_fit(x).transform(x))


def test_fit_on_text_ignores_a_leading_byte_order_mark(capsys, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(("\ufeff" + TEXT).encode())
    code, out, err = cli(capsys, "fit", path)
    assert code == 0 and fitted_center(out) == SCORES.mean(), err
