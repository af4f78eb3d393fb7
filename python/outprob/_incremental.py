"""The incremental half of the scalers (contract §9): ``partial_fit``,
``merge`` and ``refit``, through :class:`outprob.streaming.StreamingFit`
(``_partial``). A mixin of :class:`outprob._base.ScalerBase`; the methods
exist only on scalers whose ``_CAN_STREAM`` is true."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, TypeVar, cast

import numpy.typing as npt

from . import _partial

if TYPE_CHECKING:
    from ._base import ScalerBase

_S = TypeVar("_S", bound="Incremental")
_C = TypeVar("_C")

if TYPE_CHECKING:

    def _if_streamable(method: _C) -> _C:
        return method

else:
    from sklearn.utils.metaestimators import available_if

    # partial_fit/merge/refit exist only on scalers that can stream: tools
    # that probe for partial_fit (scikit-learn's checks, incremental
    # learners) must not find it on the others.
    _if_streamable = available_if(lambda est: est._CAN_STREAM)


class Incremental:
    """``partial_fit``, ``merge``, ``refit`` and the hooks they call."""

    #: Whether the scaler implements partial_fit/merge/refit (contract §9).
    _CAN_STREAM = False

    @_if_streamable
    def partial_fit(self: _S, X: npt.ArrayLike, y: Any = None) -> _S:
        """Fits the scaling incrementally: adds a batch of scores.

        After each call the fitted attributes describe every score seen
        since the first ``partial_fit`` (or, with ``window=W``, the newest
        W of them), as ``fit`` on their concatenation would (contract §9):

        * mean, SD, min and max exactly (the mean bit for bit, the SD
          within 1e-15 relative, min/max exactly), whatever the batches;
        * order statistics (median, quantiles, trimmed mean, nMAD, nIQR,
          trimmed SD) from a KLL quantile sketch of size ``k`` (rank error
          ε(800) = 0.345 %), with guaranteed intervals for μ and σ in
          ``center_interval_``/``scale_interval_``, the sketch's
          ``rank_error_`` and the implied bound ``probability_error_`` on
          |p̂ − p| over all scores; M-estimates from the sketch (no
          interval);
        * with ``window=W``: exactly the in-memory fit of the newest W
          scores, refitted every ``refit_every`` scores (default: every
          call) or by :meth:`refit`.

        Each batch obeys contract §5 on its own (NaN omitted or refused,
        ±inf refused): a refused batch changes nothing. ``fit`` starts
        afresh and keeps no streaming state (except with ``window``, where
        ``fit(X)`` is a fresh ``partial_fit(X)``).

        Parameters
        ----------
        X : array_like, shape (n,) or (n, k)
            A batch of scores, of the kind (1-D, or k columns with the same
            names) of the first batch.
        y : ignored

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np, outprob
        >>> s = outprob.GaussianScaler("mean", "std")
        >>> for batch in np.array_split(np.arange(10.0), 3):
        ...     _ = s.partial_fit(batch)
        >>> float(s.center_), s.n_samples_seen_
        (4.5, 10)
        """
        _partial.partial_fit(cast("ScalerBase", self), X, 3)
        return self

    @_if_streamable
    def merge(self: _S, other: _S) -> _S:
        """Adds the scores another scaler saw through ``partial_fit``.

        For workers that fit shards of one stream: afterwards this scaler
        is fitted on both parts' scores (exact statistics exactly, sketch
        statistics from the merged sketches, with their bounds). Both
        scalers need the same parameters and kind of scores; windowed
        scalers do not merge.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np, outprob
        >>> a = outprob.LinearScaler().partial_fit(np.array([1.0, 5.0]))
        >>> b = outprob.LinearScaler().partial_fit(np.array([-2.0, 3.0]))
        >>> float(a.merge(b).min_), float(a.max_)
        (-2.0, 5.0)
        """
        _partial.merge(cast("ScalerBase", self), cast("ScalerBase", other))
        return self

    @_if_streamable
    def refit(self: _S) -> _S:
        """Refits a ``window`` scaler on its newest scores now (other
        incremental fits are always current).

        Returns
        -------
        self
        """
        _partial.refit(cast("ScalerBase", self))
        return self

    def _stream_params(self) -> Dict[str, Any]:
        """The :class:`outprob.streaming.StreamingFit` parameters of
        ``partial_fit``; scalers that cannot be fitted incrementally raise
        ``TypeError`` here."""
        raise TypeError(
            f"{type(self).__name__} cannot be fitted incrementally (partial_fit, merge): "
            "fit it on all scores at once with fit()"
        )

    def _check_streamable(self, supported: Tuple[str, ...]) -> None:
        """Refuses parameters ``partial_fit`` does not implement: any
        parameter outside ``supported`` must keep its default."""
        defaults = _parameter_defaults(type(self))
        for name, value in self.get_params(deep=False).items():
            if name not in supported and not _same(value, defaults.get(name)):
                raise TypeError(
                    f"{type(self).__name__}({name}={value!r}) cannot be fitted incrementally "
                    f"(partial_fit, merge): fit it on all scores at once with fit()"
                )

    def _stream_column(self, result: Any, column: Optional[int]) -> Tuple[Dict[str, Any], List[Tuple[type, str]]]:
        """Fitted attributes of one column from a streaming result, and the
        warnings to emit."""
        raise NotImplementedError

    if TYPE_CHECKING:  # provided by scikit-learn's BaseEstimator

        def get_params(self, deep: bool = True) -> Dict[str, Any]: ...


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a is b or a == b)
    except (TypeError, ValueError):  # arrays and the like: not a default
        return False


def _parameter_defaults(cls: type) -> Dict[str, Any]:
    """Constructor parameters and their defaults (pickles of older versions
    lack the parameters added since, which take their defaults)."""
    import inspect

    sig = inspect.signature(cls.__init__)  # type: ignore[misc]
    return {
        name: p.default
        for name, p in sig.parameters.items()
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }
