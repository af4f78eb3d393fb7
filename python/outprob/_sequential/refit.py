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

from .. import _core
from .._common.public import public
from .._common.validation import check_count, check_real
from .decayed import DecayedFit
from .martingale import Martingale
from .online_pvalues import OnlineConformal
from .stored import VERSION, PickledAsDict, one_d, param, seed_value, stored

FORMAT = "outprob.RefitOnDrift"


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
        # The rules (parameters, when to refit, the events, the stored
        # state's checks) are the core's; this class maps, monitors and
        # calls the scaler.
        if not isinstance(refit, str):
            raise ValueError(f"refit must be 'window' or 'decayed', got {refit!r}")
        window = check_count(window, "window")
        delay = None if delay is None else check_count(delay, "refit_delay")
        self._policy = _core.DriftPolicyState(refit, window=window,
                                              half_life=check_real(half_life, "half_life"),
                                              delay=delay)
        self.scaler = scaler
        self._seed = seed_value(seed)
        self._decayed: Optional[DecayedFit] = None
        if refit == "decayed":
            self._check_decayed(scaler)
            self._decayed = DecayedFit(half_life)
        self.monitor = Martingale("jumper", threshold=100.0) if monitor is None else monitor
        if self.monitor.alarmed:
            raise ValueError("the monitor has alarmed already: reset() it first")
        self._pvalues = OnlineConformal(seed=self._seed)
        self.events: List[DriftEvent] = []

    @property
    def refit(self) -> str:
        """``"window"`` or ``"decayed"``."""
        return str(self._policy.info().refit)

    @property
    def window(self) -> int:
        """Scores kept for a window refit."""
        return int(self._policy.info().window)

    @property
    def delay(self) -> int:
        """Scores from an alarm to its refit."""
        return int(self._policy.info().delay)

    @property
    def n(self) -> int:
        """Scores seen (NaN included)."""
        return int(self._policy.info().n)

    @staticmethod
    def _check_decayed(scaler: Any) -> None:
        p = scaler.get_params() if hasattr(scaler, "get_params") else {}
        gaussian = type(scaler).__name__ == "GaussianScaler"
        _core.drift_check_decayed(
            str(p.get("center")) if gaussian else "", str(p.get("scale")) if gaussian else "",
            p.get("pretransform") is not None, p.get("fixed_center") is not None,
        )  # fmt: skip

    def update(self, scores: npt.ArrayLike) -> DriftSteps:
        """Maps a batch (in arrival order) with the fit in force at each
        score, monitors it, and refits where an alarm calls for it."""
        x = one_d(scores, "scores")
        policy = self._policy
        policy.check_scores(x)
        out = np.empty(x.size)
        pv = np.full(x.size, np.nan)
        logm = np.full(x.size, np.nan)
        alarm = np.zeros(x.size, dtype=bool)
        first = len(self.events)
        at = 0
        while at < x.size:
            seg = x[at:at + policy.span(x.size - at)]  # up to the refit due
            ok = ~np.isnan(seg)
            p = self._pvalues.pvalues(seg[ok])
            steps = self.monitor.update(p)
            hits = np.flatnonzero(steps.alarm)
            stat = None
            if hits.size:  # cut the segment after the alarming score
                cut = int(np.flatnonzero(ok)[hits[0]]) + 1
                seg, ok, p = seg[:cut], ok[:cut], p[: hits[0] + 1]
                stat = self._log_statistic(steps, hits[0])
            out[at:at + seg.size] = self.scaler.transform(seg)
            where = at + np.flatnonzero(ok)
            pv[where], logm[where] = p, steps.log_martingale[: p.size]
            if self._decayed is not None:
                self._decayed.update(seg[ok])
            due = policy.advance(seg, stat)
            at += seg.size
            if stat is not None:
                alarm[at - 1] = True
                self.monitor.reset()
                self._pvalues = OnlineConformal(seed=self._seed)
            if due:
                self._do_refit()
        self.events.extend(_event(e) for e in policy.events(len(self.events)))
        return DriftSteps(out, pv, logm, alarm, tuple(self.events[first:]))

    def _log_statistic(self, steps: Any, i: int) -> float:
        which = self.monitor.params.get("statistic", "martingale")
        arr = {"martingale": steps.log_martingale, "cusum": steps.log_cusum,
               "shiryaev_roberts": steps.log_shiryaev_roberts}[which]
        return float(arr[i])

    def _do_refit(self) -> None:
        index = self.n - 1
        try:
            if self._decayed is None:
                recent = self._policy.recent()
                self.scaler.fit(recent)
                self._policy.refitted(int(recent.size))
                return
            p = self.scaler.get_params()
            center, scale, used = _core.drift_decayed_gaussian(
                self._decayed._state, p["center"], p["scale"], list(p.get("fallbacks", ())))
            self.scaler._set_fitted([{"center_": center, "scale_": scale, "scale_used_": used}], 1)
            self._policy.refitted(self._decayed.n, (center, scale))
        except ValueError as exc:
            warnings.warn(f"refit after score {index} failed, the previous fit is kept: {exc}",
                          RuntimeWarning, stacklevel=3)
            self._policy.refit_failed(str(exc))

    # -- stored state ---------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """Everything to continue bit for bit, as JSON-serialisable builtins:
        the scaler's, monitor's, p-values' and decayed fit's ``to_dict()``,
        the window's scores, the refit due and the events."""
        st = self._policy.state()
        n, pending, recent = st["n"], st["pending"], st["recent"]
        return {
            "format": FORMAT, "version": VERSION,
            "params": {"refit": self.refit, "window": self.window, "delay": self.delay,
                       "seed": self._seed},
            "state": {
                "n": n, "pending": pending, "recent": list(recent),
                "scaler": self.scaler.to_dict(), "monitor": self.monitor.to_dict(),
                "pvalues": self._pvalues.to_dict(),
                "decayed": None if self._decayed is None else self._decayed.to_dict(),
                "events": [dataclasses.asdict(e) for e in self.events],
            },
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "RefitOnDrift":
        """The state of :meth:`to_dict`, checked: each part by its own
        ``from_dict``; n, the window's scores, the refit due and the events
        by the core (contract §12)."""
        from .._registry import from_dict as scaler_from_dict

        params, state = stored(data, FORMAT)
        p = {k: param(params, k) for k in ("refit", "window", "delay", "seed")}
        st = {k: param(state, k, "state") for k in
              ("n", "pending", "recent", "scaler", "monitor", "pvalues", "decayed", "events")}
        scaler = scaler_from_dict(st["scaler"])
        decayed = None if st["decayed"] is None else DecayedFit.from_dict(st["decayed"])
        if (decayed is None) != (p["refit"] == "window"):
            raise ValueError("'state' 'decayed' must be present exactly for refit='decayed'")
        try:
            obj = cls(scaler, refit=p["refit"], window=p["window"], delay=p["delay"],
                      monitor=Martingale.from_dict(st["monitor"]), seed=p["seed"],
                      half_life=1.0 if decayed is None else decayed.params["half_life"])
        except TypeError as exc:
            # A stored value of the wrong type is a corrupt state.
            raise ValueError(f"'params' {exc}") from None
        n, pending = st["n"], st["pending"]
        for key, value in (("n", n), ("pending", pending)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise ValueError(f"'state' {key!r} must be a non-negative integer, got {value!r}")
        if n is None:
            raise ValueError("'state' 'n' must be a non-negative integer, got None")
        try:
            recent = np.asarray(st["recent"], dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError("'state' 'recent' must be a list of scores") from None
        if not isinstance(st["events"], list) or not all(isinstance(e, dict) for e in st["events"]):
            raise ValueError("'state' 'events' must be a list of dicts")
        try:
            events = [DriftEvent(**e) for e in st["events"]]
            core_events = [_stored_event(e) for e in events]
            obj._policy.restore({"n": n, "pending": pending, "recent": recent.tolist(),
                                 "events": core_events})
        except (TypeError, OverflowError) as exc:
            raise ValueError(f"'state' 'events': {exc}") from None
        except ValueError as exc:
            raise ValueError(f"'state' {exc}") from None
        obj._pvalues = OnlineConformal.from_dict(st["pvalues"])
        obj._decayed = decayed
        obj.events = events
        return obj

    def __repr__(self) -> str:
        return f"RefitOnDrift({self.scaler!r}, refit={self.refit!r})  # n={self.n}, events={len(self.events)}"


def _event(e: _core.DriftEvent) -> DriftEvent:
    """A core event record as a :class:`DriftEvent`."""
    f = None if e.fitted is None else {"center": e.fitted[0], "scale": e.fitted[1]}
    # The default's NaN object: events compare equal field by field.
    stat = math.nan if math.isnan(e.log_statistic) else e.log_statistic
    return DriftEvent(e.kind, e.index, log_statistic=stat, n_fit=e.n_fit, fitted=f,
                      message=e.message)


def _stored_event(e: DriftEvent) -> Dict[str, Any]:
    """A stored :class:`DriftEvent` as the core's record (its fields' kinds
    and its consistency are the core's to check)."""
    fitted = None
    if e.fitted is not None:
        if not isinstance(e.fitted, dict) or set(e.fitted) != {"center", "scale"}:
            raise ValueError("'state' 'events': fitted must be None or a dict of center, scale")
        fitted = [float(e.fitted["center"]), float(e.fitted["scale"])]
    if not isinstance(e.kind, str) or not isinstance(e.message, str):
        raise ValueError("'state' 'events': kind and message must be strings")
    return {"kind": e.kind, "index": e.index, "log_statistic": float(e.log_statistic),
            "n_fit": e.n_fit, "fitted": fitted, "message": e.message}


__all__ = ["DriftEvent", "DriftSteps", "RefitOnDrift"]
