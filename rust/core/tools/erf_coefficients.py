#!/usr/bin/env python3
"""Generates the piecewise-polynomial erf tables of `rust/core/src/numeric/erf/tables.rs`.

Run with any Python that has mpmath (pure Python, no NumPy needed):

    python3 rust/core/tools/erf_coefficients.py > /tmp/erf_tables.rs

and paste the printed block between the `BEGIN GENERATED` / `END GENERATED`
markers of `erf/tables.rs` (and, with `--reference`, of `erf/tests.rs`). The run is deterministic (about 30 s).

    python3 rust/core/tools/erf_coefficients.py --reference

prints the reference table of the tests (second GENERATED block), and

    python3 rust/core/tools/erf_coefficients.py --dump FILE N [SEED]

writes N random (x, erf(x)) pairs for the `erf_audit` example.

Scheme (see the module docs of erf/mod.rs). For 0 <= z < CUT, with
W = 3/8 and i = trunc(z * (8/3)) (0..=15):

    t = z - CENTER[i]                      (exact, Sterbenz)
    Q = C[1][i] + t*(C[2][i] + ... + t*C[13][i])   (Horner, FMA)
    erf(z) ~= t*Q + B,   B = z for piece 0, C[0][i] for the others.

Piece 0 ([0, W)): CENTER = 0 and the form is z + z*Q(z), Q ~ erf(z)/z - 1,
so the rounding of Q (|Q| < 0.13) costs < 0.12 ulp and erf keeps full
relative accuracy down to the subnormals. C[1][0] = fl(2/sqrt(pi) - 1) (its
rounding, 0.1 ulp relative, is most of piece 0's approximation error) and
the rest of Q is a degree-11 Chebyshev interpolant of
(erf(z)/z - 2/sqrt(pi))/z.

Pieces 1..15 ([iW, (i+1)W), the last one ending at CUT): CENTER[i] is a
double near the midpoint, chosen so that erf(c) is within 2^-12 ulp of a
double and, where erf' is not negligible, erf'(c) within 2^-6 ulp of one
(found by scanning doubles outward from the midpoint, or by solving
erf(c) = fl(erf(mid)) where erf is flat); C[0] = fl(erf(c)) and
C[1] = fl(erf'(c)), so neither rounding costs accuracy. The remaining
coefficients C[2..=13] are a degree-11 Chebyshev interpolant (first kind
nodes, 60-digit arithmetic) of g(t) = (erf(c+t) - erf(c) - erf'(c) t)/t^2 on
the piece's t-range, expanded to monomials and rounded to double.

Finally every piece is checked: the approximation error of the rounded
coefficients (evaluated exactly, in 60 digits) is printed in units of
ulp(erf(z)), maximised over 4000 points per piece. Evaluation rounding is
not included here; the Rust tests measure the end-to-end error.
"""

import struct

import mpmath as mp

mp.mp.dps = 60

PIECES = 16
NCOEF = 14  # coefficients C[0..=13]: degree-13 polynomial in t
W = mp.mpf(3) / 8
# Smallest double whose erf rounds to 1.0: erfc(CUT) <= 2^-54 (ties go to 1.0,
# the even neighbour) and erfc(pred(CUT)) > 2^-54.
CUT = 5.921587195794507
MARGIN = mp.mpf("1e-9")  # relative widening of each piece (index rounding)


def next_double(v, direction):
    b = struct.unpack("<q", struct.pack("<d", v))[0]
    b += 1 if direction > 0 else -1
    return struct.unpack("<d", struct.pack("<q", b))[0]


def ulp(v):
    """ulp of the double nearest to v (v > 0)."""
    m, e = mp.frexp(mp.mpf(v))  # v = m 2^e, 0.5 <= m < 1
    return mp.mpf(2) ** (max(e, -1021) - 53)


def dist_to_double(v):
    """|v - fl(v)| in ulps of fl(v)."""
    d = float(v)
    return abs(v - mp.mpf(d)) / ulp(d)


def derf(x):
    return 2 / mp.sqrt(mp.pi) * mp.exp(-x * x)


def check_cut():
    c = mp.mpf(CUT)
    assert mp.erfc(c) <= mp.mpf(2) ** -54
    assert mp.erfc(mp.mpf(next_double(CUT, -1))) > mp.mpf(2) ** -54


