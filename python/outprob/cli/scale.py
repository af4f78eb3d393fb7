"""Turn a column of outlier scores into outlier probabilities.

Reads a CSV or Parquet table, fits the chosen transformation to the score
column and writes the table with the probabilities as a new column (CSV to
standard output when --out is -). Missing scores stay missing. With --map
the column is mapped by a stored fitted map (outprob fit --map) instead of
a fit: a scoring run that imports neither scikit-learn nor (for CSV)
pandas.

examples:
  outprob scale scores.csv --variant mean_nmad --out probabilities.csv
  outprob scale scores.parquet --score-column lof --variant huber --out p.parquet
  outprob scale new_scores.csv --map fitted.json --out -
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

NAME = "scale"
HELP = "turn a column of outlier scores into outlier probabilities"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", type=Path, help="CSV or Parquet file (.parquet needs outprob[parquet])")
    p.add_argument("--variant", "-v", default="mean_nmad",
                   help="registered transformation (default: mean_nmad; see outprob.VARIANTS)")
    p.add_argument("--out", "-o", required=True, help="output .csv or .parquet file, or - for standard output")
    p.add_argument("--score-column", "-s", help="column of outlier scores (default: the only column)")
    p.add_argument("--output-column", help="name of the new column (default: SCORE_COLUMN_VARIANT, "
                                           "with --map SCORE_COLUMN_p)")
    p.add_argument("--lower-is-outlier", action="store_true", help="lower scores are more outlying")
    p.add_argument("--map", type=Path, metavar="JSON",
                   help="map with this stored fitted map (outprob fit --map) instead of fitting")


def load(path: Path) -> Any:
    """The fitted map stored in a JSON file (``--map``)."""
    from outprob._registry import load_map

    from . import CLIError

    try:
        text = path.read_bytes()
    except OSError as exc:
        raise CLIError(f"--map {path}: {exc.strerror or exc}") from None
    try:
        return load_map(text)
    except ValueError as exc:
        raise CLIError(f"--map {path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    import outprob
    from outprob._common.tables import add_column, columns_of, read_columns

    from . import CLIError

    column = args.score_column
    if column is None:
        names = columns_of(args.table)
        if len(names) != 1:
            raise CLIError(f"{args.table} has {len(names)} columns ({', '.join(names)}): "
                           "name the scores with --score-column")
        column = names[0]
    (scores,) = read_columns(args.table, [column])
    if args.map is not None:
        if args.lower_is_outlier:
            raise CLIError("--lower-is-outlier does not apply to --map: a map keeps the "
                           "orientation it was fitted with")
        p = load(args.map).transform(scores)
        suffix = "p"
    else:
        model = outprob.scaler(args.variant, higher_is_outlier=not args.lower_is_outlier)
        p = model.fit_transform(scores)
        suffix = args.variant
    out = None if args.out == "-" else Path(args.out)
    if out is not None and out.resolve() == args.table.resolve():
        raise CLIError(f"--out {out} would overwrite the input: choose another file")
    if out is not None and not out.parent.is_dir():
        raise CLIError(f"--out {out}: folder {out.parent} does not exist")
    add_column(args.table, out, args.output_column or f"{column}_{suffix}", p)
    return 0
