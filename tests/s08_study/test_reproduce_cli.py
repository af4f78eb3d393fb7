"""``outprob reproduce`` (contract §8): ``--quick`` writes REPORT.md with
the paper's findings, the five figures, ``results.csv.gz`` with one row per
dataset × detector × transformation × measure × class, and ``status.csv``;
``--scores`` runs the study on precomputed score sets."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np

import outprob


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "outprob", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300, check=False)


def test_reproduce_quick_writes_the_report(tmp_path):
    out = tmp_path / "quick"
    proc = run("reproduce", "--quick", "--jobs", "1", "--no-progress", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out / "REPORT.md")
    report = (out / "REPORT.md").read_text()
    for text in ("## The paper's findings and this run", "Arrhythmia, HeartDisease, Parkinson",
                 "ADBench", "outprob reproduce --quick --jobs 1 --no-progress", "| 3 |", "Run time"):
        assert text in report, text
    for fig in ("fig1_case_study", "fig2_gs_outliers_vs_inliers", "fig3_outlier_skill_vs_gs",
                "fig4_cd_harmonic_improvement", "fig5_reliability"):
        assert (out / "figures" / f"{fig}.png").stat().st_size > 0 and (out / "figures" / f"{fig}.svg").is_file()
        assert f"figures/{fig}.png" in report
    with gzip.open(out / "results.csv.gz", "rt") as fh:
        header = fh.readline().strip()
        n = sum(1 for _ in fh)
    assert header == "dataset,detector,transformation,measure,class,value"
    assert n == 5 * 4 * len(outprob.TRANSFORMATIONS) * 33
    assert (out / "status.csv").read_text().count("\n") == 21 and (out / "environment.json").is_file()


def test_reproduce_on_precomputed_score_sets(tmp_path, capsys):
    from outprob.cli import main

    rng = np.random.default_rng(11)
    folder = tmp_path / "scores"
    folder.mkdir()
    for i in range(4):
        s = np.r_[rng.gamma(2.0, 1.0, 60), rng.normal(8.0, 1.0, 6)]
        np.savez(folder / f"set{i}.npz", scores=s, y=np.r_[np.zeros(60, int), np.ones(6, int)], detector="mine")
    out = tmp_path / "report"
    assert main(["reproduce", "--scores", str(folder), "--out", str(out), "--jobs", "1", "--no-progress"]) == 0
    report = (out / "REPORT.md").read_text()
    assert "4 precomputed score sets" in report and "| mine | precomputed |" in report
    assert "Arrhythmia" not in report and (out / "figures" / "fig1_case_study.png").is_file()
    status = (out / "status.csv").read_text().splitlines()
    assert len(status) == 5 and all(",mine,66,6,ok," in line for line in status[1:])
