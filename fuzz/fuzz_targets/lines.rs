#![no_main]
//! libFuzzer entry point of the `lines` target; the checks live in
//! `outprob_fuzz::lines` so that `cargo test -p outprob-fuzz` replays the corpus.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outprob_fuzz::lines(data));
