"""What every part of outprob shares: the checks of input arrays and
parameters (contract §5, :mod:`.validation`), exceptions and warning
categories (:mod:`.exceptions`), the wording of a fit's warnings
(:mod:`.fit_warnings`), optional dependencies imported on first use with
an error naming their extra (:mod:`.optional`), and named numeric columns
of CSV and Parquet tables (:mod:`.tables`).

It imports only the compiled core, NumPy and the standard library (never
scikit-learn, pandas or SciPy at import), and nothing else of outprob.
"""
