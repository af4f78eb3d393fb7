"""Reading and writing named numeric columns of CSV and Parquet tables.

CSV needs nothing beyond the standard library; Parquet needs pandas and
pyarrow (the ``parquet`` extra). Errors are ``ValueError`` or ``OSError``
with a message naming the file, the column and, for a bad value, its row.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import numpy as np

__all__ = ["read_table", "read_columns", "write_table", "is_parquet"]

_PARQUET = (".parquet", ".pq")
_MISSING = {"", "na", "nan", "null", "none"}
_BOOL = {"true": 1.0, "false": 0.0}


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in _PARQUET


def _pandas(what: str):  # type: ignore[no-untyped-def]
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(f"{what} needs pandas and pyarrow: pip install 'outprob[parquet]'") from exc
    return pd


def read_table(path: Path) -> Dict[str, List[str]]:
    """Every column of a CSV (header row) or Parquet file as strings
    (Parquet values via ``str``), in file order."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if is_parquet(path):
        frame = _pandas("reading Parquet").read_parquet(path)
        return {str(c): [str(v) for v in frame[c].tolist()] for c in frame.columns}
    with open(path, newline="", encoding="utf-8") as fh:
        sample = fh.read(65536)
        fh.seek(0)
        try:
            dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
        except csv.Error:
            dialect = csv.excel  # one column: nothing to sniff
        reader = csv.reader(fh, dialect)
        header = next(reader, None)
        if not header:
            raise ValueError(f"{path}: empty file, expected a header row with column names")
        header = [h.strip() for h in header]
        columns: Dict[str, List[str]] = {h: [] for h in header}
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(f"{path}, line {line}: {len(row)} fields, the header has {len(header)}")
            for h, v in zip(header, row):
                columns[h].append(v)
    return columns


def _as_float(path: Path, name: str, values: Sequence[str]) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        text = v.strip()
        if text.lower() in _MISSING:
            out[i] = math.nan
            continue
        if text.lower() in _BOOL:
            out[i] = _BOOL[text.lower()]
            continue
        try:
            out[i] = float(text)
        except ValueError:
            raise ValueError(f"{path}, column {name!r}, row {i + 1}: {v!r} is not a number") from None
    return out


def read_columns(path: Path, names: Sequence[Optional[str]]) -> List[np.ndarray]:
    """The named columns of a table as float64 arrays (empty, NA and NaN
    cells are NaN). A name of ``None`` is allowed only for a table of one
    column, which it then selects."""
    table = read_table(path)
    out = []
    for name in names:
        if name is None:
            if len(table) != 1:
                raise ValueError(
                    f"{path} has {len(table)} columns ({', '.join(table)}): name the one to use"
                )
            name = next(iter(table))
        if name not in table:
            raise ValueError(f"{path} has no column {name!r}; its columns: {', '.join(table)}")
        out.append(_as_float(path, name, table[name]))
    return out


def write_table(path: Optional[Path], columns: Dict[str, Sequence[object]]) -> None:
    """Write columns as CSV (``path`` ``None``: standard output) or as
    Parquet for a ``.parquet``/``.pq`` path. Floats are written exactly
    (``repr``)."""
    if path is not None and is_parquet(path):
        pd = _pandas("writing Parquet")
        pd.DataFrame({k: list(v) for k, v in columns.items()}).to_parquet(path, index=False)
        return
    import sys

    names = list(columns)
    rows = zip(*(columns[n] for n in names))
    fh = sys.stdout if path is None else open(path, "w", newline="", encoding="utf-8")
    try:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else v for v in row])
    finally:
        if path is not None:
            fh.close()
