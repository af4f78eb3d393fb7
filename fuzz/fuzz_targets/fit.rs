#![no_main]
//! libFuzzer entry point of the `fit` target; the checks live in
//! `outprob_fuzz::fit` so that `cargo test -p outprob-fuzz` replays the corpus.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outprob_fuzz::fit(data));
