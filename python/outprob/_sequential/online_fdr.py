"""``outprob.OnlineFDR``: online false-discovery-rate control (contract §12)."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .. import _core
from .._common.public import public
from .stored import VERSION, PickledAsDict, one_d, param, real_or_none, stored

FORMAT = "outprob.OnlineFDR"
STATE_KEYS = ("n", "clock", "rejections", "first", "stamps", "counts")


@public("outprob")
class OnlineFDR(PickledAsDict):
    r"""Online false-discovery-rate control: one decision per p-value, in
    arrival order, each made before the next p-value is seen.

    The p-value :math:`P_t` is rejected (declared a discovery) when
    :math:`P_t \le \alpha_t`, the level :math:`\alpha_t` depending only on
    the earlier decisions, so that for independent p-values
    :math:`\mathrm{FDR}(T) = E[V(T)/\max(R(T), 1)] \le \alpha` at every
    time T. With γ non-increasing, :math:`\sum_j \gamma_j \le 1`, and
    :math:`\tau_1 < \tau_2 < \dots` the rejection times:

    - ``"lord++"`` (Ramdas et al. 2017): :math:`\alpha_t = w_0\gamma_t +
      (\alpha - w_0)\gamma_{t-\tau_1} + \alpha\sum_{j\ge2}\gamma_{t-\tau_j}`;
    - ``"saffron"`` (Ramdas et al. 2018): LORD++'s sum with each subscript
      counting only the p-values above λ since the event, times
      :math:`1 - \lambda`, capped at λ;
    - ``"addis"`` (Tian & Ramdas 2019): subscripts counting only the
      p-values in (λ, τ] (those above τ are discarded), times
      :math:`\tau - \lambda`, capped at λ;
    - ``"lond"`` (Javanmard & Montanari 2018): :math:`\alpha_t =
      \alpha\gamma_t(D + 1)`, D the rejections so far.

    Parameters
    ----------
    method : {"lord++", "saffron", "addis", "lond"}
    alpha : float, default 0.05
        The FDR target, in (0, 1).
    w0 : float, optional
        Initial wealth in (0, α]; default α/10 (LORD++), α/2 (SAFFRON,
        ADDIS). LOND takes none.
    lam : float, optional
        Candidate threshold: 1/2 for SAFFRON (in (0, 1)), 1/4 for ADDIS (in
        (0, τ)); ADDIS rejects nothing above it. Others take none.
    tau : float, optional
        ADDIS' discarding threshold in (0, 1], default 1/2.
    gamma : array-like, optional
        A finite γ sequence (γ_1, …, γ_L): non-negative, non-increasing,
        summing to at most 1; γ_j = 0 beyond L, so rejections older than L
        (counted steps) stop costing work. Default: LORD's
        :math:`0.07720838\ln(\max(j,2))/(j e^{\sqrt{\ln j}})` (LOND,
        LORD++), SAFFRON's :math:`0.4374901658\,j^{-1.6}` (SAFFRON, ADDIS).

    Notes
    -----
    A p-value above the last level evaluated is accepted in O(1); one at
    or below it costs O(m), m the rejections still carrying weight.
    Decisions equal ``online-fdr`` 1.0's on the same p-values; where it
    departs from the papers (contract §12) this class follows the papers.
    The state (``to_dict``, pickling) resumes bit for bit.

    Examples
    --------
    >>> import numpy as np, outprob
    >>> fdr = outprob.OnlineFDR("saffron", alpha=0.05)
    >>> fdr.decide([2.9e-08, 0.06743, 0.01514, 0.08174, 0.00171]).tolist()
    [True, False, False, False, True]
    >>> fdr.decide([3.6e-05]).tolist(), fdr.n, fdr.rejections
    ([True], 6, 3)
    """


    def __init__(
        self,
        method: str = "lord++",
        *,
        alpha: float = 0.05,
        w0: Optional[float] = None,
        lam: Optional[float] = None,
        tau: Optional[float] = None,
        gamma: Optional[npt.ArrayLike] = None,
    ) -> None:
        g = None if gamma is None else one_d(gamma, "gamma").tolist()
        alpha, w0, lam, tau = (real_or_none(v, k) for k, v in
                               (("alpha", alpha), ("w0", w0), ("lam", lam), ("tau", tau)))
        self._state = _core.OnlineFdrState(method=method, alpha=alpha, w0=w0, lam=lam, tau=tau, gamma=g)

    def decide(self, pvalues: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """The decision on each p-value (True: rejected), in order; the
        state carries over to the next call. A p-value outside [0, 1] or
        NaN raises ``ValueError`` and changes nothing."""
        return self._state.decide(one_d(pvalues, "pvalues"))

    def decide_with_levels(
        self, pvalues: npt.ArrayLike
    ) -> Tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
        """The decisions and the level α_t each p-value was compared with
        (the same decisions as :meth:`decide`; each level evaluated)."""
        return self._state.decide_with_levels(one_d(pvalues, "pvalues"))

    @property
    def next_level(self) -> float:
        """The level the next p-value will be compared with."""
        return self._state.next_level()

    @property
    def n(self) -> int:
        """p-values tested so far."""
        return int(self._state.state()["n"])

    @property
    def rejections(self) -> int:
        """Rejections so far."""
        return int(self._state.state()["rejections"])

    @property
    def params(self) -> Dict[str, Any]:
        """The rule's parameters, defaults filled in (``None``: not taken)."""
        return dict(self._state.settings())

    def __repr__(self) -> str:
        p = self.params
        shown = ", ".join(f"{k}={v!r}" for k, v in p.items() if k not in ("method", "gamma") and v is not None)
        gamma = "" if p["gamma"] is None else f", gamma=<{len(p['gamma'])} terms>"
        return f"OnlineFDR({p['method']!r}, {shown}{gamma})  # n={self.n}, rejections={self.rejections}"

    def to_dict(self) -> Dict[str, Any]:
        """The rule and its state as a JSON-serialisable dict of builtins:
        ``format``, ``version``, ``params`` (defaults filled in) and
        ``state``."""
        return {"format": FORMAT, "version": VERSION, "params": self.params,
                "state": dict(self._state.state())}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "OnlineFDR":
        """The rule of :meth:`to_dict`, checked: a state that contradicts
        itself or the rule raises ``ValueError`` naming the field."""
        params, state = stored(data, FORMAT)
        settings = {k: param(params, k) for k in ("method", "alpha", "w0", "lam", "tau", "gamma")}
        try:
            for k in ("alpha", "w0", "lam", "tau"):
                settings[k] = real_or_none(settings[k], k)
        except TypeError as exc:
            # A stored value of the wrong type is a corrupt state too.
            raise ValueError(f"'params' {exc}") from None
        parts = {k: param(state, k, "state") for k in STATE_KEYS}
        obj = cls.__new__(cls)
        obj._state = _core.OnlineFdrState(**settings)
        obj._state.restore(parts)
        return obj
