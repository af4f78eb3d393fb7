"""``DecayedFit``: exponentially decayed moments and order statistics (§12 "Decayed fit")."""

from __future__ import annotations

import base64
from typing import Any, Dict, Union

import numpy as np
import numpy.typing as npt

from .. import _core
from .._common.public import public
from .._common.validation import check_count, check_real
from .stored import VERSION, PickledAsDict, one_d, param, seed_value, stored

FORMAT = "outprob.DecayedFit"
#: 1/Φ⁻¹(3/4) and Φ⁻¹(3/4) − Φ⁻¹(1/4) (contract §2).
NMAD_FACTOR = 1.482602218505602
NIQR_DIVISOR = 1.3489795003921634


@public("outprob")
class DecayedFit(PickledAsDict):
    r"""Moments and order statistics of a stream in which each score's
    weight halves every ``half_life`` scores.

    After n scores the i-th (0-based) weighs
    :math:`w_i = 2^{-(n-1-i)/h}`. The weighted mean and variance
    (:math:`\sum_i w_i (x_i-\mu)^2/\sum_i w_i`) are exact; quantiles come
    from one KLL sketch per epoch of :math:`\lceil h/m \rceil` scores, each
    epoch's total weight exact, and are exact quantiles of the decayed
    distribution to within ``rank_error`` in rank (contract §12).

    Parameters
    ----------
    half_life : float
        h, in scores, in [1, 2**40].
    epochs_per_half_life : int, default 8
        m in [1, 1024]: the share error of an epoch is about 0.087/m.
    horizon : int, default 20
        Epochs older than this many half-lives are dropped (their weight
        share is at most :math:`2^{-H}/(1-2^{-H})`).
    k : int, default 200
        KLL size of each epoch's sketch.
    seed : int, default 0
        The sketches' compaction coins.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> f = outprob.DecayedFit(half_life=100).update(np.r_[np.zeros(1000), np.ones(1000)])
    >>> round(f.mean, 3), f.median   # the 1,000 zeros weigh 2**-10 of the total
    (0.999, 1.0)
    """

    def __init__(self, half_life: float, *, epochs_per_half_life: int = 8, horizon: int = 20,
                 k: int = 200, seed: int = 0) -> None:
        # The bounds are the core's (§5's table); Python checks a Python int
        # of any size against them before it crosses.
        self._params: Dict[str, Any] = {
            "half_life": check_real(half_life, "half_life"),
            "epochs_per_half_life": check_count(epochs_per_half_life, "epochs_per_half_life"),
            "horizon": check_count(horizon, "horizon"),
            "k": check_count(k, "sketch_k"),
            "seed": seed_value(seed),
        }
        self._state: _core.DecayedFitState = _core.DecayedFitState(**self._params)

    def update(self, scores: npt.ArrayLike) -> "DecayedFit":
        """Adds scores in arrival order (NaN skipped; a batch holding ±inf
        is refused whole with ``ValueError``); returns self."""
        self._state.update(one_d(scores, "scores"))
        return self

    def _moments(self) -> _core.DecayedMoments:
        m = self._state.moments()
        if m is None:
            raise ValueError("the decayed fit has no scores yet")
        return m

    @property
    def n(self) -> int:
        """Scores seen (NaN excluded)."""
        m = self._state.moments()
        return 0 if m is None else int(m.n)

    @property
    def weight(self) -> float:
        r""":math:`W = \sum_i w_i = (1-\rho^n)/(1-\rho)`, :math:`\rho = 2^{-1/h}`."""
        return self._moments().weight

    @property
    def mean(self) -> float:
        r""":math:`\sum_i w_i x_i / W` (exact)."""
        return self._moments().mean

    @property
    def std(self) -> float:
        r""":math:`\sqrt{\sum_i w_i (x_i-\mu)^2 / W}` (exact, ddof 0)."""
        return float(np.sqrt(self._moments().variance))

    def quantile(self, q: Union[float, npt.ArrayLike]) -> Union[float, npt.NDArray[np.float64]]:
        """The decayed q-quantile(s): the first value whose decayed CDF
        reaches q (NumPy's weighted ``inverted_cdf``), within
        ``rank_error`` in rank."""
        qs = np.asarray(q, dtype=np.float64)
        out = self._state.quantiles(qs.reshape(-1).tolist())
        if out is None:
            raise ValueError("the decayed fit has no scores yet")
        return float(out[0]) if qs.ndim == 0 else np.asarray(out).reshape(qs.shape)

    @property
    def median(self) -> float:
        """The decayed 0.5-quantile (the lower one: no averaging)."""
        return float(self.quantile(0.5))

    @property
    def nmad(self) -> float:
        r"""1.482602218505602 × the decayed median of :math:`|x - \mathrm{median}|`."""
        mm = self._state.median_mad()
        if mm is None:
            raise ValueError("the decayed fit has no scores yet")
        return NMAD_FACTOR * mm[1]

    @property
    def niqr(self) -> float:
        """(Q(0.75) − Q(0.25)) / 1.3489795003921634, decayed quantiles."""
        q = self.quantile([0.25, 0.75])
        return float((q[1] - q[0]) / NIQR_DIVISOR)  # type: ignore[index]

    @property
    def rank_error(self) -> float:
        r"""δ: every decayed quantile is an exact q′-quantile with :math:`|q' - q| \le \delta`
        (the epochs' share error + the KLL ε + the dropped weight)."""
        return float(self._state.rank_error())

    @property
    def params(self) -> Dict[str, Any]:
        return dict(self._params)

    def __repr__(self) -> str:
        return f"DecayedFit(half_life={self._params['half_life']!r})  # n={self.n}"

    def to_dict(self) -> Dict[str, Any]:
        """Parameters and the state's bytes (base64), JSON-serialisable."""
        state = {"bytes": base64.b64encode(self._state.state()["bytes"]).decode("ascii")}
        return {"format": FORMAT, "version": VERSION, "params": self.params, "state": state}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "DecayedFit":
        """The state of :meth:`to_dict`, checked by the core (weight against
        its recomputation, epochs contiguous, sketches valid) and against
        the parameters."""
        params, state = stored(data, FORMAT)
        obj = cls(**{k: param(params, k) for k in
                     ("half_life", "epochs_per_half_life", "horizon", "k", "seed")})
        raw = param(state, "bytes", "state")
        if not isinstance(raw, str):
            raise ValueError("'state' 'bytes' must be a base64 string")
        try:
            blob = base64.b64decode(raw.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError):
            raise ValueError("'state' 'bytes' is not valid base64") from None
        # The core checks the bytes, and that they carry the parameters stored.
        obj._state.restore({"bytes": blob})
        return obj
