"""``outprob.OnlineConformal``: online smoothed conformal p-values
(contract §12)."""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np
import numpy.typing as npt

from .. import _core
from .._common.public import public
from .stored import VERSION, PickledAsDict, one_d, param, seed_value, stored

FORMAT = "outprob.OnlineConformal"


@public("outprob")
class OnlineConformal(PickledAsDict):
    r"""Online conformal p-values: each score ranked against every earlier
    score of the stream (Vovk, Nouretdinov & Gammerman 2003).

    The n-th score :math:`s_n` gets

    .. math:: p_n = \frac{\#\{i \le n : s_i > s_n\}
              + \theta_n\,\#\{i \le n : s_i = s_n\}}{n},

    :math:`\theta_n` uniform in (0, 1] (the equal count includes
    :math:`s_n`, so :math:`p_n > 0`). If the scores are exchangeable the
    p-values are independent and uniform — what :class:`outprob.Martingale`
    needs for its 1/threshold bound. p-values against a *fixed* calibration
    set (``ConformalScaler.pvalues``) are only marginally valid: they share
    the calibration set and are dependent, so a martingale fed with them
    can raise false alarms.

    Parameters
    ----------
    seed : int, default 0
        θ of the score at 0-based stream position j is 1 − U_j, U_j output
        j of the SplitMix64 stream seeded with ``seed`` (as
        ``ConformalScaler(tie_break="randomized")``): any batching and any
        checkpoint give the same p-values.
    higher_is_outlier : bool, default True
        False for scores where lower is more anomalous.
    smoothed : bool, default True
        False: θ = 1, conservative (super-uniform) p-values without
        randomness.

    Notes
    -----
    Exact, O(log² n) per score at worst (sorted runs of the scores seen,
    merged like a log-structured merge tree; 8–18 bytes per distinct
    score); the state holds every distinct score.

    Examples
    --------
    >>> import outprob
    >>> oc = outprob.OnlineConformal(smoothed=False)
    >>> oc.pvalues([3.0, 1.0, 2.0, 5.0]).tolist()
    [1.0, 1.0, 0.6666666666666666, 0.25]
    """


    def __init__(self, *, seed: int = 0, higher_is_outlier: bool = True, smoothed: bool = True) -> None:
        self._params: Dict[str, Any] = {
            "seed": seed_value(seed),
            "higher_is_outlier": bool(higher_is_outlier),
            "smoothed": bool(smoothed),
        }
        self._state = _core.OnlinePvaluesState(
            seed=self._params["seed"], negate=not higher_is_outlier, smoothed=bool(smoothed)
        )

    def pvalues(
        self, scores: npt.ArrayLike, *, uniforms: Optional[npt.ArrayLike] = None
    ) -> npt.NDArray[np.float64]:
        """The p-value of each score (in arrival order) against all earlier
        scores and itself; the scores join the state. ``uniforms`` (one per
        score, in [0, 1]) replace the θ draws. A NaN score raises
        ``ValueError`` and changes nothing."""
        u = None if uniforms is None else one_d(uniforms, "uniforms")
        return self._state.pvalues(one_d(scores, "scores"), u)

    def update(self, scores: npt.ArrayLike) -> "OnlineConformal":
        """Adds scores without their p-values (e.g. a warm-up); returns self."""
        self._state.update(one_d(scores, "scores"))
        return self

    @property
    def n(self) -> int:
        """Scores seen."""
        return int(self._state.n())

    @property
    def params(self) -> Dict[str, Any]:
        """The parameters."""
        return dict(self._params)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._params.items())
        return f"OnlineConformal({shown})  # n={self.n}"

    def to_dict(self) -> Dict[str, Any]:
        """The parameters and every distinct score seen (ascending, with its
        count) as a JSON-serialisable dict of builtins."""
        parts = self._state.state()
        state = {"n": int(parts["n"]), "scores": parts["scores"].tolist(),
                 "counts": list(parts["counts"])}
        return {"format": FORMAT, "version": VERSION, "params": self.params, "state": state}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "OnlineConformal":
        """The state of :meth:`to_dict`, checked (scores distinct and
        increasing, counts ≥ 1 summing to n)."""
        params, state = stored(data, FORMAT)
        p = {k: param(params, k) for k in ("seed", "higher_is_outlier", "smoothed")}
        for k in ("higher_is_outlier", "smoothed"):
            if not isinstance(p[k], (bool, np.bool_)):
                raise ValueError(f"'params' {k!r} must be a bool, got {p[k]!r}")
        try:
            seed = seed_value(p["seed"])
        except TypeError as exc:
            # A stored value of the wrong type is a corrupt state too.
            raise ValueError(f"'params' {exc}") from None
        obj = cls.__new__(cls)
        obj._params = {"seed": seed, "higher_is_outlier": bool(p["higher_is_outlier"]),
                       "smoothed": bool(p["smoothed"])}
        parts = {k: param(state, k, "state") for k in ("n", "scores", "counts")}
        obj._state = _core.OnlinePvaluesState(
            seed=obj._params["seed"], negate=not obj._params["higher_is_outlier"],
            smoothed=obj._params["smoothed"],
        )  # fmt: skip
        obj._state.restore(parts)
        return obj
