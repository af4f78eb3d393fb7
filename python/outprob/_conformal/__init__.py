"""Conformal p-values and false-discovery control (contract §11): the
scaler that turns calibration scores into p-values
(:mod:`.scaler`, ``ConformalScaler``), its streaming calibration —
``partial_fit`` on a sketch, exact windows, ``merge``
(:mod:`.calibration_stream`) — and selection with FDR control and the
false-positive-rate band (:mod:`.selection`: ``select``,
``fpr_upper_bound``).

It imports :mod:`outprob._common`, :mod:`outprob._maps`,
:mod:`outprob._scalers` (the estimator machinery) and the compiled core.
"""
