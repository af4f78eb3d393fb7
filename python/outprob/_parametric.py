"""Scalers of contract §10 whose fitted state is a few numbers per column
(top-k, sigmoid, mixture): the core's ``transform_params`` applies them."""

from __future__ import annotations

from typing import Any, ClassVar, List, Optional, Tuple

import numpy as np

from . import _core
from ._base import ScalerBase
from ._input import check_out, check_threads
from ._persist import State


class ParametricScaler(ScalerBase):
    """A :class:`ScalerBase` applied by ``_core.transform_params``."""

    #: The fitted attributes the core takes, in its order.
    _PARAMS: ClassVar[Tuple[str, ...]]

    def _rows(self, state: State) -> List[List[float]]:
        columns = [np.atleast_1d(np.asarray(state.attributes[n], dtype=float)) for n in self._PARAMS]
        return [list(map(float, row)) for row in zip(*columns)]

    def _apply(self, state: State, x: np.ndarray, out: Optional[np.ndarray]) -> Any:
        if out is None:
            out = np.empty_like(x)
        else:
            check_out(out, x)
            if np.shares_memory(out, x):
                x = x.copy()
        _core.transform_params(
            x, out, kind=self._KIND, params=self._rows(state), negate=state.negate,
            threads=check_threads(self.threads),
        )
        return out if out.ndim else out[()]

    def _restore(self, fitted: Any, ndim: Any, names: Any, negate: bool) -> State:
        state = super()._restore(fitted, ndim, names, negate)
        missing = [n for n in self._PARAMS if n not in state.attributes]
        if missing:
            raise ValueError(f"the fitted attributes {missing} are missing")
        # The core checks every parameter (finite, in its domain): one probe
        # transform per restored state.
        probe = np.zeros(state.n_features if state.ndim == 2 else 1)
        _core.transform_params(
            probe, np.empty_like(probe), kind=self._KIND, params=self._rows(state), negate=False,
            threads=1,
        )
        return state
