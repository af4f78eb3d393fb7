"""``RefitOnDrift``: refit a scaler when an exchangeability martingale
alarms — on a window of the newest scores or on a decayed fit (§12
"Refits after a drift")."""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .._common.public import public
from .decayed import DecayedFit
from .martingale import Martingale
from .online_pvalues import OnlineConformal
from .stored import VERSION, PickledAsDict, one_d, param, seed_value, stored

FORMAT = "outprob.RefitOnDrift"

#: Centers and scales a decayed fit gives (contract §12).
DECAYED_CENTERS = ("mean", "median")
DECAYED_SCALES = ("std", "nmad", "niqr")


@public("outprob")
@dataclass(frozen=True)
class DriftEvent:
    """One alarm or refit of :class:`RefitOnDrift`.

    Attributes
    ----------
    kind : str
        ``"alarm"`` (the monitor crossed its threshold), ``"refit"`` (the
        scaler was refitted) or ``"refit_failed"`` (the refit raised; the
        previous fit is kept and ``message`` says why).
    index : int
        0-based position in the stream of the score after which it
        happened: an alarm's is the score whose p-value crossed; a refit
        applies from ``index + 1`` on.
    log_statistic : float
        The monitor's log statistic at an alarm (NaN for refits).
    n_fit : int
        Scores the refit used (the window's length, or the decayed fit's n);
        0 for alarms.
    fitted : dict or None
        A decayed refit's center and scale (None otherwise).
    message : str
        Why a refit failed ("" otherwise).
    """

    kind: str
    index: int
    log_statistic: float = math.nan
    n_fit: int = 0
    fitted: Optional[Dict[str, float]] = None
    message: str = ""


@public("outprob")
@dataclass(frozen=True)
class DriftSteps:
    """What one :meth:`RefitOnDrift.update` produced, one value per score.

    Attributes
    ----------
    output : ndarray of float64
        The scaler's ``transform`` of each score with the fit in force when
        it arrived (probabilities; 1 − p for a ``ConformalScaler``).
    pvalues : ndarray of float64
        The online conformal p-values fed to the monitor.
    log_martingale : ndarray of float64
        The monitor's ln M after each score (it restarts at each alarm).
    alarm : ndarray of bool
        True at the scores whose p-value raised an alarm.
    events : tuple of DriftEvent
        The alarms and refits of this batch, in order.
    """

    output: npt.NDArray[np.float64]
    pvalues: npt.NDArray[np.float64]
    log_martingale: npt.NDArray[np.float64]
    alarm: npt.NDArray[np.bool_]
    events: Tuple[DriftEvent, ...]

    def __len__(self) -> int:
        return int(self.alarm.size)


