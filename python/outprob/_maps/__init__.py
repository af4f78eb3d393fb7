"""Fitted maps and stored state (contract §7): the map from scores to
probabilities a fit leaves behind, alone (:mod:`.fitted_map`, what a
scoring service loads), and a fitted scaler's state with its
``to_dict``/``from_dict`` and pickle layout (:mod:`.stored_state`).

It imports :mod:`outprob._common` and the compiled core, never
scikit-learn, pandas or SciPy, so the light scoring path stays light.
"""
