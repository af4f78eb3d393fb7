"""Tables the CLI refuses or reads despite their quirks: duplicate column
names, a byte order mark, a header without rows (contract §9, "Command
line")."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import outprob
from outprob.cli import main


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code, err, *fragments):
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0] and "Traceback" not in err, err
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.fixture()
def dup(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("score,score\n1,100\n2,200\n3,300\n")
    return path


@pytest.mark.parametrize("command", [
    ["scale", "{p}", "--score-column", "score", "--out", "-"],
    ["scale", "{p}", "--out", "-"],
    ["fit", "{p}", "--column", "score"],
    ["fit", "{p}"],
    ["evaluate", "{p}", "--score-column", "score", "--label-column", "score"],
])
def test_duplicate_column_names_are_refused(capsys, dup, command):
    code, out, err = cli(capsys, *[c.format(p=dup) for c in command])
    one_line_error(code, err, "columns 1 and 2 are both named 'score'", "rename one")
    assert out == ""


def test_duplicate_column_names_are_refused_by_the_dask_reader(capsys, dup):
    pytest.importorskip("dask.dataframe")
    code, _, err = cli(capsys, "fit", dup, "--column", "score", "--dask")
    one_line_error(code, err, "both named 'score'")


def test_duplicate_column_names_in_parquet_are_refused(capsys, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.table([[1.0, 2.0], [3.0, 4.0]], names=["s", "s"]), path)
    code, _, err = cli(capsys, "fit", path, "--column", "s")
    one_line_error(code, err, "both named 's'")


def test_a_byte_order_mark_is_not_part_of_the_first_name(capsys, tmp_path):
    s = np.array([0.5, 1.5, 0.7, 9.0, 1.1, 0.2])
    path = tmp_path / "bom.csv"
    path.write_bytes(("\ufeffscore;y\n" + "".join(f"{float(v)!r};{int(v > 5)}\n" for v in s)).encode())
    code, out, err = cli(capsys, "scale", path, "--score-column", "score", "--out", "-")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["score", "y", "score_mean_nmad"]
    np.testing.assert_array_equal([float(r[2]) for r in rows[1:]],
                                  outprob.scaler("mean_nmad").fit_transform(s))
    code, out, err = cli(capsys, "evaluate", path, "--format", "json")  # the only other column
    assert code == 0 and '"mean_nmad"' in out, err
    code, out, err = cli(capsys, "fit", path, "--column", "score")
    assert code == 0 and outprob.from_dict(__import__("json").loads(out)).center_ == s.mean(), err


def test_a_byte_order_mark_with_dask(capsys, tmp_path):
    pytest.importorskip("dask.dataframe")
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffscore;other\n1;5\n2;5\n4;5\n".encode())
    code, out, err = cli(capsys, "fit", path, "--column", "score", "--dask", "--variant", "mean_std")
    assert code == 0, err
    assert outprob.from_dict(__import__("json").loads(out)).center_ == pytest.approx(7 / 3)


@pytest.mark.parametrize("command", [
    ["evaluate", "{p}", "--score-column", "s", "--label-column", "y"],
    ["evaluate", "{p}", "-s", "s", "-y", "y", "--probabilities"],
    ["scale", "{p}", "--score-column", "s", "--out", "-"],
    ["fit", "{p}", "--column", "s"],
])
def test_a_header_without_rows_is_refused(capsys, tmp_path, command):
    path = tmp_path / "empty.csv"
    path.write_text("s,y\n")
    code, out, err = cli(capsys, *[c.format(p=path) for c in command])
    one_line_error(code, err, "has no rows")
    assert out == ""
