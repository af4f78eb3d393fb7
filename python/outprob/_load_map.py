"""Reading a stored fitted map (contract §7, "Fitted maps"): the JSON of
:meth:`FittedMap.to_dict`, or a fitted scaler's ``to_dict`` through its
scaler class."""

from __future__ import annotations

import json
from typing import Any, Dict, Union

from ._map import FORMAT, FittedMap, read_map

__all__ = ["load_map"]


def load_map(blob: Union[str, bytes, Dict[str, Any]]) -> FittedMap:
    """The fitted map stored by :meth:`FittedMap.to_dict` (or printed by
    ``outprob fit --map``).

    Parameters
    ----------
    blob : str, bytes or dict
        The JSON text, or the dict it parses to. It is untrusted: anything
        but a valid map (a wrong format or version, missing or non-finite
        parameters, ...) raises ``ValueError``. A fitted scaler's
        ``to_dict`` (``outprob fit`` without ``--map``) is read too, through
        :func:`outprob.from_dict` and so with scikit-learn's import time.

    Returns
    -------
    FittedMap

    Examples
    --------
    >>> import outprob
    >>> text = '''{"format": "outprob.FittedMap", "version": 1, "map": {"kind": "linear",
    ...   "negate": false, "two_d": false, "pretransform": null,
    ...   "params": {"min": [0.0], "max": [4.0]}, "sorted": null}}'''
    >>> outprob.load_map(text).transform([1.0, 5.0])
    array([0.25, 1.  ])
    """
    data = json.loads(blob) if isinstance(blob, (str, bytes, bytearray)) else blob
    form = data.get("format") if isinstance(data, dict) else None
    if isinstance(form, str) and form.startswith("outprob.") and form != FORMAT:
        # A fitted scaler's to_dict: its map, by way of the scaler class
        # (imported here, so that a stored map is read without
        # scikit-learn).
        from ._scalers import from_dict

        return from_dict(data).to_map()
    return read_map(data)
