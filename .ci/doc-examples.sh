#!/usr/bin/env bash
# Every public item of every library crate carries a doc example.
# Uses rustdoc's `missing_doc_code_examples` lint, which is unstable: it runs
# on the workspace's own toolchain with rustdoc's unstable options unlocked
# (.ci/rustdoc-unstable), so the dependencies `cargo doc` checked before are
# not built again by another toolchain; .ci/missing-doc-examples.py reads the
# reports (leaving out those on `impl` blocks, which later rustdoc releases no
# longer make) and fails on any.
#
#   bash .ci/doc-examples.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTDOC="$PWD/.ci/rustdoc-unstable"
lint=(-Z unstable-options -Zcrate-attr='feature(rustdoc_missing_doc_code_examples)'
      -W rustdoc::missing-doc-code-examples)
status=0
for crate in kafka-proto kafka-producer kafka-sink kafka-testcontainers kafka-eos-examples; do
  if ! cargo rustdoc -q -p "$crate" --lib --all-features --message-format=json -- "${lint[@]}" 2>/dev/null \
      | python3 .ci/missing-doc-examples.py; then
    echo "doc examples: $crate has public items without an example" >&2
    status=1
  else
    echo "doc examples: $crate ok"
  fi
done
exit $status
