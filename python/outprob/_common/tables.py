"""Named numeric columns of CSV and Parquet tables, in and out.

CSV needs only the standard library; Parquet needs pandas and pyarrow (the
``parquet`` extra). Errors are ``ValueError`` or ``FileNotFoundError`` with
a message naming the file, the column and, for a bad value, its row.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .optional import require

__all__ = ["columns_of", "read_columns", "add_column", "is_parquet", "csv_header", "not_utf8"]

_PARQUET = (".parquet", ".pq")
_MISSING = {"", "na", "nan", "null", "none"}
_BOOL = {"true": 1.0, "false": 0.0}


def is_parquet(path: Optional[Path]) -> bool:
    return path is not None and path.suffix.lower() in _PARQUET


def _pandas(what: str) -> Any:
    return require("pandas", what, "parquet")


def _check(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")


class _Duplicate(ValueError):
    """Two columns of one name."""


def _check_unique(path: Path, names: Sequence[str]) -> None:
    """Columns are found by name: two of one name would be read as one."""
    seen: Dict[str, int] = {}
    for i, name in enumerate(names, start=1):
        if name in seen:
            raise _Duplicate(f"{path}: columns {seen[name]} and {i} are both named {name!r}; "
                             "rename one (columns are chosen by name)")
        seen[name] = i


def not_utf8(path: Path) -> ValueError:
    """The error for a CSV file that is not UTF-8, naming its first bad line
    and byte (the codec's own message names neither the file nor the line).
    Lines are split on the byte ``\n``, which UTF-8 never uses inside a
    character."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return ValueError(
                    f"{path}, line {number}: byte {exc.start + 1} (0x{raw[exc.start]:02x}) is not "
                    "UTF-8; CSV files are read as UTF-8: save it as UTF-8 (e.g. iconv -f latin1 "
                    "-t utf-8)")
    return ValueError(f"{path}: not UTF-8; CSV files are read as UTF-8")


def csv_dialect(path: Path) -> Any:
    """The CSV dialect of a file: its delimiter sniffed among ``,``, ``;``
    and tab (every reader of a CSV file uses it: in memory, Dask, Spark)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            sample = fh.read(65536)
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        return csv.excel  # a single column: nothing to sniff


def _header(path: Path, reader: Any) -> List[str]:
    header = [h.strip() for h in next(reader, [])]
    if not header:
        raise ValueError(f"{path}: empty file, expected a header row with column names")
    _check_unique(path, header)
    return header


def csv_header(path: Path) -> Tuple[List[str], Any]:
    """The column names of a CSV file (checked: present, unique) and its
    dialect."""
    _check(path)
    dialect = csv_dialect(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            return _header(path, csv.reader(fh, dialect)), dialect
    except UnicodeDecodeError:
        raise not_utf8(path) from None


def _read_csv(path: Path) -> Dict[str, List[str]]:
    # utf-8-sig: a byte order mark (as spreadsheet programs write) is not
    # part of the first column's name.
    dialect = csv_dialect(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.reader(fh, dialect)
            header = _header(path, reader)
            table: Dict[str, List[str]] = {h: [] for h in header}
            for line, row in enumerate(reader, start=2):
                if not row:
                    continue
                if len(row) != len(header):
                    raise ValueError(f"{path}, line {line}: {len(row)} fields, the header has {len(header)}")
                for h, v in zip(header, row):
                    table[h].append(v)
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    return table


def _read_parquet(path: Path) -> Any:
    pd = _pandas("reading Parquet")
    pq = require("pyarrow.parquet", "reading Parquet", "parquet")

    try:
        names = [str(c) for c in pq.read_schema(path).names]
        _check_unique(path, names)
        return pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors for a file that is not Parquet
        if isinstance(exc, _Duplicate):
            raise
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from None


def _as_float(path: Path, name: str, values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, v in enumerate(values):
        text = str(v).strip().lower()
        if text in _MISSING:
            out[i] = math.nan
        elif text in _BOOL:
            out[i] = _BOOL[text]
        else:
            try:
                out[i] = float(text)
            except ValueError:
                raise ValueError(f"{path}, column {name!r}, row {i + 1}: {v!r} is not a number") from None
    return out


def columns_of(path: Path, *, parquet: Optional[bool] = None) -> List[str]:
    """The column names of a table (Parquet if ``parquet``, by default if
    its suffix says so; else CSV)."""
    _check(path)
    if is_parquet(path) if parquet is None else parquet:
        return [str(c) for c in _read_parquet(path).columns]
    return list(_read_csv(path))


def read_columns(
    path: Path, names: Sequence[Optional[str]], *, parquet: Optional[bool] = None
) -> List[np.ndarray]:
    """The named columns as float64 arrays (empty, NA and NaN cells are NaN;
    true/false are 1/0). ``None`` selects the only column of a one-column
    table. Parquet as for :func:`columns_of`."""
    _check(path)
    if is_parquet(path) if parquet is None else parquet:
        frame = _read_parquet(path)
        table: Mapping[str, Sequence[Any]] = {str(c): frame[c].tolist() for c in frame.columns}
    else:
        table = _read_csv(path)
    if not len(next(iter(table.values()), [])):
        raise ValueError(f"{path} has no rows: a header and no scores")
    out = []
    for name in names:
        if name is None:
            if len(table) != 1:
                raise ValueError(f"{path} has {len(table)} columns ({', '.join(table)}): name the one to use")
            name = next(iter(table))
        if name not in table:
            raise ValueError(f"{path} has no column {name!r}; its columns: {', '.join(table)}")
        out.append(_as_float(path, name, table[name]))
    return out


def add_column(src: Path, dst: Optional[Path], name: str, values: np.ndarray) -> None:
    """Write the table ``src`` with one more column ``name`` to ``dst``
    (``None``: CSV on standard output). CSV cells are copied as they are and
    the new floats written exactly (``repr``); with Parquet on either side
    pandas reads and writes, keeping the column types."""
    _check(src)
    if is_parquet(src) or is_parquet(dst):
        pd = _pandas("Parquet")
        frame = _read_parquet(src) if is_parquet(src) else pd.read_csv(src, sep=None, engine="python",
                                                                             encoding="utf-8-sig")
        frame[name] = values
        if dst is None:
            frame.to_csv(sys.stdout, index=False, float_format="%.17g")
        elif is_parquet(dst):
            frame.to_parquet(dst, index=False)
        else:
            frame.to_csv(dst, index=False, float_format="%.17g")
        return
    table = _read_csv(src)
    if name in table:
        raise ValueError(f"{src} already has a column {name!r}: choose another output column name")
    table[name] = [repr(float(v)) for v in values]
    fh = sys.stdout if dst is None else open(dst, "w", newline="", encoding="utf-8")
    try:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(list(table))
        writer.writerows(zip(*table.values()))
    finally:
        if dst is not None:
            fh.close()
