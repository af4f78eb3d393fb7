"""``outprob.reference`` is plain NumPy/SciPy (contract §7: "it never imports
the compiled core"): it imports and runs with the compiled core made
unimportable."""

import subprocess
import sys
import textwrap


def test_reference_never_imports_the_core():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["outprob._core"] = None  # any import of it now fails
        import outprob.reference as ref
        p = ref.variant_probabilities("huber", [1.0, 2.0, 2.5, 3.0, 40.0])
        assert p.shape == (5,) and p[-1] > 0.99
        assert "outprob._core" in sys.modules and sys.modules["outprob._core"] is None
        try:
            import outprob
            outprob.GaussianScaler
        except ImportError:
            print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
