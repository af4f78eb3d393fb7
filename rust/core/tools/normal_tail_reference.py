#!/usr/bin/env python3
"""Reference values of the standard normal survival S(z) = erfc(z/√2)/2 for
auditing ``numeric::erf::normal_sf`` (contract §11, the Gaussian tail):

    python3 rust/core/tools/normal_tail_reference.py /tmp/normal_sf.bin 200000
    cargo run --release -p outprob-core --example normal_tail_audit /tmp/normal_sf.bin

Writes little-endian f64 pairs (z, S(z) correctly rounded, mpmath at 50
digits): z uniform on [−10, 40] and, as many again, z of every binade in
[2⁻³⁰, 40] (random mantissas), so the tail where S is subnormal and the
points near 0 are both covered. Needs mpmath.
"""

from __future__ import annotations

import random
import struct
import sys

import mpmath


def main() -> None:
    path, count = sys.argv[1], int(sys.argv[2])
    mpmath.mp.dps = 50
    rng = random.Random(34)
    zs = [rng.uniform(-10.0, 40.0) for _ in range(count)]
    zs += [rng.uniform(1.0, 2.0) * 2.0 ** rng.randint(-30, 5) for _ in range(count)]
    zs = [z for z in zs if z < 40.0]
    with open(path, "wb") as f:
        for z in zs:
            s = mpmath.erfc(mpmath.mpf(z) / mpmath.sqrt(2)) / 2
            f.write(struct.pack("<dd", z, float(s)))


if __name__ == "__main__":
    main()