def cheb_fit(f, a, b, n):
    """Monomial coefficients (in t) of the degree-n Chebyshev interpolant of
    f on [a, b] (first-kind nodes)."""
    nodes = [mp.cos(mp.pi * (k + mp.mpf(1) / 2) / (n + 1)) for k in range(n + 1)]
    vals = [f((a + b) / 2 + (b - a) / 2 * u) for u in nodes]
    # Chebyshev coefficients on [-1, 1]
    cc = []
    for j in range(n + 1):
        s = mp.fsum(vals[k] * mp.cos(j * mp.pi * (k + mp.mpf(1) / 2) / (n + 1)) for k in range(n + 1))
        cc.append(s * (1 if j == 0 else 2) / (n + 1))
    # Chebyshev -> monomials in u
    tprev, tcur = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]
    mono = [mp.mpf(0)] * (n + 1)
    mono[0] += cc[0]
    if n >= 1:
        mono[1] += cc[1]
    for j in range(2, n + 1):
        tnext = [mp.mpf(0)] * (j + 1)
        for k, v in enumerate(tcur):
            tnext[k + 1] += 2 * v
        for k, v in enumerate(tprev):
            tnext[k] -= v
        for k, v in enumerate(tnext):
            mono[k] += cc[j] * v
        tprev, tcur = tcur, tnext
    # u = (t - m)/h with m = (a+b)/2, h = (b-a)/2 -> monomials in t
    m, h = (a + b) / 2, (b - a) / 2
    out = [mp.mpf(0)] * (n + 1)
    for k, v in enumerate(mono):
        # v * ((t - m)/h)^k
        for r in range(k + 1):
            out[r] += v * mp.binomial(k, r) * (-m) ** (k - r) / h**k
    return out


def pick_center(mid):
    """A double near mid with erf (and, where it matters, erf') close to doubles."""
    mid_mp = mp.mpf(mid)
    if derf(mid_mp) < mp.mpf("1e-5"):
        # erf is flat at the scale of ulp(c): solve erf(c) = fl(erf(mid)) and
        # round c; erf(fl(c)) is within erf'(c) ulp(c) of that double, far
        # below 2^-12 ulp. (erf' is below 1e-5, so the rounding of C1 costs
        # nothing either.)
        target = mp.mpf(float(mp.erf(mid_mp)))
        c = float(mp.findroot(lambda x: mp.erf(x) - target, mid_mp))
        c_mp = mp.mpf(c)
        return c, float(dist_to_double(mp.erf(c_mp))), float(dist_to_double(derf(c_mp)))
    # Scan doubles outward from mid in steps of 2^-40 (erf moves by less than
    # 2^-12 ulp per step), first testing the cheap erf' condition.
    step = 2.0**-40
    for k in range(0, 400000):
        for sgn in (1, -1):
            c = float(mid) + sgn * k * step
            c_mp = mp.mpf(c)
            d1 = dist_to_double(derf(c_mp))
            if d1 > mp.mpf(2) ** -6:
                continue
            d0 = dist_to_double(mp.erf(c_mp))
            if d0 < mp.mpf(2) ** -12:
                return c, float(d0), float(d1)
    raise RuntimeError(f"no center found near {mid}")


def horner_exact(coefs, t):
    q = mp.mpf(0)
    for v in reversed(coefs):
        q = q * t + v
    return q


