//! A map from an array of scores into an array of values of the same
//! float type: what every transform of an array is, whoever drives it (the
//! binding runs any [`ArrayMap`] on a NumPy array of either dtype).

use crate::error::Error;
use crate::numeric::float::Float;

/// A map from scores into values of the same float type, with what it
/// returns besides the values.
pub trait ArrayMap: Sync {
    /// What the map returns besides the values it writes (a fit, a map).
    type Output: Send;

    /// Writes `dst` from `src` (equal lengths).
    fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<Self::Output, Error>;

    /// Whether an array of this shape is mapped (any shape by default).
    fn accepts(&self, shape: &[usize]) -> bool {
        let _ = shape;
        true
    }

    /// Whether the map runs an iteration (an M-estimation), so that even
    /// a short input costs more than handing it to another thread.
    fn iterates(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Double;

    impl ArrayMap for Double {
        type Output = usize;

        fn map<T: Float>(&self, src: &[T], dst: &mut [T]) -> Result<usize, Error> {
            for (s, d) in src.iter().zip(dst.iter_mut()) {
                *d = T::from_f64(2.0 * s.to_f64());
            }
            Ok(src.len())
        }
    }

    #[test]
    fn a_map_writes_either_float_type() {
        let (mut a, mut b) = ([0.0f64; 2], [0.0f32; 2]);
        assert_eq!(Double.map(&[1.0, 2.5], &mut a).unwrap(), 2);
        assert_eq!(Double.map(&[1.0f32, -3.0], &mut b).unwrap(), 2);
        assert_eq!((a, b), ([2.0, 5.0], [2.0, -6.0]));
        assert!(Double.accepts(&[3, 4]) && !Double.iterates());
    }
}
