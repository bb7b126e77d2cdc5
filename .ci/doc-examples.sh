#!/usr/bin/env bash
# rustdoc's checks of the whole workspace (what `cargo doc` would warn
# about) with every rustdoc warning an error, and
# a doc example where one teaches (crate roots, modules, traits, constructors
# and entry points: .ci/missing-doc-examples.py) in every library crate — in one rustdoc
# pass over the workspace, which writes no documentation.
#
# The example check is rustdoc's `missing_doc_code_examples` lint, which is
# unstable: rustdoc of the workspace's own toolchain runs with its unstable
# options unlocked (.ci/rustdoc-unstable; the compiler is not, so the
# dependencies' metadata is the one `cargo clippy` uses) and
# the lint as a warning on every crate. .ci/missing-doc-examples.py reads the
# reports: it fails on the lint's reports for the library crates (leaving out
# those on `impl` blocks, which later rustdoc releases no longer make), and on
# any other warning or error of any crate (what RUSTDOCFLAGS="-D warnings"
# would fail on).
#
# With DOC_FROM_BUILD=1 (CI, right after its test build, in the same
# environment), rustdoc reads the dependencies from the test build's
# libraries (.ci/doc-from-build.py) instead of a check pass of cargo doc's
# own; if that script cannot match the build, cargo doc runs as usual.
#
#   bash .ci/doc-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTDOC="$PWD/.ci/rustdoc-unstable"
# `--check` (unstable too): rustdoc's lints and checks without writing the
# HTML (57 CPU seconds for the workspace instead of 98, the same reports);
# `cargo doc` writes the documentation.
export RUSTDOCFLAGS="-Z unstable-options --check -Zcrate-attr=feature(rustdoc_missing_doc_code_examples) -W rustdoc::missing-doc-code-examples"
libraries=(
  --library kafka-proto --library kafka-client --library kafka-producer
  --library kafka-consumer --library kafka-admin --library kafka-sink --library kafka-schema-registry --library kafka-eos
  --library kafka-testcontainers --library kafka-mock --library kafka-eos-examples
)
if [ "${DOC_FROM_BUILD:-0}" = 1 ]; then
  reports=$(mktemp)
  status=0
  python3 .ci/doc-from-build.py >"$reports" || status=$?
  if [ "$status" = 0 ]; then
    python3 .ci/missing-doc-examples.py "${libraries[@]}" <"$reports"
    exit
  fi
  echo "doc-examples: the test build could not be used (exit $status); running cargo doc" >&2
fi
# (Not through clippy-driver: the lints ran in the build.)
env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS cargo doc --workspace --no-deps --all-features --message-format=json \
  | python3 .ci/missing-doc-examples.py "${libraries[@]}"
