"""Reading standard input for ``outprob stream`` and reporting its bad
lines (contract §9, "Command line"): shared by the plain stream and the
stream with p-values, alerts and a monitor (``_stream_alerts``). Imports
nothing of outprob."""

from __future__ import annotations

import warnings
from typing import Any, Callable, List, Tuple

#: Bad lines reported one by one before only their count is.
SHOWN = 10
#: Bytes read from standard input at a time.
_READ = 1 << 20


def _reader(inp: Any) -> Callable[[], bytes]:
    """Reads what is there (up to 1 MiB) as bytes; b"" at the end."""
    raw = getattr(inp, "buffer", None)
    if raw is not None and hasattr(raw, "read1"):
        return lambda: bytes(raw.read1(_READ))
    return lambda: inp.read(_READ).encode()


class _Report:
    """Warnings for bad lines: the first SHOWN one by one, then a count."""

    def __init__(self, on_error: str) -> None:
        self.fate = {"nan": "its probability is nan", "skip": "skipped (no output line)",
                     "stop": ""}[on_error]
        self.count = 0

    def add(self, bad: List[Tuple[int, str]]) -> None:
        if not self.fate:
            return
        for _, message in bad[: max(0, SHOWN - self.count)]:
            _warn(f"standard input, {message}; {self.fate}")
        self.count += len(bad)

    def close(self) -> int:
        if self.count > SHOWN:
            _warn(f"{self.count} bad lines in all ({SHOWN} shown)")
        return 0


def _warn(message: str) -> None:
    warnings.showwarning(message, UserWarning, "", 0)  # printed on one line by outprob.cli.main
