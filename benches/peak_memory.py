"""Peak memory of the fits and of ``transform(out=)`` for ``compare.py``:
each call runs in a fresh subprocess (``compare.py --memory-child``), which
reports its VmHWM (Linux) before and after the call."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

import operations as ops
from operations import MemoryOp, fmt_n


def vm_kib(field_name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field_name} not in /proc/self/status")


def reset_peak() -> bool:
    """Resets VmHWM to the current RSS (Linux >= 4.0); False if refused."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def memory_child(spec: Dict[str, Any]) -> None:
    """In a fresh process: load the scores, set the call up, warm it up on a
    small prefix (libraries, thread pool), then report VmHWM before and
    after the call."""
    x = np.load(spec["path"])
    op = ops.memory_op(spec["op"])
    threads = spec["threads"]
    make = (lambda a: op.ours(a, threads)) if spec["side"] == "ours" else op.baseline
    make(np.ascontiguousarray(x[: 1 << 19]))()
    call = make(x)
    gc.collect()
    was_reset = reset_peak()
    before = vm_kib("VmHWM")
    result = call()
    after = vm_kib("VmHWM")
    del result
    print(json.dumps({"before": before * 1024, "after": after * 1024, "nbytes": x.nbytes, "reset": was_reset}))


@dataclass
class MemoryRow:
    op: MemoryOp
    n: int
    dtype: str
    nbytes: int
    ours: Optional[int] = None  # peak RSS increase, bytes
    base: Optional[int] = None
    note: str = ""
    reset: bool = True

    def verdict(self) -> str:
        if self.ours is None:
            return "–"
        return "yes" if self.ours <= self.op.max_multiple * self.nbytes else "NO"


def run_child(path: str, op: MemoryOp, side: str, threads: int) -> Dict[str, Any]:
    spec = json.dumps({"path": path, "op": op.name, "side": side, "threads": threads})
    # A fixed mmap threshold: large blocks go back to the system when freed,
    # so the warm-up's freed blocks cannot hide the call's allocations.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("compare.py")), "--memory-child", spec],
        capture_output=True, text=True, env=env, cwd=Path(__file__).parent,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "child failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def memory_table(
    n: int, dtypes: Sequence[str], chosen: Sequence[MemoryOp], threads: int, progress: Callable[[str], None]
) -> List[MemoryRow]:
    """Peak RSS increase of each memory operation in ``chosen`` at N = ``n``,
    one fresh subprocess per operation and side."""
    rows: List[MemoryRow] = []
    if not chosen:
        return rows
    with tempfile.TemporaryDirectory(prefix="outprob-bench-") as tmp:
        for dtype in dtypes:
            path = os.path.join(tmp, f"x-{dtype}.npy")
            x, _ = ops.long_tailed_scores(n, dtype)
            np.save(path, x)
            nbytes = x.nbytes
            del x
            for op in chosen:
                row = MemoryRow(op, n, dtype, nbytes)
                try:
                    got = run_child(path, op, "ours", threads)
                    row.ours, row.reset = got["after"] - got["before"], got["reset"]
                    if op.slow_baseline:
                        row.note = "baseline not measured (slow)"
                    else:
                        got = run_child(path, op, "baseline", threads)
                        row.base = got["after"] - got["before"]
                except RuntimeError as e:
                    row.note = f"failed: {e}"
                progress(f"  memory {op.name} N={fmt_n(n)} {dtype}: ours +{mb(row.ours)} MB, baseline +{mb(row.base)} MB")
                rows.append(row)
            os.remove(path)
    return rows


def mb(nbytes: Optional[int]) -> str:
    return "–" if nbytes is None else f"{nbytes / 1e6:.1f}"
