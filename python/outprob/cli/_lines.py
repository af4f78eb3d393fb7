"""Scores as text, one per line (``outprob fit``): read by the extension's
line reader, the one ``outprob stream`` uses (contract §9, "Command line")."""

from __future__ import annotations

import numpy as np

from . import CLIError


def read_text(path: str) -> np.ndarray:
    """All scores of a text file, one per line; ``nan`` (a missing score) is
    kept, any other line that is not a finite number is an error naming its
    line."""
    from outprob import _core

    reader = _core.LineReader()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            reader.feed(block)
    reader.finish()
    _, x, bad = reader.take(reader.pending())
    if bad:
        raise CLIError(f"{path}, {bad[0][1]}")
    return x
