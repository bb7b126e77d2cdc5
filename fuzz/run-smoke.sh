#!/usr/bin/env bash
# Fuzz smoke test for CI: builds every cargo-fuzz target of kafka-proto, then runs
# each for FUZZ_SECONDS (default 20) from a temporary copy of its seed corpus, so
# the work tree stays clean. Prints the executions per target and exits non-zero
# if any target crashes (the input is left in fuzz/artifacts/<target>/).
#
#   bash fuzz/run-smoke.sh                 # from the repository root
#   FUZZ_SECONDS=60 bash fuzz/run-smoke.sh # longer
#   FUZZ_TARGETS="frame_decoder" bash fuzz/run-smoke.sh
#   FUZZ_SKIP_REGRESSIONS=1 bash fuzz/run-smoke.sh  # don't replay regressions/
#   FUZZ_PROFILE=dev bash fuzz/run-smoke.sh  # unoptimized build (CI)
#
# Needs a nightly toolchain (`rustup toolchain install nightly`). It builds
# and runs the libFuzzer binaries itself, with the instrumentation flags that
# `cargo fuzz build` passes (the targets stay cargo-fuzz targets for local
# use): installing cargo-fuzz from source cost a fresh CI machine about a
# minute of CPU.
set -euo pipefail

cd "$(dirname "$0")"
seconds="${FUZZ_SECONDS:-20}"
# Debug assertions and overflow checks in every profile: an arithmetic
# overflow on attacker-controlled lengths is a bug worth failing on. No
# sanitizer by default (FUZZ_SANITIZER=address for one): kafka-proto forbids
# unsafe code, so AddressSanitizer would watch only its dependencies; its
# build took 365 s beside CI's tests, while the build without it takes 49 s
# (73 CPU seconds) on the idle machine. Panics, the overflow checks and
# libFuzzer's RSS limit work without a sanitizer.
# FUZZ_PROFILE=dev builds unoptimized (the same assertions and checks, a
# fraction of the build's CPU, fewer executions per second): CI's smoke run.
# The optimized build uses one codegen unit, as `cargo fuzz build` does (the
# coverage passes defeat ThinLTO's inlining across units).
rustflags=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cllvm-args=-sanitizer-coverage-stack-depth
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0
    --cfg fuzzing
    -Cdebug-assertions
    -Coverflow-checks
)
case "${FUZZ_PROFILE:-release}" in
    release) profile=release; profile_flags=(--release --config 'profile.release.debug="line-tables-only"'); rustflags+=(-Ccodegen-units=1) ;;
    dev) profile=debug; profile_flags=() ;;
    *) echo "FUZZ_PROFILE: release or dev, not '${FUZZ_PROFILE}'" >&2; exit 2 ;;
esac
case "${FUZZ_SANITIZER:-none}" in
    none) ;;
    *) rustflags+=("-Zsanitizer=${FUZZ_SANITIZER}") ;;
esac
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
start=$(date +%s)

# Every [[bin]] of fuzz/Cargo.toml is a target.
targets="${FUZZ_TARGETS:-$(cargo +nightly metadata --no-deps --format-version 1 --manifest-path Cargo.toml |
    python3 -c 'import json, sys; print(" ".join(t["name"] for p in json.load(sys.stdin)["packages"] for t in p["targets"] if "bin" in t["kind"]))')}"

echo "== building fuzz targets: $(echo $targets)"
# --target: the flags reach the targets' code, not build scripts and
# proc macros.
RUSTFLAGS="${rustflags[*]} ${RUSTFLAGS:-}" cargo +nightly build --manifest-path Cargo.toml \
    --target "$triple" "${profile_flags[@]}" --bins
built=$(date +%s)
echo "== build took $((built - start)) s"
bin_dir="${CARGO_TARGET_DIR:-$PWD/target}/$triple/$profile"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
summary=()
for t in $targets; do
    mkdir -p "$work/$t"
    if [ -d "corpus/$t" ]; then
        cp -R "corpus/$t/." "$work/$t/"
    fi
    # Known crashers are replayed with the seeds: they must pass once fixed.
    if [ -z "${FUZZ_SKIP_REGRESSIONS:-}" ] && [ -d "regressions/$t" ]; then
        cp -R "regressions/$t/." "$work/$t/"
    fi
    echo "== running $t for ${seconds}s ($(ls "$work/$t" | wc -l) seeds)"
    log="$work/$t.log"
    t0=$(date +%s)
    mkdir -p "artifacts/$t"
    if "$bin_dir/$t" -artifact_prefix="artifacts/$t/" \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 "$work/$t" >"$log" 2>&1; then
        status=ok
    else
        status=CRASH
        failed+=("$t")
        # The panic message and the failing input (the stack trace is long).
        grep -E -A3 "panicked at|ERROR: AddressSanitizer|ERROR: libFuzzer" "$log" | head -n 20 || true
        grep -E -A2 "Failing input|Test unit written" "$log" || true
    fi
    runs=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
    line="$t: $status in $(($(date +%s) - t0)) s, ${runs:-no 'Done' line}${cov:+ ($cov)}"
    echo "$line"
    summary+=("$line")
done

end=$(date +%s)
echo "== summary (build $((built - start)) s, total $((end - start)) s)"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz smoke: crashes in ${failed[*]}; inputs under fuzz/artifacts/" >&2
    exit 1
fi
echo "fuzz smoke: ${#summary[@]} targets passed"
