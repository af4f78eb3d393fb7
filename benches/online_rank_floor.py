#!/usr/bin/env python3
"""The floor of `outprob stream --pvalues --alert lord++ --monitor jumper`
(contract §12): what its parts cost per line at 10⁷ lines, against the
≈ 28 ns per line that 1.3× the plain stream leaves.

    .venv/bin/python benches/online_rank_floor.py --lines 1e7

Rows (CPU time of this process, per score):

* **numpy.searchsorted** — an independent reference for any exact online
  rank: each batch of 8192 scores searched once (``side="left"``; the
  count of equal scores would need a second search or a scan) in an
  already sorted array of the earlier scores *at the last whole million*
  (never more than the true earlier scores), nothing inserted, the
  sorting not counted. Queries as they come, and sorted first (the sort
  counted; cache-friendlier). What a static search costs, before any
  insert: not a proof that no structure can do better.
* **outprob online p-values** — ``OnlineConformal(seed=7).pvalues`` on
  the same batches: the exact rank with its inserts, plus θ and the
  division; the SHA-256 of every p-value's bytes (the results files of
  the rank's changes quote it).
* **jumper** — ``Martingale("jumper").update`` on 10⁷ uniform p-values in
  batches of 8192.

The formatting of the added columns is the core stream's own (no binding
of it remains): ``benches/streaming.py --alerts`` measures it inside the
whole command, against the plain stream.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

BATCH = 8192


def cpu(fn):
    t = time.process_time()
    fn()
    return time.process_time() - t


def searchsorted_floor(x, sort_queries):
    """CPU seconds of searching each batch in the sorted earlier scores as
    of the last whole million (the sorted arrays are built untimed)."""
    n = x.size
    step = 1_000_000
    total = 0.0
    for lo in range(step, n, step):
        known = np.sort(x[: lo])  # untimed: a lower bound leaves out the inserts
        block = x[lo: min(lo + step, n)]

        def run():
            for i in range(0, block.size, BATCH):
                q = block[i: i + BATCH]
                if sort_queries:
                    q = np.sort(q)
                np.searchsorted(known, q, side="left")

        total += cpu(run)
    return total, n - step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=float, default=1e7)
    args = ap.parse_args()
    n = int(args.lines)
    import outprob

    x = np.random.default_rng(3).lognormal(size=n)
    rows = []
    for label, sort_queries in (("as they come", False), ("sorted first", True)):
        secs, searched = searchsorted_floor(x, sort_queries)
        rows.append((f"numpy.searchsorted (one side, no inserts), queries {label}", secs / searched * 1e9))

    oc = outprob.OnlineConformal(seed=7)
    digest = hashlib.sha256()
    secs = 0.0
    for i in range(0, n, BATCH):
        t = time.process_time()
        p = oc.pvalues(x[i: i + BATCH])
        secs += time.process_time() - t
        digest.update(p.tobytes())  # untimed
    rows.append(("outprob online p-values (exact rank + inserts)", secs / n * 1e9))
    u = np.random.default_rng(4).uniform(size=n)
    m = outprob.Martingale("jumper", threshold=100.0, on_alarm="restart")

    def jumper():
        for i in range(0, n, BATCH):
            m.update(u[i: i + BATCH])

    rows.append(("jumper martingale (ln M, CUSUM, SR, alarm)", cpu(jumper) / n * 1e9))
    print(f"outprob {outprob.__version__}, numpy {np.__version__}, {n:.0e} lognormal scores, "
          f"batches of {BATCH}")
    for label, ns in rows:
        print(f"  {label:<66} {ns:7.1f} ns/score (CPU)")
    print(f"  SHA-256 of the p-values (seed 7): {digest.hexdigest()}")


if __name__ == "__main__":
    main()
