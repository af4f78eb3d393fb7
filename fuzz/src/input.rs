//! Bytes → numbers. Reads past the end give zeros, so every input decodes.

/// Values that sit on the edges of the contract: zeros, the ends of the
/// double range, subnormals, non-finite values.
const PALETTE: [f64; 24] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    -f64::MAX,
    1.7e308,
    -1.7e308,
    1e307,
    -9e307,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    1e-310,
    1e-300,
    1e300,
    1.071_508_607_186_267_3e301, // 2^1000
    1e-8,
    3.0,
    -2.5,
];

/// A cursor over the fuzzer's bytes.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    pub fn raw_f64(&mut self) -> f64 {
        let mut b = [0u8; 8];
        for v in &mut b {
            *v = self.byte();
        }
        f64::from_le_bytes(b)
    }

    /// A score: small multiples of 1/4 (ties), palette values, or any bit
    /// pattern.
    pub fn score(&mut self) -> f64 {
        match self.byte() % 8 {
            0..=2 => f64::from(self.byte() as i8) / 4.0,
            3 | 4 => PALETTE[self.byte() as usize % PALETTE.len()],
            5 => f64::from(self.u16()) * 1e-3 - 30.0,
            _ => self.raw_f64(),
        }
    }

    /// Scores until the bytes run out (at most `max`).
    pub fn scores(&mut self, max: usize) -> Vec<f64> {
        let mut x = Vec::new();
        while !self.is_empty() && x.len() < max {
            x.push(self.score());
        }
        x
    }

    /// A probability: mostly in [0, 1] (grid values with ties, the ends),
    /// sometimes anything.
    pub fn probability(&mut self) -> f64 {
        match self.byte() % 16 {
            0 => 0.0,
            1 => 1.0,
            2 => f64::from(self.byte()) / 255.0,
            3 => 1e-300,
            4 => 1.0 - f64::EPSILON / 2.0,
            5 => -0.0,
            6 => self.score(),
            _ => f64::from(self.u16()) / 65535.0,
        }
    }
}

/// `x·2^k` in two exact steps (for |k| <= 2044 and normal results).
pub fn ldexp(x: f64, k: i32) -> f64 {
    let half = k / 2;
    x * pow2(half) * pow2(k - half)
}

fn pow2(k: i32) -> f64 {
    f64::from_bits(((k.clamp(-1022, 1023) + 1023) as u64) << 52)
}

/// Whether every nonzero |v| lies in [2^-lo, 2^hi]: scaling by up to
/// 2^±64 then stays exact through every estimator.
pub fn tame(x: &[f64], lo: i32, hi: i32) -> bool {
    let (a, b) = (ldexp(1.0, -lo), ldexp(1.0, hi));
    x.iter().all(|v| *v == 0.0 || (a..=b).contains(&v.abs()))
}
