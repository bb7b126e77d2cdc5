#!/usr/bin/env bash
# The lints of CI: `cargo clippy` of every target with warnings as errors,
# then `cargo doc` with every rustdoc warning an error and a doc example where
# one teaches (.ci/doc-examples.sh), which reuses clippy's check metadata of
# the dependencies. .ci/run applies the same clippy lints while it builds the
# tests (clippy-driver as cargo's RUSTC_WORKSPACE_WRAPPER: the workspace is
# compiled once), then runs .ci/doc-examples.sh.
#
#   bash .ci/lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { printf '\n=== lint: %s (t+%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

step "cargo clippy"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo doc: warnings are errors, and a doc example on the library crates' roots, modules, traits, constructors and entry points (rustdoc's unstable missing_doc_code_examples lint)"
bash .ci/doc-examples.sh

step "done"
