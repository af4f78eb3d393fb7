//! CPU time for the timing examples and the KLL crate benchmark
//! (`benches/kll_crate`, which includes this file by path): on a shared
//! machine it leaves out the time the thread waited for a core.

/// This thread's CPU time in seconds.
pub fn thread_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &raw mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
