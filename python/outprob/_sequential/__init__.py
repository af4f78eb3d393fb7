"""Online decisions on a stream (contract §12): ``OnlineFDR`` (LOND,
LORD++, SAFFRON, ADDIS), ``Martingale`` (exchangeability martingales with
CUSUM and Shiryaev–Roberts alarms) and ``OnlineConformal`` (online smoothed
conformal p-values).

Each class wraps one state object of the compiled core (``_core``), which
holds every rule and check; this package converts inputs, names results
and carries the state through ``to_dict``/``from_dict`` and pickling.

Imports: ``_core``, NumPy and ``outprob._common`` only — nothing from the
scalers, scikit-learn or pandas, so that a stream monitor loads as little
as a fitted map.
"""
