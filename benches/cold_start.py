#!/usr/bin/env python3
"""Cold start of a scoring process, printed as a table (fresh process per run,
best of ``--repeat``):

    flock /tmp/outprob-bench.lock .venv/bin/python benches/cold_start.py

* ``python -c "import numpy"``: the floor every row below pays.
* ``import outprob`` (lazy), ``outprob --help``.
* ``outprob.load_map(json)`` + ``transform`` of 1000 scores: a scoring
  service that loads a fitted map; then the same through
  ``outprob.from_dict`` (the full scaler, which imports scikit-learn).
* ``outprob stream`` and ``outprob stream --map``: time to the first output
  line on a 2e5-line input (``benches/streaming.py``'s helper).
* ``-X importtime`` of the ``load_map`` row: NumPy's and outprob's shares.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from streaming import _first_line  # noqa: E402

PY = sys.executable


def wall(argv: list[str], repeat: int) -> str:
    """Smallest wall time of ``repeat`` runs and the CPU time (user + system)
    of the run with the smallest CPU time: on a shared machine the CPU time
    is the steadier figure."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = os.times()
        t = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        after = os.times()
        cpus.append(after.children_user - before.children_user
                    + after.children_system - before.children_system)
    return f"{min(walls):.3f} s wall, {min(cpus):.3f} s CPU"


def import_ms(code: str, package: str) -> float | None:
    """Import time (ms) of ``package`` and its submodules in ``python -X
    importtime -c code``: the sum of the cumulative times of the top-level
    import entries that belong to it (None: not imported)."""
    err = subprocess.run([PY, "-X", "importtime", "-c", code], check=True,
                         capture_output=True, text=True).stderr
    top = re.compile(r"^import time:\s*\d+ \|\s*(\d+) \| (\S+)$", re.M)
    times = [int(us) for us, name in top.findall(err)
             if name == package or name.startswith(package + ".")]
    return sum(times) / 1000 if times else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    import outprob

    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        scaler = outprob.scaler("median_nmad").fit(rng.lognormal(size=10_000))
        (tmp / "map.json").write_text(json.dumps(scaler.to_map().to_dict()))
        (tmp / "scaler.json").write_text(json.dumps(scaler.to_dict()))
        np.save(tmp / "batch.npy", rng.lognormal(size=1000))
        lines = tmp / "scores.txt"
        lines.write_text("".join(f"{v!r}\n" for v in rng.lognormal(size=200_000).tolist()))

        load_map = (f"import numpy as np, outprob; m = outprob.load_map(open({str(tmp / 'map.json')!r}).read()); "
                    f"m.transform(np.load({str(tmp / 'batch.npy')!r}))")
        from_dict = (f"import json, numpy as np, outprob; "
                     f"s = outprob.from_dict(json.load(open({str(tmp / 'scaler.json')!r}))); "
                     f"s.transform(np.load({str(tmp / 'batch.npy')!r}))")
        r = args.repeat
        rows.append(('python -c "import numpy"', wall([PY, '-c', 'import numpy'], r)))
        rows.append(("import outprob", wall([PY, '-c', 'import outprob'], r)))
        rows.append(("outprob --help", wall([PY, '-m', 'outprob', '--help'], r)))
        rows.append(("load_map + transform 1000", wall([PY, '-c', load_map], r)))
        rows.append(("from_dict + transform 1000", wall([PY, '-c', from_dict], r)))
        rows.append(("outprob stream, first line",
                     f"{_first_line([PY, '-m', 'outprob', 'stream'], lines, r):.3f} s wall"))
        rows.append(("outprob stream --map, first line",
                     f"{_first_line([PY, '-m', 'outprob', 'stream', '--map', str(tmp / 'map.json')], lines, r):.3f} s wall"))
        for package in ("numpy", "outprob", "sklearn", "pandas", "scipy"):
            ms = import_ms(load_map, package)
            rows.append((f"  load_map row: import of {package}",
                         "not imported" if ms is None else f"{ms:.0f} ms"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
