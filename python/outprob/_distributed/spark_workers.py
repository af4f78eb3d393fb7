"""What Spark's Python workers lack (contract §9, "Spark").

A pass of ``outprob.spark`` runs in the Python workers of Spark's
executors, which may run another interpreter than the driver's
(``spark.pyspark.python``, ``PYSPARK_PYTHON``). When that interpreter
cannot import ``outprob`` or ``pyarrow``, Spark reports the worker's
traceback wrapped in its own; :func:`lacking` turns it into one line that
names the interpreter and what it lacks.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

# A module the workers could not import, as Python and PySpark word it.
_MISSING = re.compile(
    r"No module named '(outprob|pyarrow)[.']"
    r"|import of (outprob|pyarrow)\b"
    r"|(PyArrow) >= \S+ must be installed"
)


def worker_python(session: Any) -> str:
    """The interpreter the session's Python workers run."""
    try:
        return str(session.sparkContext.pythonExec)
    except Exception:  # Spark Connect: no SparkContext on the client
        return (session.conf.get("spark.pyspark.python", None)
                or os.environ.get("PYSPARK_PYTHON") or "python3")


def lacking(exc: BaseException, session: Any) -> Optional[ImportError]:
    """One line saying which interpreter Spark's workers run and what it
    cannot import, when that is why a Spark job failed (None otherwise)."""
    m = _MISSING.search(str(exc))
    if m is None:
        return None
    module = next(g for g in m.groups() if g).lower()
    return ImportError(
        f"Spark's Python workers run {worker_python(session)!r}, which cannot import "
        f"{module}: install outprob[spark] in that interpreter, or set spark.pyspark.python "
        "(PYSPARK_PYTHON) to an interpreter that has it")
