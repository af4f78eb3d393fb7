//! Runtime CPU dispatch: hot kernels are compiled twice, for the baseline
//! target and for AVX2 + FMA, and the second runs when the CPU has them.
//! The kernels are plain Rust written so that LLVM vectorises them (fixed
//! groups of lanes, no reassociation needed), so both builds compute the
//! same results bit for bit.

/// Whether the AVX2 + FMA build may run on this CPU.
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// For each 4-bit mask, the 32-bit lane indices that move the chosen
/// doubles of a vector to its front, in order (`_mm256_permutevar8x32_*`:
/// branch-free packing of an AVX2 vector's chosen lanes).
pub(crate) const PACK_F64: [[i32; 8]; 16] = {
    let mut t = [[0i32; 8]; 16];
    let mut m = 0;
    while m < 16 {
        let (mut d, mut out) = (0i32, 0usize);
        while d < 4 {
            if m >> d & 1 == 1 {
                t[m][2 * out] = 2 * d;
                t[m][2 * out + 1] = 2 * d + 1;
                out += 1;
            }
            d += 1;
        }
        m += 1;
    }
    t
};

/// Defines `fn $name(args) -> ret` that runs `$body` compiled with AVX2 +
/// FMA enabled when the CPU supports them, and the baseline build otherwise.
/// `$body` must not depend on which build runs (no FMA contraction is
/// implied: Rust never fuses `a * b + c` on its own).
macro_rules! multiversion {
    // Const generics, named at each call (they are not inferred).
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident <$(const $cg:ident : $cty:ty),+> ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
        $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name <$(const $cg: $cty),+> ( $($arg: $ty),* ) -> $ret {
            #[inline(always)]
            fn kernel <$(const $cg: $cty),+> ( $($arg: $ty),* ) -> $ret $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2 <$(const $cg: $cty),+> ( $($arg: $ty),* ) -> $ret {
                kernel::<$($cg),+>($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            if $crate::numeric::simd::has_avx2() {
                // SAFETY: the CPU supports the features `avx2` was compiled for.
                return unsafe { avx2::<$($cg),+>($($arg),*) };
            }
            kernel::<$($cg),+>($($arg),*)
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($gen:ident : $bound:path),*>)? ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
        $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret {
            #[inline(always)]
            fn kernel $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            unsafe fn avx2 $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret {
                kernel($($arg),*)
            }

            #[cfg(target_arch = "x86_64")]
            if $crate::numeric::simd::has_avx2() {
                // SAFETY: the CPU supports the features `avx2` was compiled for.
                return unsafe { avx2($($arg),*) };
            }
            kernel($($arg),*)
        }
    };
}
pub(crate) use multiversion;

/// Whether the AVX-512 (F, DQ, VL) build of [`multiversion_wide`] may run.
#[inline]
pub fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && has_avx2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`multiversion`] with a third build for AVX-512 (F, DQ, VL): for
/// kernels whose lanes are long polynomials (`numeric::exp`), where twice
/// the lanes halve the time. The same operations in every build: the same
/// bits.
macro_rules! multiversion_wide {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($gen:ident : $bound:path),*>)? ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
        $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret {
            #[inline(always)]
            fn wide_kernel $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret $body

            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
            unsafe fn avx512 $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret {
                wide_kernel($($arg),*)
            }

            // Below AVX-512, the two builds of `multiversion`.
            $crate::numeric::simd::multiversion! {
                fn narrow $(<$($gen: $bound),*>)? ( $($arg: $ty),* ) -> $ret {
                    wide_kernel($($arg),*)
                }
            }

            #[cfg(target_arch = "x86_64")]
            if $crate::numeric::simd::has_avx512() {
                // SAFETY: the CPU supports the features `avx512` was compiled for.
                return unsafe { avx512($($arg),*) };
            }
            narrow($($arg),*)
        }
    };
}
pub(crate) use multiversion_wide;
