"""``outprob.Martingale``: exchangeability martingales with CUSUM and
Shiryaev–Roberts alarms (contract §12)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .. import _core
from .._common.public import public
from .._common.validation import check_count, check_real
from .stored import VERSION, PickledAsDict, one_d, param, real_or_none, stored

FORMAT = "outprob.Martingale"


def _grid(n_grid: Any) -> int:
    """``n_grid`` as an int the core checks against its bound (§5); one that
    cannot cross as 64 bits, or is not an int, is checked here against the
    same bound."""
    if isinstance(n_grid, (bool, np.bool_)) or not isinstance(n_grid, numbers.Integral):
        return check_count(n_grid, "n_grid")  # a TypeError naming it
    if not 0 <= int(n_grid) < 2**64:
        return check_count(n_grid, "n_grid")  # outside the bound
    return int(n_grid)


def _checked(
    jump: Any, epsilon: Any, min_epsilon: Any, threshold: Any, n_grid: Any
) -> Tuple[float, float, float, Optional[float], int]:
    """The numbers as the core takes them: reals not bools or text, the
    grid a size (§5); the ranges are the core's to check."""
    return (check_real(jump, "jump"), check_real(epsilon, "epsilon"),
            check_real(min_epsilon, "min_epsilon"), real_or_none(threshold, "threshold"),
            _grid(n_grid))  # fmt: skip


PARAMS = ("kind", "jump", "epsilon", "n_grid", "min_epsilon", "threshold", "statistic", "on_alarm")
STATE_KEYS = (
    "n", "steps", "log_sum", "log_sum_error", "components", "log_martingale",
    "log_martingale_error", "log_cusum", "log_shiryaev_roberts", "alarms", "first_alarm",
)  # fmt: skip


@public("outprob")
@dataclass(frozen=True)
class MartingaleSteps:
    """The statistics after each p-value of one :meth:`Martingale.update`.

    Attributes
    ----------
    log_martingale : ndarray of float64
        ln M_t (+inf once a p-value of 0 met ε < 1).
    log_cusum : ndarray of float64
        ln C_t, the CUSUM statistic max_k M_t/M_{k-1}.
    log_shiryaev_roberts : ndarray of float64
        ln R_t, the Shiryaev–Roberts statistic Σ_k M_t/M_{k-1}.
    alarm : ndarray of bool
        The chosen statistic ≥ threshold after this p-value.
    """


    log_martingale: npt.NDArray[np.float64]
    log_cusum: npt.NDArray[np.float64]
    log_shiryaev_roberts: npt.NDArray[np.float64]
    alarm: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.alarm.size)