def main():
    check_cut()
    centers = []
    table = [[0.0] * PIECES for _ in range(NCOEF)]
    report = []
    # piece 0: erf(z) ~ z + z*Q(z)
    c1 = float(2 / mp.sqrt(mp.pi) - 1)
    # (Q(z) - Q(0))/z with the exact Q(0) = 2/sqrt(pi) - 1: smooth (odd) in z.
    two_over_sqrt_pi = 2 / mp.sqrt(mp.pi)
    g0 = lambda z: (mp.erf(z) / z - two_over_sqrt_pi) / z if z != 0 else mp.mpf(0)
    hi0 = W * (1 + MARGIN)
    rest = cheb_fit(g0, mp.mpf(0), hi0, NCOEF - 3)
    centers.append(0.0)
    table[0][0] = 0.0
    table[1][0] = c1
    for k, v in enumerate(rest):
        table[k + 2][0] = float(v)
    q = [mp.mpf(table[k][0]) for k in range(1, NCOEF)]
    err = max(
        abs(z + z * horner_exact(q, z) - mp.erf(z)) / ulp(mp.erf(z))
        for z in (hi0 * j / 4000 for j in range(1, 4001))
    )
    report.append((0, 0.0, 0.0, 0.0, err))
    for i in range(1, PIECES):
        lo = W * i * (1 - MARGIN)
        hi = min(W * (i + 1), mp.mpf(CUT)) * (1 + MARGIN)
        c, d0, d1 = pick_center((lo + hi) / 2 if i == PIECES - 1 else W * (i + mp.mpf(1) / 2))
        cm = mp.mpf(c)
        e0, e1 = mp.erf(cm), derf(cm)
        g = lambda t, cm=cm, e0=e0, e1=e1: (
            (mp.erf(cm + t) - e0 - e1 * t) / (t * t) if abs(t) > mp.mpf(10) ** -20 else -cm * e1
        )
        rest = cheb_fit(g, lo - cm, hi - cm, NCOEF - 3)
        centers.append(c)
        table[0][i] = float(e0)
        table[1][i] = float(e1)
        for k, v in enumerate(rest):
            table[k + 2][i] = float(v)
        coefs = [mp.mpf(table[k][i]) for k in range(NCOEF)]
        err = max(
            abs(horner_exact(coefs, z - cm) - mp.erf(z)) / ulp(mp.erf(z))
            for z in (lo + (hi - lo) * j / 4000 for j in range(4001))
        )
        report.append((i, c, d0, d1, err))

    print("// BEGIN GENERATED by rust/core/tools/erf_coefficients.py")
    print("// Approximation error of the rounded coefficients, exact evaluation,")
    print("// in ulps of erf(z) (max over 4000 points per piece):")
    for i, c, d0, d1, err in report:
        print(f"//   piece {i:2}: {float(err):.3e}  (|erf(c) - C0| = {d0:.1e} ulp, |erf'(c) - C1| = {d1:.1e} ulp)")
    print("/// Expansion point of each piece (`t = z - CENTER[i]`).")
    print("#[allow(clippy::unreadable_literal)]")
    print("pub(super) static CENTER: Table = Table([")
    for c in centers:
        print(f"    {c!r},")
    print("]);")
    print("/// `COEF[k][i]`: coefficient of `t^k` in piece `i` (`COEF[0][0]` is unused:")
    print("/// piece 0 adds `z` instead).")
    print("#[allow(clippy::unreadable_literal)]")
    print(f"pub(super) static COEF: [Table; {NCOEF}] = [")
    for k in range(NCOEF):
        print("    Table([")
        for i in range(PIECES):
            print(f"        {table[k][i]!r},")
        print("    ]),")
    print("];")
    print("// END GENERATED")


def reference_points():
    """Test arguments for the committed reference table: tiny and subnormal
    values, both sides of every piece boundary, CUT, the arguments where
    erf crosses a power of two (largest relative ulp), and seeded random
    points."""
    import random

    xs = [5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1e-200, 1e-100, 1e-30,
          1e-16, 1e-10, 1e-8, 1e-5, 1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0]
    for i in range(1, PIECES):
        b = float(W * i)
        xs += [b, next_double(b, -1), next_double(b, 1),
               next_double(next_double(b, -1), -1), b * (1 - 1e-9), b * (1 + 1e-9)]
    xs += [CUT, next_double(CUT, -1), next_double(CUT, 1), 5.92, 6.0, 6.5, 7.0, 27.0]
    for k in range(1, 12):
        r = float(mp.erfinv(mp.mpf(2) ** -k))
        xs += [r, next_double(r, -1), next_double(r, 1)]
    rng = random.Random(20240601)
    xs += [rng.uniform(0.0, 6.0) for _ in range(160)]
    xs += [10.0 ** rng.uniform(-12.0, 0.0) for _ in range(40)]
    return sorted(set(xs))


def print_reference():
    print("// BEGIN GENERATED by rust/core/tools/erf_coefficients.py --reference")
    print("// (x, erf(x) correctly rounded), mpmath at 60 digits.")
    print("#[allow(clippy::unreadable_literal)]")
    print("const REFERENCE: &[(f64, f64)] = &[")
    for x in reference_points():
        print(f"    ({x!r}, {float(mp.erf(mp.mpf(x)))!r}),")
    print("];")
    print("// END GENERATED")


def dump(path, n, seed):
    """Writes n pairs (x, fl(erf(x))) as little-endian f64 to path: x uniform
    on [-7, 7] and log-uniform on [1e-300, 7] (half each), for the
    audit `cargo run --release -p outprob-core --example erf_audit FILE`."""
    import random

    mp.mp.dps = 30  # enough for correct rounding away from exact ties
    rng = random.Random(seed)
    with open(path, "wb") as f:
        for j in range(n):
            if j % 2:
                x = rng.uniform(-7.0, 7.0)
            else:
                x = 10.0 ** rng.uniform(-300.0, 0.85) * rng.choice((-1.0, 1.0))
            f.write(struct.pack("<dd", x, float(mp.erf(mp.mpf(x)))))


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--reference"]:
        print_reference()
    elif sys.argv[1:2] == ["--dump"]:
        dump(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    else:
        main()
