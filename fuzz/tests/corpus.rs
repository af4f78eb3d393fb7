//! Replays the committed corpus (fuzz/corpus/<target>/*) through the fuzz
//! targets' checks on the stable toolchain: what a fuzzing run once found
//! interesting stays tested in CI without nightly or libFuzzer.

use std::path::Path;

#[test]
fn corpus_replays_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut total = 0;
    for (name, target) in outprob_fuzz::TARGETS {
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("readable entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for {name}");
        for f in &files {
            let data = std::fs::read(f).expect("readable corpus file");
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name}: {} fails its checks", f.display());
        }
        total += files.len();
    }
    assert!(total > 0);
}

#[test]
fn edge_inputs_run_clean() {
    // Inputs that decode to the edges of each target even before a corpus.
    let mut inputs: Vec<Vec<u8>> = vec![vec![], vec![0], vec![255; 64]];
    for b in 0..=255u8 {
        inputs.push(vec![b; 40]);
        inputs.push((0..80).map(|i| b.wrapping_mul(i)).collect());
    }
    for (_, target) in outprob_fuzz::TARGETS {
        for data in &inputs {
            target(data);
        }
    }
}
