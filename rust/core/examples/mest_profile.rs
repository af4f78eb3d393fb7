//! Where an M-estimate's time goes, per N and norm (issue #11): the whole fit
//! (`m_estimate`: on sorted scores below `bucketed_min`, bucketed above)
//! against median + nMAD, then the bucketed path at any N — building the
//! bucket moments, the iteration alone, its step counts and the reads that
//! fetch cut leaves. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p outprob-core --example mest_profile`.

#[path = "common/scores.rs"]
mod scores;
use outprob_core::estimators::blocks::{Blocks, Expect};
use outprob_core::estimators::location::median;
use outprob_core::estimators::mest::{iterate, m_estimate, MParams, Norm, StartScale, Sums};
use outprob_core::estimators::scale::nmad_about_median;
use outprob_core::sample::{NanPolicy, Sample};
use std::cell::Cell;
use std::time::Instant;

struct Count<'a, S: Sums> {
    s: &'a S,
    loc: Cell<usize>,
    sc: Cell<usize>,
}
impl<S: Sums> Sums for Count<'_, S> {
    fn len(&self) -> usize {
        self.s.len()
    }
    fn location(&self, p: &MParams, m: f64, sigma: f64) -> (f64, f64) {
        self.loc.set(self.loc.get() + 1);
        self.s.location(p, m, sigma)
    }
    fn scale(&self, c: f64, mu: f64, sigma: f64, nmu: f64) -> (f64, usize) {
        self.sc.set(self.sc.get() + 1);
        self.s.scale(c, mu, sigma, nmu)
    }
}

fn best<F: FnMut()>(mut f: F, reps: usize) -> f64 {
    let mut b = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64());
    }
    b
}

fn main() {
    // In a pool, as the Python binding runs every call: called from outside
    // one, each parallel step hands its work to the global pool and waits
    // for it (a Huber fit of 1e7 scores took 55–62 ms on one thread there,
    // 52 ms in a pool). RAYON_NUM_THREADS sets the pool's size.
    rayon::ThreadPoolBuilder::new()
        .build()
        .expect("a thread pool")
        .install(profile);
}

fn profile() {
    // Sizes from the command line (`1e4 1e6`), else 1e2 … 1e7.
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse::<f64>().expect("N") as usize)
        .collect();
    if sizes.is_empty() {
        sizes = vec![100, 1000, 10_000, 100_000, 1_000_000, 10_000_000];
    }
    for &n in &sizes {
        let x = scores::long_tailed(n);
        let reps = (2_000_000 / n).clamp(3, 2000);
        let s = Sample::new(&x, NanPolicy::Omit, false).unwrap();
        let t_base = best(
            || {
                let m = median(&s);
                std::hint::black_box(nmad_about_median(&s, m));
            },
            reps,
        );
        for norm in [Norm::Huber, Norm::Tukey] {
            let p = MParams {
                maxiter: 100,
                ..MParams::new(norm)
            };
            let t_all = best(
                || {
                    std::hint::black_box(m_estimate(&s, &p).unwrap());
                },
                reps,
            );
            let mu0 = median(&s);
            let s0 = nmad_about_median(&s, mu0);
            let expect = Some(Expect {
                location: mu0,
                scale: s0,
                widths: [p.tuning, p.c],
                bulk: 0.8 * p.tuning.min(p.c),
                far: 2.0 * p.tuning.max(p.c),
            });
            let huber = norm == Norm::Huber;
            let t_blocks = best(
                || {
                    std::hint::black_box(Blocks::scaled(&s, 0, huber, expect));
                },
                reps,
            );
            let b = Blocks::scaled(&s, 0, huber, expect);
            let c = Count {
                s: &b,
                loc: Cell::new(0),
                sc: Cell::new(0),
            };
            let est = iterate(&c, &p, mu0, s0, StartScale::Nmad);
            println!("   fetches {} held {:?}", b.fetches(), b.held());
            let t_iter = best(
                || {
                    std::hint::black_box(iterate(&b, &p, mu0, s0, StartScale::Nmad));
                },
                reps,
            );
            println!("n={n:>9} {norm:?}: total {:9.1} us = {:6.2}x median+nmad ({:8.1} us); blocks {:8.1} us; iterate {:8.1} us; loc steps {} scale steps {} n_iter {} conv {}",
                t_all*1e6, t_all/t_base, t_base*1e6, t_blocks*1e6, t_iter*1e6, c.loc.get(), c.sc.get(), est.n_iter, est.converged);
        }
    }
}
