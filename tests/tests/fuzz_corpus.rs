//! The fuzz targets' checks (`fuzz/src/targets/`) on every seed of
//! `fuzz/corpus/<target>/` and every input of `fuzz/regressions/<target>/`
//! (crashers found before, kept once fixed). Invariant: no input of either
//! makes a decoder panic or breaks a target's round-trip checks. This runs
//! what a fuzzing smoke run replays first, in the workspace's own build and
//! without libFuzzer; `bash fuzz/run-smoke.sh` searches beyond the seeds.

use std::path::{Path, PathBuf};

// The fuzz crate is a workspace of its own (libFuzzer's C++ and a nightly
// build); its checks are plain functions over kafka-proto, the client and
// the registry crate, compiled here from its sources. Items the libFuzzer
// binaries and the seed generator use and these tests do not stay unused.
#[allow(dead_code)]
#[path = "../../fuzz/src/lib.rs"]
mod kafka_proto_fuzz;

use kafka_proto_fuzz::targets;

/// `fuzz/` of the workspace.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Every file under `fuzz/<kind>/<target>/`, sorted (none if the folder
/// does not exist).
fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = fuzz_dir().join(kind).join(target);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .map(|e| e.expect("a readable directory entry").path())
            .filter(|p| p.is_file())
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("reading {}: {e}", dir.display()),
    };
    files.sort();
    files
}

/// Runs `check` on every seed and regression of `target`, naming the input
/// that fails; there must be seeds (a moved corpus must not pass by finding
/// nothing).
fn replay(target: &str, check: fn(&[u8])) {
    let seeds = inputs("corpus", target);
    assert!(!seeds.is_empty(), "no seeds in fuzz/corpus/{target}");
    for path in seeds.iter().chain(&inputs("regressions", target)) {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{target} fails on {}", path.display());
    }
}

#[test]
fn frame_decoder_seeds_and_regressions_pass() {
    replay("frame_decoder", targets::frame_decoder::run);
}

#[test]
fn http_response_seeds_and_regressions_pass() {
    replay("http_response", targets::http_response::run);
}

#[test]
fn record_batch_seeds_and_regressions_pass() {
    replay("record_batch", targets::record_batch::run);
}

#[test]
fn registry_frame_seeds_and_regressions_pass() {
    replay("registry_frame", targets::registry_frame::run);
}

#[test]
fn request_decoders_seeds_and_regressions_pass() {
    replay("request_decoders", targets::request_decoders::run);
}

#[test]
fn response_decoders_seeds_and_regressions_pass() {
    replay("response_decoders", targets::response_decoders::run);
}
