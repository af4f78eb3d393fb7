"""The latency paths' caches of the scalers, a mixin of
:class:`outprob._base.ScalerBase`.

``_fast`` = (state, transformer, threads): what ``transform``'s latency path
needs, made when a fit is published (never by ``transform``, which leaves
``__dict__`` as it was). ``_plan``: the extension's fused fit and
transform with the checked parameters, for ``fit_transform``'s latency
path on 1-D float arrays. A parameter or output setting assigned after a
fit drops ``_fast`` until the next fit (the general path applies it meanwhile); a parameter
also drops ``_plan``. Neither is pickled (``_persist.pickled``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, ClassVar, Dict, List, Optional, Tuple

import numpy as np

from ._input import check_threads
from ._output import global_transform_output
from ._persist import State

Notes = List[Tuple[type, str]]


class LatencyCaches:
    """Publishing a planned fit, and keeping the caches current."""

    if TYPE_CHECKING:
        _PAIR: ClassVar[Tuple[str, str]]
        higher_is_outlier: bool
        threads: Optional[int]

        def _plain_map(self) -> bool: ...
        def _output(self, result: Any, X: Any, state: State) -> Any: ...

    def _publish_planned(self, fit: Any, result: np.ndarray, transformer: Any, X: np.ndarray) -> Any:
        """Publishes a fit made by the extension's fused fit (the latency
        path of ``fit_transform``: 1-D float arrays) and returns ``result``
        as ``fit_transform`` does."""
        attributes, notes = self._planned_attributes(fit)
        for category, message in notes:
            # Level 3: the caller of fit_transform().
            warnings.warn(message, category, stacklevel=3)
        a, b = self._PAIR
        state = State(
            attributes, 1, 1, None, not self.higher_is_outlier,
            [attributes[a]], [attributes[b]], transformer,
        )
        attributes = self.__dict__
        # As `self._state = state` (see __setattr__), without its cost.
        attributes["_state"] = state
        if "_sklearn_output_config" in attributes:
            attributes.pop("_fast", None)
        else:
            # What _cache_fast would find: a plan exists only for a plain map
            # of a name-less fit with checked threads; its checks cost 0.3 µs
            # of this 2–3.5 µs path.
            threads = self.threads
            attributes["_fast"] = (state, transformer, 0 if threads is None else threads)
        attributes.pop("_stream", None)
        if "_sklearn_output_config" not in attributes and global_transform_output() == "default":
            return result
        return self._output(result, X, state)

    def _fit_plan(self) -> Any:
        """The extension's fused fit and transform of this scaler's
        parameters (called with the scores), or False
        where ``fit_transform`` of a 1-D array needs the general path
        (subclass hook)."""
        return False

    def _planned_attributes(self, fit: Any) -> Tuple[Dict[str, Any], Notes]:
        """The fitted attributes and warnings of a fused fit (as
        ``_fit_column`` gives them for a 1-D fit)."""
        raise NotImplementedError

    def __setattr__(self, name: str, value: Any) -> None:
        attributes = self.__dict__
        # The latency caches: `_fast`, what transform's latency path needs,
        # made when a fit is published; `_plan`, the checked parameters of
        # fit_transform's. A parameter or output setting set after the fit
        # drops `_fast` until the next fit (the general path applies it),
        # and a parameter drops `_plan`. They are made when a fit is
        # published, never by transform, which leaves __dict__ as it was.
        attributes.pop("_fast", None)
        if name[0] != "_":
            attributes.pop("_plan", None)
        object.__setattr__(self, name, value)
        if name == "_state":
            self._cache_fast(value)

    def _cache_fast(self, state: Optional[State]) -> None:
        """Sets `_fast` = (state, transformer, threads) when transform may
        map plain float arrays by ``state.transformer`` alone; `state` in
        it keeps a fit published meanwhile by another thread from being
        mapped with this one's parameters."""
        attributes = self.__dict__
        if (
            state is None or state.names is not None or state.transformer is None
            or "_sklearn_output_config" in attributes or not self._plain_map()
        ):
            return
        threads = self.threads
        try:
            attributes["_fast"] = (state, state.transformer, 0 if threads is None else check_threads(threads))
        except (TypeError, ValueError):
            pass  # the general path explains