@public("outprob")
class RefitOnDrift(PickledAsDict):
    r"""A fitted scaler that is refitted when the stream stops being
    exchangeable.

    Each score gets an online conformal p-value (ranked against the scores
    since the last alarm, :class:`OnlineConformal`) which feeds an
    exchangeability martingale (:class:`Martingale`). When it alarms (by
    Ville's inequality falsely with probability ≤ 1/threshold on an
    exchangeable stream), the monitor and the p-values restart, and
    ``delay`` scores later the scaler is refitted:

    - ``refit="window"``: ``scaler.fit`` on the newest ``window`` scores
      (any scaler; a ``ConformalScaler`` is re-calibrated on them);
    - ``refit="decayed"``: center and scale from a :class:`DecayedFit` of
      every score (weights halving every ``half_life`` scores) — a
      ``GaussianScaler`` with center ``mean``/``median`` and scale
      ``std``/``nmad``/``niqr``.

    Parameters
    ----------
    scaler : fitted scaler
        Fitted on reference scores; refitted in place.
    refit : {"window", "decayed"}, default "window"
    window : int, default 1000
        Scores kept for a window refit.
    half_life : float, default 1000
        The decayed fit's half-life, in scores.
    delay : int, optional
        Scores after an alarm before the refit (default: ``window``, so the
        window holds only scores after the alarm; ``ceil(2·half_life)`` for
        a decayed refit). An alarm during the delay starts it again.
    monitor : Martingale, optional
        Default ``Martingale("jumper", threshold=100)``; it must not have
        alarmed.
    seed : int, default 0
        The online p-values' tie-breaking stream.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> rng = np.random.default_rng(0)
    >>> s = outprob.GaussianScaler().fit(rng.normal(size=500))
    >>> r = outprob.RefitOnDrift(s, window=300)
    >>> steps = r.update(np.r_[rng.normal(size=2000), rng.normal(3, 1, size=2000)])
    >>> [e.kind for e in r.events][:2]
    ['alarm', 'refit']
    """

    def __init__(self, scaler: Any, *, refit: str = "window", window: int = 1000,
                 half_life: float = 1000.0, delay: Optional[int] = None,
                 monitor: Optional[Martingale] = None, seed: int = 0) -> None:
        if refit not in ("window", "decayed"):
            raise ValueError(f"refit must be 'window' or 'decayed', got {refit!r}")
        if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or not 1 <= window <= 2**32:
            raise ValueError(f"window must be an integer in [1, 2**32], got {window!r}")
        self.scaler = scaler
        self.refit = refit
        self.window = int(window)
        self._seed = seed_value(seed)
        self._decayed: Optional[DecayedFit] = None
        if refit == "decayed":
            self._check_decayed(scaler)
            self._decayed = DecayedFit(half_life)
        default = self.window if refit == "window" else math.ceil(2 * float(half_life))
        self.delay = default if delay is None else int(delay)
        if not 0 <= self.delay <= 2**32:
            raise ValueError(f"delay must be an integer in [0, 2**32], got {delay!r}")
        self.monitor = Martingale("jumper", threshold=100.0) if monitor is None else monitor
        if self.monitor.alarmed:
            raise ValueError("the monitor has alarmed already: reset() it first")
        self._pvalues = OnlineConformal(seed=self._seed)
        self._recent = np.empty(0)
        self._pending: Optional[int] = None  # index of the refit due
        self.n = 0
        self.events: List[DriftEvent] = []

    @staticmethod
    def _check_decayed(scaler: Any) -> None:
        p = scaler.get_params() if hasattr(scaler, "get_params") else {}
        if (type(scaler).__name__ != "GaussianScaler" or p.get("center") not in DECAYED_CENTERS
                or p.get("scale") not in DECAYED_SCALES or p.get("pretransform") is not None
                or p.get("fixed_center") is not None):
            raise ValueError(
                "refit='decayed' needs a GaussianScaler with center 'mean' or 'median', scale "
                "'std', 'nmad' or 'niqr', no pretransform and no fixed_center (a "
                "ConformalScaler is re-calibrated on a window: refit='window')"
            )

    def update(self, scores: npt.ArrayLike) -> DriftSteps:
        """Maps a batch (in arrival order) with the fit in force at each
        score, monitors it, and refits where an alarm calls for it."""
        x = one_d(scores, "scores")
        if np.isinf(x).any():
            raise ValueError("scores hold ±inf: a stream of finite scores (NaN for missing) is monitored")
        out = np.empty(x.size)
        pv = np.full(x.size, np.nan)
        logm = np.full(x.size, np.nan)
        alarm = np.zeros(x.size, dtype=bool)
        events: List[DriftEvent] = []
        at = 0
        while at < x.size:
            # The next stop: the refit due, or the end of the batch.
            end = x.size if self._pending is None else min(x.size, at + max(0, self._pending - self.n + 1))
            seg = x[at:end]
            ok = ~np.isnan(seg)
            p = self._pvalues.pvalues(seg[ok])
            steps = self.monitor.update(p)
            hits = np.flatnonzero(steps.alarm)
            if hits.size:  # cut the segment after the alarming score
                cut = int(np.flatnonzero(ok)[hits[0]]) + 1
                seg, ok, p = seg[:cut], ok[:cut], p[: hits[0] + 1]
                stat = self._log_statistic(steps, hits[0])
            out[at:at + seg.size] = self.scaler.transform(seg)
            where = at + np.flatnonzero(ok)
            pv[where], logm[where] = p, steps.log_martingale[: p.size]
            self._remember(seg[ok])
            self.n += seg.size
            at += seg.size
            if hits.size:
                alarm[at - 1] = True
                events.append(DriftEvent("alarm", self.n - 1, log_statistic=stat))
                self.monitor.reset()
                self._pvalues = OnlineConformal(seed=self._seed)
                self._pending = self.n - 1 + self.delay
            if self._pending is not None and self.n - 1 >= self._pending:
                events.append(self._do_refit())
                self._pending = None
        self.events.extend(events)
        return DriftSteps(out, pv, logm, alarm, tuple(events))

    def _log_statistic(self, steps: Any, i: int) -> float:
        which = self.monitor.params.get("statistic", "martingale")
        arr = {"martingale": steps.log_martingale, "cusum": steps.log_cusum,
               "shiryaev_roberts": steps.log_shiryaev_roberts}[which]
        return float(arr[i])

    def _remember(self, scores: npt.NDArray[np.float64]) -> None:
        if self._decayed is not None:
            self._decayed.update(scores)
        else:
            self._recent = np.concatenate([self._recent, scores])[-self.window:]

    def _do_refit(self) -> DriftEvent:
        index = self.n - 1
        try:
            if self._decayed is None:
                self.scaler.fit(self._recent)
                return DriftEvent("refit", index, n_fit=int(self._recent.size))
            fitted = self._decayed_params()
            self.scaler._set_fitted([fitted], 1)
            return DriftEvent("refit", index, n_fit=self._decayed.n,
                              fitted={"center": fitted["center_"], "scale": fitted["scale_"]})
        except ValueError as exc:
            warnings.warn(f"refit after score {index} failed, the previous fit is kept: {exc}",
                          RuntimeWarning, stacklevel=3)
            return DriftEvent("refit_failed", index, message=str(exc))

    def _decayed_params(self) -> Dict[str, Any]:
        d = self._decayed
        assert d is not None
        p = self.scaler.get_params()
        center = d.mean if p["center"] == "mean" else d.median
        scales = {"std": lambda: d.std, "nmad": lambda: d.nmad, "niqr": lambda: d.niqr}
        chain = [p["scale"], *(f for f in p.get("fallbacks", ()) if f in scales)]
        used, s = chain[0], scales[chain[0]]()
        for fallback in chain[1:]:
            if s > 0:
                break
            used, s = fallback, scales[fallback]()
        if not s > 0:
            raise ValueError(f"the decayed {used} scale is 0")
        return {"center_": float(center), "scale_": float(s), "scale_used_": used}

    # -- stored state ---------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """Everything to continue bit for bit, as JSON-serialisable builtins:
        the scaler's, monitor's, p-values' and decayed fit's ``to_dict()``,
        the window's scores, the refit due and the events."""
        return {
            "format": FORMAT, "version": VERSION,
            "params": {"refit": self.refit, "window": self.window, "delay": self.delay,
                       "seed": self._seed},
            "state": {
                "n": self.n, "pending": self._pending, "recent": self._recent.tolist(),
                "scaler": self.scaler.to_dict(), "monitor": self.monitor.to_dict(),
                "pvalues": self._pvalues.to_dict(),
                "decayed": None if self._decayed is None else self._decayed.to_dict(),
                "events": [dataclasses.asdict(e) for e in self.events],
            },
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "RefitOnDrift":
        """The state of :meth:`to_dict`, checked: each part by its own
        ``from_dict``, the window's scores finite and at most ``window``,
        n and the refit due consistent (n − 1 < due ≤ n − 1 + delay)."""
        from .._registry import from_dict as scaler_from_dict

        params, state = stored(data, FORMAT)
        p = {k: param(params, k) for k in ("refit", "window", "delay", "seed")}
        st = {k: param(state, k, "state") for k in
              ("n", "pending", "recent", "scaler", "monitor", "pvalues", "decayed", "events")}
        scaler = scaler_from_dict(st["scaler"])
        decayed = None if st["decayed"] is None else DecayedFit.from_dict(st["decayed"])
        if (decayed is None) != (p["refit"] == "window"):
            raise ValueError("'state' 'decayed' must be present exactly for refit='decayed'")
        obj = cls(scaler, refit=p["refit"], window=p["window"], delay=p["delay"],
                  monitor=Martingale.from_dict(st["monitor"]), seed=p["seed"],
                  half_life=1.0 if decayed is None else decayed.params["half_life"])
        n = st["n"]
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 2**53:
            raise ValueError(f"'state' 'n' must be an integer in [0, 2**53], got {n!r}")
        recent = np.asarray(st["recent"], dtype=np.float64).reshape(-1)
        if recent.size > obj.window or recent.size > n or not np.isfinite(recent).all():
            raise ValueError("'state' 'recent' must hold at most window (and n) finite scores")
        pending = st["pending"]
        if pending is not None and (isinstance(pending, bool) or not isinstance(pending, int)
                                    or not n - 1 < pending <= n - 1 + obj.delay):
            raise ValueError("'state' 'pending' must be None or a refit due after n - 1 and "
                             "within delay scores")
        if not isinstance(st["events"], list):
            raise ValueError("'state' 'events' must be a list")
        try:
            events = [DriftEvent(**e) for e in st["events"]]
        except TypeError as exc:
            raise ValueError(f"'state' 'events': {exc}") from None
        if any(e.kind not in ("alarm", "refit", "refit_failed") or not 0 <= e.index < n
               for e in events):
            raise ValueError("'state' 'events' hold an unknown kind or an index beyond n")
        obj._pvalues = OnlineConformal.from_dict(st["pvalues"])
        obj._decayed, obj._recent, obj._pending = decayed, recent, pending
        obj.n, obj.events = n, events
        return obj

    def __repr__(self) -> str:
        return f"RefitOnDrift({self.scaler!r}, refit={self.refit!r})  # n={self.n}, events={len(self.events)}"


__all__ = ["DriftEvent", "DriftSteps", "RefitOnDrift"]
