"""How ``scalers_0.1.0.pkl`` and ``scalers_0.1.0.json`` were made: run with
outprob 0.1.0 (commit 28e4544, before the scalers became scikit-learn
estimators) installed. Kept to document the fixture; it cannot be rerun
against later versions, which is the point of the fixture."""

import json
import pickle
import warnings
from pathlib import Path

import numpy as np


def main() -> None:
    import outprob

    assert outprob.__version__ == "0.1.0"
    here = Path(__file__).parent
    rng = np.random.default_rng(2024)
    x1 = np.r_[rng.lognormal(size=40), [9.0, 12.0]]
    X2 = np.column_stack([x1, rng.normal(size=42), rng.uniform(size=42)])
    new1 = np.array([0.1, 1.0, 2.5, 8.0, np.nan, np.inf])
    new2 = np.column_stack([new1, new1 - 1, new1 / 4])
    cases = {
        "mean_nmad_1d": (outprob.scaler("mean_nmad"), x1, new1),
        "huber_2d": (outprob.scaler("huber", maxiter=100), X2, new2),
        "linear_2d": (outprob.LinearScaler(higher_is_outlier=False), X2, new2),
        "fixed_center_1d": (outprob.GaussianScaler(1.0, "std", ddof=1, threads=1), x1, new1),
        "unfitted": (outprob.scaler("median_niqr"), None, None),
    }
    blobs, expected = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (s, x, new) in cases.items():
            if x is not None:
                s.fit(x)
                expected[name] = {"new": np.asarray(new).tolist(), "p": s.transform(new).tolist()}
            blobs[name] = pickle.dumps(s, protocol=4)
    with open(here / "scalers_0.1.0.pkl", "wb") as f:
        pickle.dump(blobs, f, protocol=4)
    with open(here / "scalers_0.1.0.json", "w") as f:
        json.dump(
            {"generated_by": "outprob 0.1.0 (commit 28e4544)", "expected": expected},
            f,
            indent=1,
            allow_nan=True,
        )


if __name__ == "__main__":
    main()
