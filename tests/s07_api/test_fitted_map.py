"""The light fitted map (contract §7, "Fitted maps"): ``Scaler.to_map()``,
``outprob.load_map``, and what they import."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

import outprob

X = np.r_[np.random.default_rng(4).gamma(2.0, 1.0, 300), [9.0, 11.0, np.nan]]
NEW = np.array([-1.0, 0.5, 2.0, 4.0, 30.0, np.nan, np.inf, -np.inf])


@pytest.mark.parametrize("name", sorted(outprob.TRANSFORMATIONS))
def test_the_map_maps_as_the_scaler_for_every_transformation(name):
    s = outprob.scaler(name).fit(X)
    if name.startswith("conformal"):
        # A conformal calibration is not one of the fitted maps of §4/§10.
        with pytest.raises(TypeError, match="store the scaler with to_dict"):
            s.to_map()
        return
    m = s.to_map()
    want = s.transform(NEW)
    np.testing.assert_array_equal(m.transform(NEW), want)
    np.testing.assert_array_equal(m.transform(NEW.tolist()), want)
    back = outprob.load_map(json.dumps(m.to_dict()))
    np.testing.assert_array_equal(back.transform(NEW), want)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(m)).transform(NEW), want)
    f32 = NEW.astype(np.float32)
    np.testing.assert_array_equal(m.transform(f32), s.transform(f32))
    assert m.transform(f32).dtype == np.float32


def test_two_d_maps_lower_is_outlier_and_lambda():
    X2 = np.c_[X, X[::-1] * 2.0]
    s = outprob.GaussianScaler("median", "nmad", higher_is_outlier=False).fit(X2)
    m = outprob.load_map(s.to_map().to_dict())
    np.testing.assert_array_equal(m.transform(X2), s.transform(X2))
    with pytest.raises(ValueError, match=r"fitted on 2 score columns"):
        m.transform(X)
    g = outprob.GaussianScaler(pretransform="sqrt").fit(X)
    g.set_params(lam=2.0)  # a transform-time parameter: the map follows it
    np.testing.assert_array_equal(g.to_map().transform(NEW), g.transform(NEW))
    out = np.empty_like(NEW)
    assert g.to_map().transform(NEW, out=out) is out
    assert float(g.to_map().transform(np.float64(3.0))) == float(g.transform(3.0))


def test_a_scalers_to_dict_is_read_through_the_scaler():
    s = outprob.scaler("huber").fit(X)
    np.testing.assert_array_equal(outprob.load_map(json.dumps(s.to_dict())).transform(NEW),
                                  s.transform(NEW))


@pytest.mark.parametrize("blob, fragment", [
    ("[]", "format"), ('{"format": "outprob.FittedMap"}', "version"),
    ('{"format": "outprob.FittedMap", "version": 2, "map": {}}', "version"),
    ('{"format": "outprob.FittedMap", "version": 1, "map": 3}', "'map' dict"),
    ('{"format": "outprob.FittedMap", "version": 1, "map": {"kind": "gaussian"}}', None),
    ('{"format": "outprob.FittedMap", "version": 1, "map": {"kind": "gaussian", "negate": false, '
     '"two_d": false, "pretransform": null, "params": {"center": [0.0], "scale": [-1.0]}, '
     '"sorted": null}}', None),
    ('{"format": "outprob.FittedMap", "version": 1, "map": {"kind": "gaussian", "negate": false, '
     '"two_d": false, "pretransform": null, "params": {"center": [NaN], "scale": [1.0]}, '
     '"sorted": null}}', None),
    ("not json", None),
])
def test_stored_maps_are_untrusted(blob, fragment):
    with pytest.raises(ValueError, match=fragment):
        outprob.load_map(blob)


LIGHT = """
import sys
{body}
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("sklearn", "pandas", "scipy"))
print(heavy, file=sys.stderr)
sys.exit(1 if heavy else 0)
"""


def light(body: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", LIGHT.format(body=body)], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)


def test_loading_a_map_imports_neither_scikit_learn_nor_pandas():
    blob = json.dumps(outprob.scaler("median_nmad").fit(X).to_map().to_dict())
    proc = light(f"import outprob\nm = outprob.load_map({blob!r})\nprint(m.transform([1.0, 9.0]))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(outprob.scaler("median_nmad").fit(X).transform([1.0, 9.0]))


@pytest.mark.parametrize("args", [["stream"], ["stream", "-v", "huber", "--window", "5"],
                                  ["stream", "-v", "linear"], ["stream", "--map", "{map}"]])
def test_the_stream_imports_neither_scikit_learn_nor_pandas(tmp_path, args):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(outprob.scaler("mean_std").fit(X).to_map().to_dict()))
    argv = [a.format(map=path) for a in args]
    proc = light(f"from outprob.cli import main\ncode = main({argv!r})\nassert code == 0",
                 "1\n2\n3\nnan\n10\n")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 5


def test_the_stream_refuses_a_map_of_two_score_columns(tmp_path):
    # Contract §9: a stream has one score per line, so a map fitted on two
    # score columns is refused before any line is read.
    two = outprob.scaler("median_nmad").fit(np.column_stack([X, 2 * X])).to_map()
    (tmp_path / "m2.json").write_text(json.dumps(two.to_dict()))
    proc = subprocess.run([sys.executable, "-m", "outprob", "stream", "--map", str(tmp_path / "m2.json")],
                          input="1.0\n2.0\n", capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "2 score columns" in proc.stderr and "one score per line" in proc.stderr, proc.stderr


def test_fit_map_then_stream_and_scale_with_it(tmp_path, capsys):
    from outprob.cli import main

    (tmp_path / "s.txt").write_text("".join(f"{float(v)!r}\n" for v in X))
    assert main(["fit", str(tmp_path / "s.txt"), "--variant", "tukey", "--map"]) == 0
    (tmp_path / "m.json").write_text(capsys.readouterr().out)
    want = outprob.scaler("tukey").fit(X).transform(NEW[:6])
    proc = subprocess.run([sys.executable, "-m", "outprob", "stream", "--map", str(tmp_path / "m.json")],
                          input="".join(f"{float(v)!r}\n" for v in NEW[:6]), capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    np.testing.assert_array_equal([float(t) for t in proc.stdout.split()], want)
    (tmp_path / "t.csv").write_text("s\n" + "".join(f"{float(v)!r}\n" for v in NEW[:6]))
    assert main(["scale", str(tmp_path / "t.csv"), "--map", str(tmp_path / "m.json"), "--out", "-"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0] == "s,s_p"
    np.testing.assert_array_equal([float(r.split(",")[1]) for r in rows[1:]], want)
    assert main(["stream", "--map", str(tmp_path / "m.json"), "--window", "3"]) == 1
    assert "--window does not apply to --map" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"format": "outprob.FittedMap", "version": 9}')
    assert main(["scale", str(tmp_path / "t.csv"), "--map", str(tmp_path / "bad.json"), "--out", "-"]) == 1
    assert "version" in capsys.readouterr().err
