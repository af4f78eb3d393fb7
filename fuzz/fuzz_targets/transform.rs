#![no_main]
//! libFuzzer entry point of the `transform` target; the checks live in
//! `outprob_fuzz::transform` so that `cargo test -p outprob-fuzz` replays the corpus.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outprob_fuzz::transform(data));
