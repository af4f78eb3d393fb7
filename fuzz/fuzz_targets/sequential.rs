#![no_main]
//! libFuzzer entry point of the `sequential` target; the checks live in
//! `outprob_fuzz::sequential` so that `cargo test -p outprob-fuzz` replays the corpus.

libfuzzer_sys::fuzz_target!(|data: &[u8]| outprob_fuzz::sequential(data));
