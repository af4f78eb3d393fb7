"""Edits of stored state, for the tests that hand a tampered ``to_dict()``
to ``from_dict``/``load_map`` (contract §5: stored state is untrusted, every
field checked)."""

from __future__ import annotations

import copy
from typing import Any, Sequence


def edited(d: dict, path: Sequence[Any], value: Any) -> dict:
    """A deep copy of ``d`` with the field at ``path`` (keys from the top)
    set to ``value``; ``d`` itself is left as it was."""
    d = copy.deepcopy(d)
    target = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return d
