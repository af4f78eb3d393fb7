"""Contract §9 ("Command line") and §12 ("outprob stream: p-values,
alerts, a monitor"): ``outprob stream`` writes, byte for byte, what it
wrote before its windowed and stored-map paths joined the core's stream
loop — under every fit (sketch, ``--window`` with and without
``--refit-every``, linear, an M-estimate, ``--map``), every set of online
columns, every row layout and every ``--on-error``. The oracle is golden
output: the digests in ``tests/data/stream_goldens.json`` were written by
this file's ``__main__`` with the Python batch loop over the public parts
(``OnlineConformal``, ``OnlineFDR``, ``Martingale``, ``StreamingFit``,
``FittedMap``) of main at 3dfaa2d, before that loop was removed."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
GOLDENS = DATA / "stream_goldens.json"
MAP = DATA / "stream_map.json"


def inputs() -> dict:
    rng = np.random.default_rng(11)
    x = np.round(rng.lognormal(size=700), 3)  # ties included
    x[rng.uniform(size=x.size) < 0.03] += 20
    lines = [repr(float(v)) for v in x]
    lines[5], lines[300], lines[301] = "nan", "nan", "bad"
    lines[450] = ""
    return {"lines": "\n".join(lines) + "\n",
            "ids": "".join(f"r{i}\t{v}\n" for i, v in enumerate(lines)),
            "csv": "name;score\n" + "".join(f"n{i};{v}\n" for i, v in enumerate(lines))}


LAYOUTS = {"lines": [], "ids": ["--id"], "csv": ["--csv-column", "score"]}
FITS = {
    "sketch": [],
    "window": ["-v", "median_nmad", "--window", "50", "--refit-every", "30"],
    "window-every-batch": ["-v", "huber", "--window", "120"],
    "window-linear": ["-v", "linear", "--window", "100"],
    "map": ["--map", str(MAP)],
}
FLAGS = {
    "none": [],
    "pvalues": ["--pvalues"],
    "all": ["--pvalues", "--alert", "lord++", "--alpha", "0.2", "--monitor", "jumper",
            "--alarm", "5"],
    "lower": ["--alert", "saffron", "--monitor", "mixture", "--seed", "9", "--lower-is-outlier"],
    "power": ["--monitor", "power", "--alarm", "3", "--alert", "addis"],
}


def argv(fit: str, flags: str, layout: str, on_error: str) -> list:
    return [*FITS[fit], *FLAGS[flags], *LAYOUTS[layout], "--on-error", on_error,
            "--flush-every", "97"]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def run(text: str, args: list) -> dict:
    r = subprocess.run([sys.executable, "-m", "outprob", "stream", *args], input=text,
                       capture_output=True, text=True, timeout=120, check=False, cwd=DATA)
    return {"returncode": r.returncode, "lines": len(r.stdout.splitlines()),
            "stdout": digest(r.stdout), "stderr": digest(r.stderr.replace(str(MAP), "MAP"))}


ERRORS = ("nan", "skip", "stop")
#: (fit, the flag sets, layouts, --on-error values): every combination of each row.
GRID = [
    ("sketch", ["pvalues", "all", "lower", "power"], LAYOUTS, ERRORS),
    ("window", ["none", "all", "lower"], LAYOUTS, ERRORS),
    ("window-every-batch", ["none", "power"], ["lines", "ids"], ["nan", "skip"]),
    ("window-linear", ["none", "all"], LAYOUTS, ["nan", "stop"]),
    ("map", ["none", "pvalues", "all", "power"], LAYOUTS, ERRORS),
    ("map", ["lower"], ["lines"], ["nan"]),  # --lower-is-outlier does not apply
]
CASES = [(f, g, lay, e) for f, gs, lays, es in GRID for g in gs for lay in lays for e in es]


def key(case: tuple) -> str:
    return "/".join(case)


@pytest.fixture(scope="module")
def goldens() -> dict:
    data = json.loads(GOLDENS.read_text())
    # The inputs are the ones the goldens were written from.
    assert data["inputs"] == {k: digest(v) for k, v in inputs().items()}
    return data["outputs"]


@pytest.mark.parametrize("case", CASES, ids=key)
def test_output_is_the_batch_loops(goldens, case):
    fit, flags, layout, on_error = case
    got = run(inputs()[layout], argv(*case))
    assert got == goldens[key(case)]


def main() -> None:
    """Writes the goldens (run with main's outprob, before the change)."""
    import outprob

    x = np.array([float(v) for v in inputs()["lines"].split()[:280] if v != "nan"])
    MAP.write_text(json.dumps(outprob.scaler("median_nmad").fit(x).to_map().to_dict()) + "\n")
    outputs = {key(c): run(inputs()[c[2]], argv(*c)) for c in CASES}
    GOLDENS.write_text(json.dumps({"inputs": {k: digest(v) for k, v in inputs().items()},
                                   "outputs": outputs}, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
