"""Reproduce the paper's study end to end and write a report.

Scores every dataset with every detector (PyOD, default hyperparameters),
turns each score set into probabilities with every registered
transformation, measures them (contract §6) and writes OUT/REPORT.md with
the paper's findings against this run, the figures (PNG and SVG), the
results table (results.csv.gz), status.csv and environment.json. Work is
kept in OUT/.study: interrupt with Ctrl-C and rerun the same command to
resume; a rerun recomputes only what changed. Needs outprob[study].

examples:
  outprob reproduce --out report                 # the full study, every core
  outprob reproduce --quick --out quick          # 5 small datasets, 4 fast detectors
  outprob reproduce --data my_npz_folder --detectors KNN IForest --jobs 2
  outprob reproduce --scores my_scores/ --label-column label   # precomputed score sets
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

NAME = "reproduce"
HELP = "run the paper's study and write REPORT.md with its figures"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, help="folder of .npz datasets with X and y "
                   "(default: paper/data of a clone of outprob)")
    p.add_argument("--out", type=Path, default=Path("outprob-report"),
                   help="output folder (default: outprob-report)")
    p.add_argument("--scores", type=Path, metavar="PATH",
                   help="precomputed score sets instead of --data: a .npz with scores and y, a CSV/Parquet "
                        "table, or a folder of them")
    p.add_argument("--score-column", help="score column of CSV/Parquet score sets (default: the non-label one)")
    p.add_argument("--label-column", default="y", help="label column of CSV/Parquet score sets (default: y)")
    p.add_argument("--datasets", nargs="+", metavar="NAME", help="only these datasets (file stems)")
    p.add_argument("--detectors", nargs="+", metavar="NAME",
                   help="only these of the paper's detectors: PCA KPCA GMM KNN LOF IForest HBOS LODA "
                        "COF Sampling ECOD (default: all)")
    p.add_argument("--jobs", "-j", type=int, help="worker processes (default: every core)")
    p.add_argument("--quick", action="store_true",
                   help="5 small datasets with KNN, IForest, PCA and LOF (under a minute)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-figures", action="store_true", help="skip the figures (no matplotlib needed)")


def run(args: argparse.Namespace) -> int:
    from . import CLIError

    if args.jobs is not None and args.jobs < 1:
        raise CLIError(f"--jobs must be at least 1, got {args.jobs}")
    if args.data is not None and not args.data.is_dir():
        raise CLIError(f"--data {args.data}: no such folder")
    if args.out.exists() and not args.out.is_dir():
        raise CLIError(f"--out {args.out} is a file, not a folder")
    if not args.no_figures:
        from outprob._common.optional import require

        require("matplotlib", "the figures (or pass --no-figures)", "study").use("Agg")
    from outprob.experiment import reproduce

    report = reproduce(
        args.data, args.out, datasets=args.datasets, detectors=args.detectors, quick=args.quick,
        scores=args.scores, score_column=args.score_column, label_column=args.label_column,
        jobs=args.jobs, progress=not args.no_progress, figures=not args.no_figures,
        command="outprob " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "outprob reproduce",
    )
    print(report)
    return 0
