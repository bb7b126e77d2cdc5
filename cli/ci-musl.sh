#!/usr/bin/env bash
# Builds the static musl kafka-eos binary, checks that it is static and that
# the default build has no -sys crate, runs --help, then runs the broker
# round-trip and error tests with KAFKA_EOS_BIN pointing at
# the musl binary (demo, bridge and bench run in the main test step).
# Usage: bash cli/ci-musl.sh   (from anywhere; called by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=x86_64-unknown-linux-musl
if ! rustup target list --installed | grep -qx "$TARGET"; then
    rustup target add "$TARGET"
fi
if cargo tree -p kafka-eos -e normal --prefix none | grep -E -- '-sys( |$)'; then
    echo "ci-musl: a -sys crate is in kafka-eos's default dependency tree" >&2
    exit 1
fi
cargo build --release --locked -p kafka-eos --target "$TARGET"
BIN="$PWD/target/$TARGET/release/kafka-eos"
if command -v file >/dev/null && ! file "$BIN" | grep -Eq 'static(-pie)? linked|statically linked'; then
    file "$BIN" >&2
    echo "ci-musl: $BIN is not statically linked" >&2
    exit 1
fi
if ldd "$BIN" 2>&1 | grep -q '=>'; then
    ldd "$BIN" >&2
    echo "ci-musl: $BIN links shared libraries" >&2
    exit 1
fi
"$BIN" --help >/dev/null
"$BIN" --version
KAFKA_EOS_BIN="$BIN" cargo test --locked -p kafka-eos --test roundtrip --test cli_errors
echo "ci-musl: static $BIN OK"
