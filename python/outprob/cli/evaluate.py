"""Measure how good the outlier probabilities of a score column are.

Turns the scores into probabilities with every registered transformation
(or the --variant ones) and prints, for each, the measures of contract §6
for the outliers and the inliers and the harmonic improvement score
(lower is better). With --probabilities the column already holds
probabilities and is measured as it is.

examples:
  outprob evaluate scores.csv --label-column y --score-column knn
  outprob evaluate scores.csv --label-column y --score-column p --probabilities
  outprob evaluate scores.parquet --label-column y --score-column s --format csv
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:
    import numpy as np

NAME = "evaluate"
HELP = "measure the probabilities of a score column against its labels"
_SHORT = {"brier_score": "Brier", "sharpness_error": "sharp", "refinement_error": "refine",
          "calibration_error": "calib"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", type=Path, help="CSV or Parquet file (.parquet needs outprob[parquet])")
    p.add_argument("--score-column", "-s", help="column of outlier scores (default: the column "
                   "that is not the label column, if there is one)")
    p.add_argument("--label-column", "-y", default="y", help="column of 0/1 labels, 1 = outlier (default: y)")
    p.add_argument("--variant", "-v", action="append", metavar="NAME",
                   help="transformation(s) to measure (repeatable; default: every registered one)")
    p.add_argument("--probabilities", action="store_true", help="the column holds probabilities already")
    p.add_argument("--lower-is-outlier", action="store_true", help="lower scores are more outlying")
    p.add_argument("--bins", default="equiareal", choices=("equiareal", "equal_width", "equal_frequency"),
                   help="binning of refinement and calibration (default: equiareal)")
    p.add_argument("--format", default="text", choices=("text", "csv", "json"), help="output format")


def _load(args: argparse.Namespace) -> Any:
    # Imported here: every command imports this module to list it, and
    # `outprob stream` runs without NumPy.
    import numpy as np

    from outprob import _core
    from outprob._common.tables import columns_of, read_columns

    from . import CLIError

    score_column = args.score_column
    if score_column is None:
        others = [c for c in columns_of(args.table) if c != args.label_column]
        if len(others) != 1:
            raise CLIError(f"{args.table}: name the score column with --score-column (columns: {', '.join(others)})")
        score_column = others[0]
    scores, y = read_columns(args.table, [score_column, args.label_column])
    missing = np.flatnonzero(np.isnan(scores) | np.isnan(y))
    if missing.size:
        raise CLIError(f"{args.table}: {missing.size} rows lack a score or a label (first: row {missing[0] + 1})")
    if not args.probabilities:
        # Refused as by outprob scale and fit, by the core's contract §5
        # check: every transformation would refuse them and leave only nan
        # to print.
        try:
            _core.check_scores(np.ascontiguousarray(scores), nan_policy="omit")
        except ValueError as e:
            raise CLIError(f"{args.table}: column {score_column!r}: {e}") from None
    return score_column, (-scores if args.lower_is_outlier else scores), y


def run(args: argparse.Namespace) -> int:
    from outprob import metrics
    from outprob._common.exceptions import OutprobWarning
    from outprob.experiment.evaluation import score_set_rows, transformations

    from . import CLIError

    column, scores, y = _load(args)
    if args.probabilities:
        ev = metrics.evaluate(y, scores, bins=args.bins)
        if args.format == "json":
            print(json.dumps({column: ev.to_dict()}, indent=2))
        elif args.format == "csv":
            d = ev.to_dict()
            _csv([(column, m, c, d[m][c]) for m in ev.MEASURES for c in ev.COLUMNS])
        else:
            print(ev)
        return 0
    transforms = transformations()
    if args.variant:
        unknown = [v for v in args.variant if v not in transforms]
        if unknown:
            raise CLIError(f"unknown variant(s) {', '.join(unknown)}; registered: {', '.join(transforms)}")
        transforms = {v: transforms[v] for v in args.variant}
    reference = "mean_std" if "mean_std" in transforms else ""
    rows, notes = score_set_rows(scores, y, transforms, reference=reference, bins=args.bins)
    refused = [name for name in transforms if any(k.startswith(f"{name}: refused") for k in notes)]
    if refused and len(refused) == len(transforms):
        name = refused[0]
        raise CLIError(f"{args.table}: {name} refuses column {column!r}: "
                       f"{_why(transforms[name], scores)}")
    for name in refused:
        # A transformation whose domain the scores leave (e.g. mixture on
        # negative scores): its measures are nan, and the user is told why.
        warnings.warn(f"{name} refuses column {column!r} ({_why(transforms[name], scores)}); "
                      "its measures are nan", OutprobWarning, stacklevel=1)
    if args.format == "csv":
        _csv(rows)
    elif args.format == "json":
        nested: Dict[str, Any] = {}
        for t, m, c, v in rows:
            nested.setdefault(t, {}).setdefault(m, {})[c] = v
        print(json.dumps(nested, indent=2, allow_nan=True))
    else:
        print(_text(rows, list(transforms), y, column, args.bins))
    return 0


def _why(transformation: Any, scores: np.ndarray) -> str:
    """The message of a transformation's refusal of the scores."""
    try:
        transformation.fresh().fit_transform(scores)
    except (ValueError, TypeError, ArithmeticError) as exc:
        return " ".join(str(exc).split()) or type(exc).__name__
    return "refused"


def _csv(rows: List[Any]) -> None:
    import csv

    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["transformation", "measure", "class", "value"])
    w.writerows([t, m, c, repr(float(v))] for t, m, c, v in rows)


def _text(rows: List[Any], names: List[str], y: np.ndarray, column: str, bins: str) -> str:
    from outprob.experiment.evaluation import HIS, MEASURES

    value = {(t, m, c): v for t, m, c, v in rows}
    n_out = int((y == 1).sum())
    heads = [f"{_SHORT[m]} {c}" for m in MEASURES for c in ("out", "in")] + ["HIS"]
    width = max(14, *(len(n) for n in names))
    lines = [
        f"{column}: {y.size} scores, {n_out} outliers, {y.size - n_out} inliers; {bins} bins, k = 5..20; "
        "errors per class (lower is better), HIS over the transformations below",
        f"{'transformation':<{width}}" + "".join(f"{h:>11}" for h in heads),
    ]
    for t in names:
        cells = [value[(t, m, c)] for m in MEASURES for c in ("outliers", "inliers")] + [value[(t, HIS, "both")]]
        lines.append(f"{t:<{width}}" + "".join(f"{v:>11.4f}" for v in cells))
    return "\n".join(lines)
