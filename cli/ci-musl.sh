#!/usr/bin/env bash
# Builds the static musl kafka-eos binary (with TLS: rustls and ring), checks
# that it is static, that the default build has no -sys crate and that ring is
# the only crate compiling C, runs --help, then runs the broker round-trip,
# error, TLS and SASL tests (SSL, SASL_SSL and SASL_PLAINTEXT round trips) with
# KAFKA_EOS_BIN pointing at the musl binary (demo, bridge and bench run in the
# main test step).
# ring's C and assembly need a musl C compiler: musl-gcc from the Debian
# package musl-tools, installed here when missing.
# Usage: bash cli/ci-musl.sh           (from anywhere)
#        bash cli/ci-musl.sh --build   everything but the broker tests; prints
#            MUSL_BIN=<path>. .ci/run does this, then runs the same tests'
#            binaries again with KAFKA_EOS_BIN set, beside its test step.
#        bash cli/ci-musl.sh --install  only the musl target and musl-gcc
#            (.ci/run installs them first: it builds everything for musl).
#        bash cli/ci-musl.sh --check BIN  no build: the dependency checks and
#            the static-link and --help checks of BIN, a musl kafka-eos
#            already built (.ci/run: the one its test build made, which the
#            CLI's tests run).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_ONLY=0
INSTALL_ONLY=0
CHECK_BIN=""
case "${1:-}" in
    --build) BUILD_ONLY=1 ;;
    --install) INSTALL_ONLY=1 ;;
    --check)
        CHECK_BIN="${2:?--check needs the binary}"
        BUILD_ONLY=1
        ;;
esac
TARGET=x86_64-unknown-linux-musl
if ! rustup target list --installed | grep -x "$TARGET" >/dev/null; then
    rustup target add "$TARGET"
fi
if ! command -v musl-gcc >/dev/null; then
    SUDO=""
    if [[ "$(id -u)" != 0 ]]; then
        SUDO="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends musl-tools
fi
if ((INSTALL_ONLY)); then
    exit 0
fi
if cargo tree -p kafka-eos-cli -e normal --prefix none | grep -E -- '-sys( |$)'; then
    echo "ci-musl: a -sys crate is in kafka-eos-cli's default dependency tree" >&2
    exit 1
fi
# The crates that depend on cc (compile C) in the default build: exactly ring.
c_crates=$(cargo tree -p kafka-eos-cli -e normal,build -i cc --depth 1 --prefix none |
    awk 'NR > 1 && $1 !~ /^\[/ {print $1}' | sort -u | paste -sd ' ' -)
if [[ "$c_crates" != "ring" ]]; then
    echo "ci-musl: crates compiling C: '$c_crates'; only ring (TLS) is allowed" >&2
    exit 1
fi
# CI builds the dev profile (CI_MUSL_PROFILE, default dev; release for the
# shipped binary): the link (static, ring's C through musl-gcc) and the
# behaviour checked below are the same, the optimizer's run is not needed to
# check them and takes 2.7 times as long (174 s against 65 s on two cores).
PROFILE="${CI_MUSL_PROFILE:-dev}"
if [[ -n "$CHECK_BIN" ]]; then
    BIN="$CHECK_BIN"
else
    cargo build --profile "$PROFILE" --locked -p kafka-eos-cli --target "$TARGET"
    TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
    if [[ "$PROFILE" == dev ]]; then
        BIN="$TARGET_DIR/$TARGET/debug/kafka-eos"
    else
        BIN="$TARGET_DIR/$TARGET/$PROFILE/kafka-eos"
    fi
fi
if command -v file >/dev/null && ! file "$BIN" | grep -Eq 'static(-pie)? linked|statically linked'; then
    file "$BIN" >&2
    echo "ci-musl: $BIN is not statically linked" >&2
    exit 1
fi
if ldd "$BIN" 2>&1 | grep "=>" >/dev/null; then
    ldd "$BIN" >&2
    echo "ci-musl: $BIN links shared libraries" >&2
    exit 1
fi
"$BIN" --help >/dev/null
"$BIN" --version
if ((BUILD_ONLY)); then
    echo "MUSL_BIN=$BIN"
    exit 0
fi
KAFKA_EOS_BIN="$BIN" cargo test --locked -p kafka-eos-cli --test integration -- roundtrip:: cli_errors:: tls:: sasl::
echo "ci-musl: static $BIN OK"
