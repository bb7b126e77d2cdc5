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
# Needs a nightly toolchain (`rustup toolchain install nightly`); installs
# cargo-fuzz from crates.io if it is missing.
set -euo pipefail

cd "$(dirname "$0")"
seconds="${FUZZ_SECONDS:-20}"
# Release build with debug assertions and overflow checks: an arithmetic overflow
# on attacker-controlled lengths is a bug worth failing on. No sanitizer by
# default (FUZZ_SANITIZER=address for one): kafka-proto forbids unsafe code, so
# AddressSanitizer would watch only its dependencies; its build took 365 s
# beside CI's tests, while the build without it takes 49 s (73 CPU seconds) on
# the idle machine. Panics, the overflow checks and libFuzzer's RSS limit work
# without a sanitizer.
# FUZZ_PROFILE=dev builds unoptimized (the same assertions and checks, a
# fraction of the build's CPU, fewer executions per second): CI's smoke run.
case "${FUZZ_PROFILE:-release}" in
    release) build_flags=(-O -a -s "${FUZZ_SANITIZER:-none}") ;;
    dev) build_flags=(--dev -a -s "${FUZZ_SANITIZER:-none}") ;;
    *) echo "FUZZ_PROFILE: release or dev, not '${FUZZ_PROFILE}'" >&2; exit 2 ;;
esac
start=$(date +%s)

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz"
    cargo install cargo-fuzz --locked || cargo install cargo-fuzz
fi

targets="${FUZZ_TARGETS:-$(cargo +nightly fuzz list)}"

echo "== building fuzz targets: $(echo $targets)"
cargo +nightly fuzz build "${build_flags[@]}"
built=$(date +%s)
echo "== build took $((built - start)) s"

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
    if cargo +nightly fuzz run "${build_flags[@]}" "$t" "$work/$t" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 >"$log" 2>&1; then
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
