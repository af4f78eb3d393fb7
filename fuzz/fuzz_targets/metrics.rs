#![no_main]
//! libFuzzer entry point of the `metrics` target; the checks live in
//! `outprob_fuzz::metrics` so that `cargo test -p outprob-fuzz` replays the corpus.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outprob_fuzz::metrics(data));
