#!/usr/bin/env python3
"""Per-call latency of small batches against the size sweep's goals.

    python benches/latency.py --markdown          # the goals' table
    python benches/latency.py --quick

Measures, with the timing of ``compare.py`` (alternating runs against the
NumPy expression, medians, garbage collector off): ``transform`` of 1, 10,
100 and 1000 scores by a fitted ``mean_nmad`` scaler; ``fit_transform`` of
100 scores by a scaler made beforehand; and
``outprob.scaler(name).fit_transform`` of 100 scores with the construction
included. The goals (``GOALS``) are checked in the table, not asserted.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

import baselines
import compare
import sweep
from operations import Case

import outprob

#: µs per call the size sweep asks for: transform of 1 and of 100 scores,
#: ``outprob.scaler(name).fit_transform`` of 100 (construction included).
GOALS = {"transform, 1 score(s)": 0.7, "transform, 100 score(s)": 1.0, "scaler": 4.0}

Call = Tuple[str, Callable[[], object], str, Callable[[], object]]


def goal(label: str) -> Optional[float]:
    if label.startswith("outprob.scaler("):
        return GOALS["scaler"]
    return GOALS.get(label)


def calls(args: object) -> List[Call]:
    case = Case.make(max(sweep.BATCHES), "float64")
    fitted = outprob.scaler("mean_nmad").fit(case.x)
    mu, sigma = float(fitted.center_), float(fitted.scale_)
    out: List[Call] = []
    for m in sweep.BATCHES:
        x = np.ascontiguousarray(case.x[:m])
        out.append((f"transform, {m} score(s)", lambda x=x: fitted.transform(x),
                    "np.maximum(0, erf(...))", lambda x=x: sweep._numpy_transform(x, mu, sigma)))
    x100 = np.ascontiguousarray(case.x[:100])
    for name in outprob.VARIANTS:
        if name in ("huber", "tukey") or not compare.selected(name, args.only):  # type: ignore[attr-defined]
            continue
        s = outprob.scaler(name)
        base = lambda name=name: baselines.variant_fit_transform(name, x100)  # noqa: E731
        out.append((f"fit_transform {name}, 100 scores", lambda s=s: s.fit_transform(x100), "NumPy/SciPy", base))
        out.append((f"outprob.scaler({name!r}).fit_transform, 100 scores",
                    lambda name=name: outprob.scaler(name).fit_transform(x100), "NumPy/SciPy", base))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = sweep.parse_args(argv)
    started = time.perf_counter()
    cells = []
    for label, ours, base_name, base in calls(args):
        a, b = compare.measure_pair(compare._plan(ours, args), compare._plan(base, args), args)
        us = a.seconds * 1e6
        g = goal(label)
        met = "–" if g is None else ("yes" if us <= g else "NO")
        compare.progress(f"  {label}: ours {us:.2f} µs, {base_name} {b.seconds * 1e6:.2f} µs")
        cells.append([label, f"{us:.2f}", "–" if g is None else f"{g:g}", met, base_name,
                      f"{b.seconds * 1e6:.2f}", compare.ratio_text(b.seconds / a.seconds)])
    headers = ["call", "ours µs/call", "goal µs", "met?", "baseline", "baseline µs/call", "ratio (baseline/ours)"]
    out = ["# outprob per-call latency: " + " ".join(["latency.py", *(argv if argv is not None else sys.argv[1:])])]
    out += compare.machine_info()
    out += ["", compare.render(headers, cells, args.markdown), "",
            f"wall time: {time.perf_counter() - started:.0f} s"]
    print("\n".join(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
