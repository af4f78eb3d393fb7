//! DataSketches' compact serialization of KLL sketches (family 15), read
//! and written from the format (little-endian):
//!
//! ```text
//! byte 0: preamble ints (2: empty or one item, 5: more)
//!      1: serial version (1: empty or full, 2: one item)
//!      2: family 15          3: flags (1 empty, 2 level 0 sorted, 4 one item)
//!    4-5: k                  6: m (= 8)          7: unused
//! empty: nothing more.  one item: the item at byte 8.
//! more:  8-15 n, 16-17 min k, 18 number of levels L, 19 unused,
//!        20.. L u32 level boundaries (the last, the capacity, is implied),
//!        min item, max item, then the retained items (level 0 first).
//! ```
//!
//! Reading checks every field of untrusted bytes before allocating: sizes
//! bounded by the format's own limits (k < 2^16, at most 61 levels, so a
//! buffer of at most ~200 000 items), boundaries ascending and within the
//! capacity, weights adding up to n, items free of NaN, levels above 0
//! sorted and within [min, max]. Garbage gives an error, never a panic.

use super::compress::{total_capacity, total_weight, M, MAX_LEVELS};
use super::{check_k, Item, KllSketch};
use crate::error::Error;

const FAMILY: u8 = 15;
const FLAG_EMPTY: u8 = 1;
const FLAG_SORTED: u8 = 2;
const FLAG_SINGLE: u8 = 4;
const DATA_START: usize = 20;

fn corrupt(reason: impl Into<String>) -> Error {
    Error::InvalidParameter {
        name: "bytes",
        reason: format!("not a valid KLL sketch: {}", reason.into()),
    }
}

/// The sketch's DataSketches bytes.
pub fn serialize<T: Item>(s: &KllSketch<T>) -> Vec<u8> {
    let single = s.n() == 1;
    let levels = s.levels();
    let items = &s.items()[levels[0] as usize..];
    let mut out = Vec::with_capacity(DATA_START + 4 * s.num_levels() + (2 + items.len()) * T::SIZE);
    let flags = if s.is_empty() { FLAG_EMPTY } else { 0 }
        | if s.level_zero_sorted() {
            FLAG_SORTED
        } else {
            0
        }
        | if single { FLAG_SINGLE } else { 0 };
    out.push(if s.is_empty() || single { 2 } else { 5 });
    out.push(if single { 2 } else { 1 });
    out.push(FAMILY);
    out.push(flags);
    out.extend_from_slice(&s.k().to_le_bytes());
    out.push(M);
    out.push(0);
    if s.is_empty() {
        return out;
    }
    if !single {
        out.extend_from_slice(&s.n().to_le_bytes());
        out.extend_from_slice(&s.min_k().to_le_bytes());
        out.push(s.num_levels() as u8);
        out.push(0);
        for &l in &levels[..s.num_levels()] {
            out.extend_from_slice(&l.to_le_bytes());
        }
        for v in [s.min(), s.max()].into_iter().flatten() {
            out.extend_from_slice(&v.to_le()[..T::SIZE]);
        }
    }
    T::extend_le(&mut out, items);
    out
}

