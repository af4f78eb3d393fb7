"""What a run ran on: versions, machine, load."""

from __future__ import annotations

import os
import platform
import sys
from typing import Dict, Optional

__all__ = ["PACKAGES", "environment", "load_average"]

PACKAGES = ("outprob", "numpy", "scipy", "scikit-learn", "pyod", "numba", "pandas", "matplotlib", "tqdm")


def _version(name: str) -> Optional[str]:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - not installed
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> Optional[float]:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def load_average() -> Optional[float]:
    """The 1-minute load average (other work sharing the cores), if known."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def environment() -> Dict[str, object]:
    """Versions of Python and the packages of the study, and the machine."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "packages": {p: _version(p) for p in PACKAGES},
    }
