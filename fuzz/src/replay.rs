//! Every committed seed (`fuzz/seeds/<target>/*`) through its target's invariants, in a plain
//! `cargo test` on stable: a seed that stops holding fails here without a fuzzing run.
//! .ci/run calls it (`cargo test --manifest-path fuzz/Cargo.toml --lib`: this crate is
//! outside the workspace, which `cargo test --workspace` does not reach).

use std::path::Path;

use crate::targets::ALL;

#[test]
fn every_seed_holds_its_targets_invariants() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .expect("fuzz/seeds")
        .map(|e| e.expect("seed dir entry").path())
        .collect();
    dirs.sort();
    let mut replayed = 0;
    for dir in &dirs {
        let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let Some((_, run)) = ALL.iter().find(|(n, _)| *n == name) else {
            panic!("fuzz/seeds/{name} belongs to no target in targets::ALL");
        };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("seed dir")
            .map(|e| e.expect("seed entry").path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "fuzz/seeds/{name} is empty");
        for file in files {
            let input = std::fs::read(&file).expect("seed file");
            // A panic names the seed: the invariant's message alone would not say which.
            let r = std::panic::catch_unwind(|| run(&input));
            assert!(
                r.is_ok(),
                "{} fails its target's invariants",
                file.display()
            );
            replayed += 1;
        }
    }
    // Every target has seeds, so none is skipped silently.
    for (name, _) in ALL {
        assert!(
            dirs.iter().any(|d| d.ends_with(name)),
            "target {name} has no seeds in fuzz/seeds"
        );
    }
    println!("replayed {replayed} seeds of {} targets", ALL.len());
}
