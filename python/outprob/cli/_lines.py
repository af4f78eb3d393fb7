"""Scores as text, one per line (``outprob stream``, ``outprob fit``)."""

from __future__ import annotations

import math
from typing import List, Sequence

import numpy as np

from . import CLIError


def parse(lines: Sequence[str], first_line: int, source: str) -> np.ndarray:
    """The scores of ``lines`` (numbered from ``first_line``): one number per
    line; ``nan`` (a missing score) is kept, anything else that is not a
    finite number is an error naming its line."""
    try:
        x = np.array(lines, dtype=object).astype(np.float64)
    except ValueError:
        x = None  # find the bad line below
    if x is not None and not np.isinf(x).any():
        return x
    for i, text in enumerate(lines):
        where = f"{source}, line {first_line + i}"
        try:
            v = float(text)
        except ValueError:
            shown = text.strip()
            what = "an empty line" if not shown else repr(shown[:40])
            raise CLIError(f"{where}: {what} is not a number (expected one score per line)") from None
        if math.isinf(v):
            raise CLIError(f"{where}: {text.strip()!r} is infinite; fitting needs finite scores "
                           "(write nan for a missing score)")
    raise AssertionError("unreachable")  # pragma: no cover


def read_text(path: str) -> np.ndarray:
    """All scores of a text file, one per line."""
    with open(path, encoding="utf-8") as fh:
        lines: List[str] = fh.readlines()
    return parse(lines, 1, path)
