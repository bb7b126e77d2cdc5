#!/usr/bin/env bash
# The lints of CI: `cargo clippy` of every target with warnings as errors,
# then `cargo doc` with every rustdoc warning an error and a doc example where
# one teaches (.ci/doc-examples.sh). Neither produces anything the tests use,
# so .ci/run runs this beside the tests, in a target directory of its own
# (CARGO_TARGET_DIR, default target/lint) so that it never waits on the test
# jobs' cargo lock nor they on it; clippy's check metadata of the dependencies
# is what the doc step reuses.
#
#   bash .ci/lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/lint}"
start=$(date +%s)
step() { printf '\n=== lint: %s (t+%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

step "cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc: warnings are errors, and a doc example on the library crates' roots, modules, traits, constructors and entry points (rustdoc's unstable missing_doc_code_examples lint)"
bash .ci/doc-examples.sh

step "done"