@public("outprob")
class Martingale(PickledAsDict):
    r"""An exchangeability martingale on a stream of p-values, with the
    CUSUM and Shiryaev–Roberts statistics and alarms.

    :math:`M_t = \prod_{i \le t} f_i(p_i)` bets against exchangeability
    with betting functions :math:`f_i \ge 0`, :math:`\int_0^1 f_i = 1`.
    For independent uniform p-values (:class:`outprob.OnlineConformal`'s,
    on exchangeable scores) M is a martingale and Ville's inequality gives
    :math:`P(\sup_t M_t \ge c) \le 1/c`: an alarm at threshold c is false
    with probability at most 1/c over the whole stream.

    - ``"jumper"``: the simple jumper (Vovk et al. 2021): capital over
      ε ∈ {−1, 0, 1}, a fraction ``jump`` redistributed before each bet
      :math:`1 + \varepsilon(p - 1/2)`; follows changes quickly.
    - ``"power"``: :math:`f(p) = \varepsilon p^{\varepsilon - 1}`.
    - ``"mixture"``: the mean of power martingales over ``n_grid`` values
      of ε from ``min_epsilon`` to 1.

    CUSUM :math:`C_t = r_t\max(1, C_{t-1})` and Shiryaev–Roberts
    :math:`R_t = r_t(1 + R_{t-1})`, :math:`r_t = M_t/M_{t-1}`, detect a
    change after a long quiet stretch, where M itself may have sunk far
    below 1; :math:`R_t - t` is a martingale under the null, so an alarm at
    :math:`R_t \ge c` comes after c p-values on average or later.

    Parameters
    ----------
    kind : {"jumper", "power", "mixture"}
    jump : float, default 0.01
        The jumper's J in (0, 1].
    epsilon : float, default 0.5
        The power martingale's ε in (0, 1].
    n_grid : int, default 100
        The mixture's grid size, in [2, 65536].
    min_epsilon : float, default 0.01
        The mixture grid's smallest ε, in (0, 1].
    threshold : float or None, default 100
        Alarm when the chosen statistic reaches it (positive, finite);
        None: no alarms.
    statistic : {"martingale", "cusum", "shiryaev_roberts"}
        The statistic the threshold applies to; ``"martingale"`` has
        Ville's 1/threshold bound.
    on_alarm : {"continue", "restart"}
        After an alarm the statistics go on (``"continue"``; later alarms
        are not new evidence) or start again from M = 1, C = R = 0 after the
        alarming p-value (``"restart"``: a new test with its own 1/c
        bound). The first alarm's position is kept until :meth:`reset`.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> m = outprob.Martingale("jumper", threshold=100)
    >>> rng = np.random.default_rng(0)
    >>> quiet = m.update(rng.uniform(size=500))
    >>> bool(quiet.alarm.any())
    False
    >>> drift = m.update(rng.uniform(size=500) ** 4)   # p-values pile up near 0
    >>> m.alarmed, m.first_alarm is not None
    (True, True)
    """


    def __init__(
        self,
        kind: str = "jumper",
        *,
        jump: float = 0.01,
        epsilon: float = 0.5,
        n_grid: int = 100,
        min_epsilon: float = 0.01,
        threshold: Optional[float] = 100.0,
        statistic: str = "martingale",
        on_alarm: str = "continue",
    ) -> None:
        jump, epsilon, min_epsilon, threshold, n_grid = _checked(
            jump, epsilon, min_epsilon, threshold, n_grid
        )
        self._params: Dict[str, Any] = dict(
            kind=kind, jump=jump, epsilon=epsilon, n_grid=n_grid, min_epsilon=min_epsilon,
            threshold=threshold, statistic=statistic, on_alarm=on_alarm,
        )  # fmt: skip
        self._state = _core.MartingaleState(
            kind=kind, jump=jump, epsilon=epsilon, n_grid=n_grid, min_epsilon=min_epsilon,
            threshold=threshold, statistic=statistic, on_alarm=on_alarm,
        )  # fmt: skip

    def update(self, pvalues: npt.ArrayLike) -> MartingaleSteps:
        """Feeds the p-values in order; the statistics after each. A p-value
        outside [0, 1] or NaN raises ``ValueError`` and changes nothing."""
        m, c, r, a = self._state.update(one_d(pvalues, "pvalues"))
        return MartingaleSteps(m, c, r, a)

    def reset(self) -> None:
        """Back to the state at construction (M = 1, no alarm, n = 0)."""
        self._state.reset()

    def _part(self, key: str) -> Any:
        return self._state.state()[key]

    @property
    def n(self) -> int:
        """p-values fed since construction or :meth:`reset`."""
        return int(self._part("n"))

    @property
    def log_martingale(self) -> float:
        """ln M now."""
        p = self._state.state()
        return float(p["log_martingale"] + p["log_martingale_error"])

    @property
    def log_cusum(self) -> float:
        """ln C now (−inf before the first p-value)."""
        return float(self._part("log_cusum"))

    @property
    def log_shiryaev_roberts(self) -> float:
        """ln R now (−inf before the first p-value)."""
        return float(self._part("log_shiryaev_roberts"))

    @property
    def alarms(self) -> int:
        """p-values that raised an alarm since construction or reset."""
        return int(self._part("alarms"))

    @property
    def alarmed(self) -> bool:
        """Whether an alarm was raised since construction or reset."""
        return self.alarms > 0

    @property
    def first_alarm(self) -> Optional[int]:
        """0-based position (since construction or reset) of the first alarm."""
        a = self._part("first_alarm")
        return None if a is None else int(a)

    @property
    def params(self) -> Dict[str, Any]:
        """The parameters."""
        return dict(self._params)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._params.items() if k != "kind")
        return f"Martingale({self._params['kind']!r}, {shown})  # n={self.n}, alarms={self.alarms}"

    def to_dict(self) -> Dict[str, Any]:
        """The martingale and its state as a dict of builtins (``format``,
        ``version``, ``params``, ``state``); the logs of C and R are −inf
        before the first p-value (``json`` writes them as ``-Infinity``)."""
        state = dict(self._state.state())
        return {"format": FORMAT, "version": VERSION, "params": self.params, "state": state}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Martingale":
        """The martingale of :meth:`to_dict`, checked: a state that
        contradicts itself raises ``ValueError`` naming the field."""
        params, state = stored(data, FORMAT)
        p = {k: param(params, k) for k in PARAMS}
        parts = {k: param(state, k, "state") for k in STATE_KEYS}
        keys = ("jump", "epsilon", "min_epsilon", "threshold", "n_grid")
        obj = cls.__new__(cls)
        try:
            p.update(zip(keys, _checked(*(p[k] for k in keys))))
            rest = {k: v for k, v in p.items() if k != "kind"}
            obj._state = _core.MartingaleState(kind=p["kind"], **rest)
            obj._state.restore(parts)
        except (TypeError, OverflowError) as exc:
            # A stored value of the wrong type is a corrupt state too.
            raise ValueError(f"not a valid stored Martingale: {exc}") from None
        obj._params = p
        return obj
