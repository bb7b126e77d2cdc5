#!/usr/bin/env bash
# Every public item of every library crate carries a doc example.
# Uses rustdoc's `missing_doc_code_examples` lint, which is unstable: runs on the
# nightly toolchain (the fuzz smoke run needs it too) and fails on any report.
#
#   bash .ci/doc-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
lint=(-Z unstable-options -Zcrate-attr='feature(rustdoc_missing_doc_code_examples)'
      -D rustdoc::missing-doc-code-examples)
status=0
for crate in kafka-proto kafka-producer kafka-sink kafka-testcontainers kafka-eos-examples; do
  if ! out=$(cargo +nightly rustdoc -p "$crate" --lib --all-features -- "${lint[@]}" 2>&1); then
    echo "$out" | grep -B2 -A8 'missing code example' | head -60 || echo "$out" | tail -30
    echo "doc examples: $crate has public items without an example" >&2
    status=1
  else
    echo "doc examples: $crate ok"
  fi
done
exit $status