/// Reads DataSketches' bytes of a KLL sketch of `T` items.
#[allow(clippy::too_many_lines)] // one check after another, in format order
pub fn deserialize<T: Item>(b: &[u8]) -> Result<KllSketch<T>, Error> {
    if b.len() < 8 {
        return Err(corrupt(format!(
            "{} bytes, a sketch has at least 8",
            b.len()
        )));
    }
    let (pre, ver, family, flags) = (b[0], b[1], b[2], b[3]);
    let k = u16::from_le_bytes([b[4], b[5]]);
    let m = b[6];
    if family != FAMILY {
        return Err(corrupt(format!("family {family}, KLL is {FAMILY}")));
    }
    if ver == 3 {
        return Err(corrupt(
            "serial version 3 is DataSketches' updatable in-memory layout; \
             serialize the sketch in compact form (toByteArray/serialize)",
        ));
    }
    if ver != 1 && ver != 2 {
        return Err(corrupt(format!("serial version {ver}, expected 1 or 2")));
    }
    if m != M {
        return Err(corrupt(format!("m = {m}, expected {M}")));
    }
    let k = check_k(u32::from(k)).map_err(|_| corrupt(format!("k = {k} out of range")))?;
    let empty = flags & FLAG_EMPTY != 0;
    let single = flags & FLAG_SINGLE != 0;
    let want_pre = if empty || single { 2 } else { 5 };
    if pre != want_pre {
        return Err(corrupt(format!("{pre} preamble ints, expected {want_pre}")));
    }
    if empty {
        return KllSketch::new(k, 0);
    }
    let size = T::SIZE;
    let item_at = |pos: usize| -> Result<T, Error> {
        let bytes = b.get(pos..pos + size).ok_or_else(|| corrupt("truncated"))?;
        let v = T::from_le(bytes);
        if v.is_nan() {
            return Err(corrupt("an item is NaN"));
        }
        Ok(v)
    };
    if single {
        if b.len() != 8 + size {
            return Err(corrupt(format!(
                "{} bytes for a one-item sketch, expected {}",
                b.len(),
                8 + size
            )));
        }
        let v = item_at(8)?;
        let cap = total_capacity(k, 1);
        let mut items = vec![v; cap as usize];
        items[cap as usize - 1] = v;
        return Ok(KllSketch::from_parts(
            k,
            k,
            1,
            vec![cap - 1, cap],
            items,
            flags & FLAG_SORTED != 0,
            Some(v),
            Some(v),
        ));
    }
    if b.len() < DATA_START {
        return Err(corrupt("truncated preamble"));
    }
    let n = u64::from_le_bytes(b[8..16].try_into().map_err(|_| corrupt("truncated"))?);
    let min_k = u16::from_le_bytes([b[16], b[17]]);
    let num_levels = usize::from(b[18]);
    if !(1..=MAX_LEVELS).contains(&num_levels) {
        return Err(corrupt(format!("{num_levels} levels")));
    }
    if min_k < super::compress::MIN_K || min_k > k {
        return Err(corrupt(format!("min k = {min_k} with k = {k}")));
    }
    let cap = total_capacity(k, num_levels);
    let mut levels = Vec::with_capacity(num_levels + 1);
    for h in 0..num_levels {
        let p = DATA_START + 4 * h;
        let raw = b.get(p..p + 4).ok_or_else(|| corrupt("truncated levels"))?;
        levels.push(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]));
    }
    levels.push(cap);
    if levels.windows(2).any(|w| w[0] > w[1]) {
        return Err(corrupt(
            "level boundaries are not ascending within the capacity",
        ));
    }
    if total_weight(&levels) != Some(n) || n < 2 {
        return Err(corrupt(format!(
            "the levels' weights do not add up to n = {n}"
        )));
    }
    let retained = (cap - levels[0]) as usize;
    let data = DATA_START + 4 * num_levels;
    let expect = data + (2 + retained) * size;
    if b.len() != expect {
        return Err(corrupt(format!("{} bytes, expected {expect}", b.len())));
    }
    let min = item_at(data)?;
    let max = item_at(data + size)?;
    if max < min {
        return Err(corrupt("max < min"));
    }
    let mut items = vec![min; cap as usize];
    for i in 0..retained {
        let v = item_at(data + (2 + i) * size)?;
        if v < min || max < v {
            return Err(corrupt("an item lies outside [min, max]"));
        }
        items[levels[0] as usize + i] = v;
    }
    for h in 1..num_levels {
        let run = &items[levels[h] as usize..levels[h + 1] as usize];
        if run.windows(2).any(|w| w[1] < w[0]) {
            return Err(corrupt(format!("level {h} is not sorted")));
        }
    }
    // A level 0 flagged sorted that is not would break compaction: trust
    // the flag only when it holds.
    let level0 = &items[levels[0] as usize..levels[1] as usize];
    let sorted = flags & FLAG_SORTED != 0 && level0.windows(2).all(|w| w[0] <= w[1]);
    Ok(KllSketch::from_parts(
        k,
        min_k,
        n,
        levels,
        items,
        sorted,
        Some(min),
        Some(max),
    ))
}
