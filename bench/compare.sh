#!/usr/bin/env bash
# Side-by-side benchmark of three clients against one Kafka 4.4 broker:
# ours (kafka-eos, bench/peers/ours), librdkafka (the rdkafka crate,
# bench/peers/rdkafka) and franz-go (bench/peers/franz-go): producing,
# consuming and exactly-once copying. All three run the same workload loop
# and print one JSON line each:
#   {"client":..., "settings":..., "records":..., "bytes":..., "secs":..., "commit_ms":[...]}
# (the e2e modes print the lines of bench/peers/shared/e2e.rs).
#
# Usage (from anywhere; take the shared broker lock on a shared machine):
#   flock /tmp/kafka-eos-broker.lock bash bench/compare.sh
#   RECORDS=20000 ROUNDS=1 WORKLOADS="idem-100 txn-100ms" bash bench/compare.sh
#   SETTINGS=defaults RECORDS=20000 ROUNDS=1 bash bench/compare.sh
#   E2E_SECS=3 ROUNDS=1 WORKLOADS="e2e-20k e2e-20k-txn e2e-copy" bash bench/compare.sh
#
# Environment:
#   RECORDS     records per run at 100 B (default 1000000)
#   RECORDS_1K  records per run at 1 KiB (default RECORDS / 2)
#   RECORDS_TXN_1S  records per txn-1s run (default 5 x RECORDS: a run
#               spans several 1 s transactions, not only the final commit)
#   ROUNDS      rounds per workload (default 5); round r runs the clients in
#               an order rotated by r
#   WORKLOADS   space-separated subset of: idem-100 idem-100-keyed idem-1k
#               idem-1k-keyed txn-100ms txn-1s lz4-1k zstd-1k consume-100
#               consume-1k consume-committed copy-100 (default: all of
#               these), and the end-to-end latency workloads e2e-20k
#               e2e-100k e2e-20k-txn e2e-100k-txn e2e-copy (only when named)
#   SETTINGS    equal (default): every client gets the same explicit
#               producer and fetch settings (below). defaults: each client
#               as shipped, given only what the workload needs to exist
#               (bootstrap, topic, transactional id, group id, and the
#               settings that define the workload: idempotence for idem-*,
#               read_committed, the start from the earliest offset and no
#               auto-commit for copy, read_committed for e2e readers); for
#               ours in copy-100 what `kafka-eos copy` sets by default. Only
#               idem-100 idem-1k txn-100ms consume-100 consume-1k copy-100
#               and the e2e-* workloads (default: the first six). The run's
#               header prints, per workload and client, what it is given
#               (each peer's --print-settings) and the defaults that then
#               apply; every result row and summary row names the mode
#   E2E_SECS    seconds of fixed-rate load per e2e run (default 20: 400,000
#               records at 20k/s, 400 beyond the p99.9)
#   E2E_WARMUP_SECS  seconds of each e2e warm-up run (default 2)
#   E2E_COPY_RATE  records per second into e2e-copy (default 20000)
#   E2E_JAVA_RECORDS  records of the java reference row of e2e-20k and
#               e2e-100k (Kafka's EndToEndLatency, serial; default 10000)
#   WINDOW      records outstanding at most (default 16 MiB / (value size +
#               16), as `kafka-eos bench`: half of the default buffer.memory)
#   WARMUP      records of one untimed 100 B run per client after the broker
#               starts (default min(100000, RECORDS))
#   WORKLOAD_WARMUP  untimed runs of every client at the start of each
#               workload, before round 0 (default 1; 0 for none). The first
#               run of a workload meets a broker still busy with what came
#               before (filling the input, deleting the last workload's
#               topics, code paths not yet compiled) and ran 20-50% slower
#               for whichever client came first; without this run that was
#               always the first client of CLIENTS.
#   BROKER_HEAP broker JVM heap (default 1g)
#   BROKER_JVM  full (default): the broker runs with full JIT (steady state);
#               default: the harness's default broker JVM (C1 only, fast
#               start), as a developer's broker runs; BROKER_HEAP still applies
#   LATENCY_MS  when set: the clients reach the broker through the harness's
#               proxy, which delays every chunk by this many ms in each
#               direction (a round trip 2 x LATENCY_MS longer: a broker
#               across a network)
#   BROKER_TMPDIR where the broker keeps its logs (default /dev/shm when it
#               is a writable tmpfs, else the system temp dir; /var/tmp puts
#               them on the disk: the header names the directory and its file
#               system, and checks that the broker's data directory is there): on this
#               machine's virtual disk, writeback stalls made the 1 KiB runs
#               swing 2-3x between rounds for every client while neither the
#               client nor the broker used the CPU they had
#   CLIENTS     space-separated subset of: ours rdkafka franz-go java (default:
#               all). java (bench/peers/java: Kafka's own tools run in a cold
#               JVM, ConsumerPerformance and TransactionalMessageCopier) is a
#               reference row of the consume workloads and copy-100 only, not
#               a target: see the caveats in bench/peers/java/bench-java
#   PERF_STAT   1: count each client's context switches, system calls and
#               futex calls with `perf stat` (software events; perf must be
#               installed and allowed): per-round columns per 1M records and
#               ratios in the summary. The wake-ups between threads that
#               system time is made of, counted instead of timed
#   BASELINE_BIN  another build of bench-ours (say, of the commit before a
#               change), run as client "baseline" beside the others and
#               compared with ours like a peer: an A/B of a change
#   OURS_PROPS  extra producer settings for ours, "key=value,key=value"
#               (say connections.per.broker=1); with BASELINE_BIN a wrapper
#               that unsets it and runs bench-ours, an A/B of one setting
#   BENCH_VALUES  random: ours (and a BASELINE_BIN of it) send a different
#               slice of 8 MiB of pseudo-random bytes as each record's value
#               in the producer workloads, data that does not compress (the
#               shared fixed text compresses far better than real data); for
#               an A/B of ours only: the peers send the fixed text
#   JOBS        cargo build jobs (default: cargo's)
#   SKIP_BUILD  1: use the binaries already built
#   CARGO_TARGET_DIR  honoured: one target directory for the workspace and
#               both peer crates (otherwise each uses its own target/)
#
# Producer workloads (idem-*, txn-*, lz4-1k, zstd-1k). Every run: a fresh
# 6-partition topic (created before, one record written
# to each partition so that all accept writes, deleted after),
# acks=all, idempotence, linger.ms=5, batch.size=16384, fixed value content,
# null keys or key = record index as a decimal string; sends as fast as the
# window allows (the oldest outstanding record awaited once more than WINDOW
# are outstanding); time from the first send to the last acknowledgement
# (transactional: to the last commit's completion; a commit every 100 ms or
# 1 s, each commit's latency recorded). Measured around each process with
# /usr/bin/time: user and system CPU seconds (10 ms resolution, so runs
# should last seconds) and the peak RSS. Exit status 0
# only if every run acknowledged every record.
#
# Consumer workloads (consume-*), the fair setup of a side-by-side
# consumer benchmark: one 6-partition topic filled once per workload by
# `bench-topic fill` (record i in partition i mod 6, idempotent) and read by
# every client in every round; manual assignment of all partitions from the
# start, the same explicit fetch settings for every client (max wait 500 ms,
# min bytes 1, fetch.max.bytes 50 MiB, max.partition.fetch.bytes 1 MiB, CRCs
# checked); the clock runs from before the client is created to the last
# record. consume-100 and consume-1k: RECORDS / RECORDS_1K records,
# read_uncommitted. consume-committed: RECORDS committed 100 B records in
# transactions of TXN_RECORDS (default 2000), every third transaction
# aborted (half as many aborted records, each value starting with `x`),
# read_committed: a client that delivers an aborted record fails its run.
#
# copy-100: exactly-once consume-transform-produce of RECORDS committed 100 B
# records (one input topic filled once): a fresh consumer group, output
# topic and transactional id per run; each client's own EOS loop (ours:
# ConsumeTransformProduce, as `kafka-eos copy`; franz-go:
# GroupTransactSession; librdkafka: the send_offsets_to_transaction loop),
# each record to the same partition of the output, a commit every 100 ms;
# the clock runs from the first input record to the commit that covers the
# last (the group join is not timed). java, as a reference row: Kafka's
# TransactionalMessageCopier (--group-mode --use-group-metadata), whose loop
# is serial (poll, send, sendOffsetsToTransaction, commit, poll) with a
# transaction per poll of a fixed count of records (JAVA_COPY_RATE x 100 ms,
# default 2000, sized so that its median transaction lasts about 100 ms on
# the 2-core benchmark machine; its stderr line shows the measured lengths)
# and its own producer settings (batch.size=512); clock from the first
# beginTransaction (right after the poll that returned the first records) to
# the last commit's completion, and each commit's latency from the start of
# sendOffsetsToTransaction (librdkafka and franz-go: from the end of the
# sends), read from its producer's log at 1 ms resolution; success is its
# final status reporting RECORDS copied. JVM start-up and the group join are
# outside its time but inside its CPU and RSS.
#
# End-to-end latency under a fixed load (e2e-*; bench/peers/shared/e2e.rs):
# per run a fresh 6-partition topic; a reader process of the client
# (read_committed, every partition from the start) starts first and reports
# ready once the topic's `ready` records arrived from every partition; then
# a producer process of the same client sends E2E_SECS x rate records of
# 100 B at a fixed rate, each value carrying its index and its scheduled
# send time (t0 + i / rate: a sender behind schedule sends what is due at
# once with the scheduled times unchanged, so a stall is counted, not
# hidden: no coordinated omission). The reader records now - scheduled time
# per record as it is handed to the application, and counts records lost
# and duplicated (each must be 0, else the run fails). e2e-20k, e2e-100k:
# 20,000 and 100,000 records/s, idempotent; e2e-20k-txn, e2e-100k-txn: the
# same transactional, a commit once the transaction is 100 ms old
# (checked after each batch of due records; the sender waits for the
# commit, the records due meanwhile keep their scheduled times). e2e-copy:
# the producer writes an input topic at E2E_COPY_RATE, the client's
# exactly-once copy (as copy-100: a fresh group, commit every 100 ms) copies
# it to the output topic, the reader reads the output: latency from the
# input's scheduled time to the output record visible read_committed. The
# clients: ours, rdkafka and franz-go, each as producer, reader (and
# copier) itself; java (Kafka's EndToEndLatency, a serial one-record
# ping-pong: see bench/peers/java/bench-java) as a reference row of e2e-20k
# and e2e-100k only. Results: p50, p99, p99.9 and max per run, records
# lost and duplicated, how far the sender fell behind schedule at most, the
# commits, and the CPU of each process.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RECORDS=${RECORDS:-1000000}
RECORDS_1K=${RECORDS_1K:-$((RECORDS / 2))}
RECORDS_TXN_1S=${RECORDS_TXN_1S:-$((RECORDS * 5))}
ROUNDS=${ROUNDS:-5}
PERF_STAT=${PERF_STAT:-0}
ALL_WORKLOADS="idem-100 idem-100-keyed idem-1k idem-1k-keyed txn-100ms txn-1s lz4-1k zstd-1k consume-100 consume-1k consume-committed copy-100"
E2E_WORKLOADS="e2e-20k e2e-100k e2e-20k-txn e2e-100k-txn e2e-copy"
DEFAULTS_WORKLOADS="idem-100 idem-1k txn-100ms consume-100 consume-1k copy-100"
SETTINGS=${SETTINGS:-equal}
TXN_RECORDS=${TXN_RECORDS:-2000}
if [[ $SETTINGS == defaults ]]; then
    WORKLOADS=${WORKLOADS:-$DEFAULTS_WORKLOADS}
else
    WORKLOADS=${WORKLOADS:-$ALL_WORKLOADS}
fi
E2E_SECS=${E2E_SECS:-20}
E2E_WARMUP_SECS=${E2E_WARMUP_SECS:-2}
E2E_COPY_RATE=${E2E_COPY_RATE:-20000}
E2E_JAVA_RECORDS=${E2E_JAVA_RECORDS:-10000}
WARMUP=${WARMUP:-$((RECORDS < 100000 ? RECORDS : 100000))}
WORKLOAD_WARMUP=${WORKLOAD_WARMUP:-1}
BROKER_HEAP=${BROKER_HEAP:-1g}
if [[ -z ${BROKER_TMPDIR:-} ]]; then
    BROKER_TMPDIR=${TMPDIR:-/tmp}
    if [[ -w /dev/shm ]] && [[ $(stat -f -c %T /dev/shm 2>/dev/null) == tmpfs ]]; then
        BROKER_TMPDIR=/dev/shm
    fi
fi
PARTITIONS=6
CLIENTS_ENV=${CLIENTS:-}
CLIENTS=(ours rdkafka franz-go java)

WORK=$(mktemp -d /tmp/kafka-eos-compare.XXXXXX)
RESULTS=$WORK/results.tsv
E2E_RESULTS=$WORK/e2e.tsv
BROKER_PID=

cleanup() {
    if [[ -n $BROKER_PID ]] && kill -0 "$BROKER_PID" 2>/dev/null; then
        kill -INT "$BROKER_PID" 2>/dev/null || true
        for _ in $(seq 60); do
            kill -0 "$BROKER_PID" 2>/dev/null || break
            sleep 0.5
        done
        kill -TERM "$BROKER_PID" 2>/dev/null || true
        wait "$BROKER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

die() {
    echo "compare.sh: $*" >&2
    exit 1
}

case $SETTINGS in
    equal) ;;
    defaults) ;;
    *) die "SETTINGS must be equal or defaults" ;;
esac
for w in $WORKLOADS; do
    [[ " $ALL_WORKLOADS $E2E_WORKLOADS " == *" $w "* ]] || die "unknown workload $w (known: $ALL_WORKLOADS $E2E_WORKLOADS)"
    [[ $SETTINGS == equal || " $DEFAULTS_WORKLOADS $E2E_WORKLOADS " == *" $w "* ]] ||
        die "SETTINGS=defaults runs only $DEFAULTS_WORKLOADS $E2E_WORKLOADS (not $w)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is needed"
command -v go >/dev/null || die "go is needed to build the franz-go peer"
if ((PERF_STAT)); then
    perf stat -x, -e context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_futex -- true >/dev/null 2>&1 ||
        die "PERF_STAT=1: perf stat cannot count context switches and system calls here"
fi

machine() {
    echo "nproc: $(nproc); model name: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    echo "load average (1/5/15 min) $1: $(cut -d' ' -f1-3 /proc/loadavg)"
}

# ---------------------------------------------------------------- build
echo "== machine"
machine "at start"
echo "kernel $(uname -r); $(rustc --version); $(go version)"
echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"

WS_TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
OURS_TARGET=${CARGO_TARGET_DIR:-$ROOT/bench/peers/ours/target}
RDK_TARGET=${CARGO_TARGET_DIR:-$ROOT/bench/peers/rdkafka/target}
GO_BIN=$ROOT/bench/peers/franz-go/bench-franz-go
jobs=()
[[ -n ${JOBS:-} ]] && jobs=(-j "$JOBS")
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    echo "== build (release)"
    (cd "$ROOT" && cargo build --release "${jobs[@]}" -p kafka-testcontainers --bin kafka-dev)
    # bench-topic (topic creation) comes with ours, needed in every run.
    cargo build --release "${jobs[@]}" --manifest-path "$ROOT/bench/peers/ours/Cargo.toml"
    if [[ " ${CLIENTS_ENV:-rdkafka} " == *" rdkafka "* ]]; then
        cargo build --release "${jobs[@]}" --manifest-path "$ROOT/bench/peers/rdkafka/Cargo.toml"
    fi
    if [[ " ${CLIENTS_ENV:-franz-go} " == *" franz-go "* ]]; then
        (cd "$ROOT/bench/peers/franz-go" && go build -o bench-franz-go .)
    fi
fi
KAFKA_DEV=$WS_TARGET/release/kafka-dev
TOPIC_BIN=$OURS_TARGET/release/bench-topic
declare -A BIN=(
    [ours]=$OURS_TARGET/release/bench-ours
    [rdkafka]=$RDK_TARGET/release/bench-rdkafka
    [franz-go]=$GO_BIN
    [java]=$ROOT/bench/peers/java/bench-java
)
if [[ -n ${CLIENTS_ENV:-} ]]; then
    read -r -a CLIENTS <<<"$CLIENTS_ENV"
fi
if [[ -n ${BASELINE_BIN:-} ]]; then
    BIN[baseline]=$BASELINE_BIN
    CLIENTS+=(baseline)
fi
# The clients compared with ours in the summary: every other one run.
PEERS=""
for c in "${CLIENTS[@]}"; do
    [[ $c == ours ]] || PEERS="$PEERS $c"
done
for b in "$KAFKA_DEV" "$TOPIC_BIN"; do
    [[ -x $b ]] || die "missing $b (build failed, or SKIP_BUILD=1 without a build)"
done
for c in "${CLIENTS[@]}"; do
    [[ -x ${BIN[$c]:-} ]] || die "missing ${BIN[$c]:-the binary of client $c} (build failed, or SKIP_BUILD=1 without a build)"
done

# ---------------------------------------------------------------- broker
echo "== broker"
BROKER_JVM=${BROKER_JVM:-full}
broker_args=(--version 4.4.0 --nodes 1 --heap "$BROKER_HEAP")
case $BROKER_JVM in
    full) broker_args+=(--full-jit) ;;
    default) ;;
    *) die "BROKER_JVM must be full or default" ;;
esac
[[ -n ${LATENCY_MS:-} ]] && broker_args+=(--latency-ms "$LATENCY_MS")
TMPDIR=$BROKER_TMPDIR "$KAFKA_DEV" "${broker_args[@]}" \
    >"$WORK/broker.out" 2>"$WORK/broker.err" &
BROKER_PID=$!
for _ in $(seq 600); do
    grep -q '^BOOTSTRAP=' "$WORK/broker.out" && break
    kill -0 "$BROKER_PID" 2>/dev/null || { cat "$WORK/broker.err" >&2; die "the broker did not start"; }
    sleep 1
done
BOOTSTRAP=$(sed -n 's/^BOOTSTRAP=//p' "$WORK/broker.out")
[[ -n $BOOTSTRAP ]] || die "no BOOTSTRAP line from kafka-dev within 600 s"
echo "Kafka 4.4.0, one node, JVM $BROKER_JVM (full: full JIT; default: C1 only), heap $BROKER_HEAP, logs under $BROKER_TMPDIR ($(stat -f -c %T "$BROKER_TMPDIR")), at $BOOTSTRAP${LATENCY_MS:+, through proxies adding $LATENCY_MS ms each way}"
# Where the broker's data directory really is: the harness's cluster
# directory, named on its JVM's command line.
broker_dir() {
    local pids=("$BROKER_PID") p dir
    while ((${#pids[@]})); do
        p=${pids[0]}
        pids=("${pids[@]:1}")
        dir=$(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -o '/[^ =:]*/kafka-eos-cluster-[^/ ]*' | head -1 || true)
        [[ -n $dir ]] && { echo "$dir"; return; }
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do pids+=("$c"); done
    done
}
BROKER_DIR=$(broker_dir)
if [[ -n $BROKER_DIR ]]; then
    echo "broker data directory: $BROKER_DIR ($(stat -f -c %T "$BROKER_DIR"))"
    [[ $(realpath "$BROKER_DIR") == "$(realpath "$BROKER_TMPDIR")"/* ]] ||
        die "the broker's data directory $BROKER_DIR is not under BROKER_TMPDIR=$BROKER_TMPDIR"
else
    echo "broker data directory: not found on the JVM's command line"
fi

# ---------------------------------------------------------------- runs
# spec WORKLOAD: sets MODE SIZE KEYED COMP TXN N WIN ISOLATION FILL_TXN
# (and for e2e-*: RATE, and COPY_TXN the copier's commit interval)
spec() {
    MODE=produce KEYED=0 COMP=none TXN=0 ISOLATION=uncommitted FILL_TXN= RATE=0 COPY_TXN=0
    case $1 in
        e2e-20k) MODE=e2e SIZE=100 RATE=20000 ;;
        e2e-100k) MODE=e2e SIZE=100 RATE=100000 ;;
        e2e-20k-txn) MODE=e2e SIZE=100 RATE=20000 TXN=100 ;;
        e2e-100k-txn) MODE=e2e SIZE=100 RATE=100000 TXN=100 ;;
        e2e-copy) MODE=e2e-copy SIZE=100 RATE=$E2E_COPY_RATE COPY_TXN=100 ;;
        consume-100) MODE=consume SIZE=100 ;;
        consume-1k) MODE=consume SIZE=1024 ;;
        consume-committed) MODE=consume SIZE=100 ISOLATION=committed FILL_TXN=$TXN_RECORDS ;;
        copy-100) MODE=copy SIZE=100 TXN=100 ;;
        idem-100) SIZE=100 ;;
        idem-100-keyed) SIZE=100 KEYED=1 ;;
        idem-1k) SIZE=1024 ;;
        idem-1k-keyed) SIZE=1024 KEYED=1 ;;
        txn-100ms) SIZE=100 TXN=100 ;;
        txn-1s) SIZE=100 TXN=1000 ;;
        lz4-1k) SIZE=1024 COMP=lz4 ;;
        zstd-1k) SIZE=1024 COMP=zstd ;;
    esac
    if ((SIZE == 1024)); then N=$RECORDS_1K; else N=$RECORDS; fi
    [[ $1 == txn-1s ]] && N=$RECORDS_TXN_1S
    [[ $MODE == e2e* ]] && N=$((RATE * E2E_SECS))
    WIN=${WINDOW:-$((16777216 / (SIZE + 16)))}
}

# CPU clock ticks (user + system) of a process and all its descendants: the
# broker's JVM runs under kafka-dev. Its change around a run is the broker's
# CPU for that run (topic creation and deletion excluded), which shows when
# the broker, not the client, bounds the throughput (CPU of descendants that
# already exited is not counted: the broker runs as one long-lived JVM).
CLK_TCK=$(getconf CLK_TCK)
tree_cpu_ticks() {
    local pids=("$1") all=() p total=0 stat rest
    while ((${#pids[@]})); do
        p=${pids[0]}
        pids=("${pids[@]:1}")
        all+=("$p")
        for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do pids+=("$c"); done
    done
    for p in "${all[@]}"; do
        stat=$(cat /proc/"$p"/stat 2>/dev/null) || continue
        rest=${stat##*) }
        # fields after "(comm) ": state is 3, utime 14 and stime 15 overall
        read -r -a f <<<"$rest"
        total=$((total + f[11] + f[12]))
    done
    echo "$total"
}

FAILURES=0
SEQ=0
# run_one CLIENT WORKLOAD ROUND: one measured process; appends a line to
# $RESULTS (workload round client records size secs user sys rss_kb commits
# p50_ms p99_ms) unless ROUND is "warmup".
run_one() {
    local client=$1 wl=$2 round=$3
    SEQ=$((SEQ + 1))
    local topic="compare-$wl-$round-$client-$$-$SEQ" args
    case $MODE in
        produce)
            "$TOPIC_BIN" "$BOOTSTRAP" create "$topic" "$PARTITIONS"
            args=(--bootstrap "$BOOTSTRAP" --topic "$topic" --records "$N" --size "$SIZE"
                --window "$WIN" --compression "$COMP")
            ((KEYED)) && args+=(--keyed)
            ((TXN)) && args+=(--txn-ms "$TXN" --txn-id "$topic")
            ;;
        consume)
            args=(--mode consume --bootstrap "$BOOTSTRAP" --topic "$INPUT" --partitions "$PARTITIONS"
                --records "$N" --size "$SIZE" --isolation "$ISOLATION")
            ;;
        copy)
            "$TOPIC_BIN" "$BOOTSTRAP" create "$topic" "$PARTITIONS"
            args=(--mode copy --bootstrap "$BOOTSTRAP" --topic "$INPUT" --out "$topic" --group "$topic"
                --txn-id "$topic" --txn-ms "$TXN" --partitions "$PARTITIONS" --records "$N" --size "$SIZE")
            ;;
    esac
    local ok=1 broker_before broker_after
    local perf=()
    ((PERF_STAT)) && perf=(perf stat -x, -o "$WORK/perf"
        -e context-switches,raw_syscalls:sys_enter,syscalls:sys_enter_futex --)
    broker_before=$(tree_cpu_ticks "$BROKER_PID")
    args+=(--settings "$SETTINGS")
    "${perf[@]}" /usr/bin/time -f "%U %S %M" -o "$WORK/time" "${BIN[$client]}" "${args[@]}" \
        >"$WORK/out" 2>"$WORK/err" || ok=0
    broker_after=$(tree_cpu_ticks "$BROKER_PID")
    [[ $MODE == consume ]] || "$TOPIC_BIN" "$BOOTSTRAP" delete "$topic" || true
    local line secs records
    line=$(grep '^{' "$WORK/out" | tail -1 || true)
    secs=$(sed -n 's/.*"secs":\([0-9.eE+-]*\).*/\1/p' <<<"$line")
    records=$(sed -n 's/.*"records":\([0-9]*\).*/\1/p' <<<"$line")
    if ((ok == 0)) || [[ -z $secs || $records != "$N" ]]; then
        FAILURES=$((FAILURES + 1))
        echo "FAILED: $client $wl round $round" >&2
        sed 's/^/  /' "$WORK/err" "$WORK/out" >&2
        return 0
    fi
    [[ $round == warmup ]] && return 0
    # What the producers' requests carried and how their commits split (the
    # peers print it to stderr).
    grep -h '^bench-[a-z-]* \(wire\|commits\):' "$WORK/err" | sed "s/^bench-\([a-z-]*\) \([a-z]*\):/  $wl round $round, \1 \2:/" || true
    local user sys rss
    read -r user sys rss < <(tail -1 "$WORK/time")
    local commits
    commits=$(sed -n 's/.*"commit_ms":\[\([^]]*\)\].*/\1/p' <<<"$line" | tr ',' '\n' | sed '/^$/d' | sort -g)
    local n p50=- p99=-
    n=$(grep -c . <<<"$commits" || true)
    if ((n > 0)); then
        # nearest rank: the ceil(n*p)-th smallest
        p50=$(awk -v n="$n" 'BEGIN{r=int(n*0.5); if (r<n*0.5) r++; if (r<1) r=1} NR==r' <<<"$commits")
        p99=$(awk -v n="$n" 'BEGIN{r=int(n*0.99); if (r<n*0.99) r++; if (r<1) r=1} NR==r' <<<"$commits")
    fi
    local broker_cpu
    broker_cpu=$(awk -v a="$broker_before" -v b="$broker_after" -v hz="$CLK_TCK" 'BEGIN{printf "%.2f", (b - a) / hz}')
    local ctx=- syscalls=- futex=-
    if ((PERF_STAT)); then
        ctx=$(awk -F, '$3 == "context-switches" {print $1}' "$WORK/perf")
        syscalls=$(awk -F, '$3 == "raw_syscalls:sys_enter" {print $1}' "$WORK/perf")
        futex=$(awk -F, '$3 == "syscalls:sys_enter_futex" {print $1}' "$WORK/perf")
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$wl" "$round" "$client" "$N" "$SIZE" "$secs" "$user" "$sys" "$rss" "$n" "$p50" "$p99" \
        "$broker_cpu" "${ctx:--}" "${syscalls:--}" "${futex:--}" "$SETTINGS" >>"$RESULTS"
}

# e2e_args ROLE TOPIC OUT N: sets E2E_CMD, the command line of one process
# of an e2e run of N records (ROLE: produce, read or copy, which reads
# TOPIC and writes OUT; spec already run).
e2e_args() {
    local role=$1 topic=$2 out=${3:-} n=$4
    case $role in
        produce)
            E2E_CMD=(--mode e2e-produce --bootstrap "$BOOTSTRAP" --topic "$topic" --records "$n"
                --size "$SIZE" --window "$WIN" --rate "$RATE")
            ((TXN)) && E2E_CMD+=(--txn-ms "$TXN" --txn-id "$topic-producer")
            ;;
        read)
            E2E_CMD=(--mode e2e-read --bootstrap "$BOOTSTRAP" --topic "$topic" --partitions "$PARTITIONS"
                --records "$n" --size "$SIZE" --ready-file "$WORK/ready.read")
            ;;
        copy)
            # The copier's input: the records, the `ready` record of each
            # partition and the producer's warm-up record.
            E2E_CMD=(--mode copy --e2e --bootstrap "$BOOTSTRAP" --topic "$topic" --out "$out"
                --group "$out" --txn-id "$out-copier" --txn-ms "$COPY_TXN" --partitions "$PARTITIONS"
                --records "$((n + PARTITIONS + 1))" --size "$SIZE" --ready-file "$WORK/ready.copy")
            ;;
    esac
    E2E_CMD+=(--settings "$SETTINGS")
}

# wait_ready FILE PID: until FILE exists (0) or PID exits (1), 120 s at most.
wait_ready() {
    local i
    for ((i = 0; i < 2400; i++)); do
        [[ -e $1 ]] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# json_field LINE NAME: a number (or null) of a result line.
json_field() {
    sed -n "s/.*\"$2\":\(null\|[0-9.eE+-]*\).*/\1/p" <<<"$1"
}

cpu_of() { # TIME-FILE: user + system seconds
    awk '{printf "%.2f", $1 + $2}' <(tail -1 "$1")
}

# run_e2e CLIENT WORKLOAD ROUND SECS: one e2e run (reader, copier for
# e2e-copy, producer); appends a line to $E2E_RESULTS (settings workload
# round client rate records p50 p99 p999 max lost dups lag_max_ms commits
# commit_p50 producer_cpu reader_cpu copier_cpu broker_cpu) unless ROUND is
# "warmup".
run_e2e() {
    local client=$1 wl=$2 round=$3 secs=$4
    SEQ=$((SEQ + 1))
    local topic="compare-$wl-$round-$client-$$-$SEQ" input= n=$((RATE * secs)) ok=1
    local broker_before broker_after line pline
    "$TOPIC_BIN" "$BOOTSTRAP" create "$topic" "$PARTITIONS"
    broker_before=$(tree_cpu_ticks "$BROKER_PID")
    rm -f "$WORK/ready.read" "$WORK/ready.copy" "$WORK/out.read" "$WORK/out.produce" "$WORK/out.copy"
    if [[ $client == java ]]; then
        n=$E2E_JAVA_RECORDS
        /usr/bin/time -f "%U %S %M" -o "$WORK/time.read" "${BIN[java]}" --mode e2e --bootstrap "$BOOTSTRAP" \
            --topic "$topic" --records "$n" --size "$SIZE" --settings "$SETTINGS" \
            >"$WORK/out.read" 2>"$WORK/err.read" || ok=0
        echo '{"lag_max_ms":null,"commit_ms":[]}' >"$WORK/out.produce"
        echo "0 0 0" >"$WORK/time.produce"
    else
        local rpid cpid=
        e2e_args read "$topic" "" "$n"
        /usr/bin/time -f "%U %S %M" -o "$WORK/time.read" "${BIN[$client]}" "${E2E_CMD[@]}" \
            >"$WORK/out.read" 2>"$WORK/err.read" &
        rpid=$!
        wait_ready "$WORK/ready.read" "$rpid" || ok=0
        if ((ok)) && [[ $MODE == e2e-copy ]]; then
            input="$topic-input"
            "$TOPIC_BIN" "$BOOTSTRAP" create "$input" "$PARTITIONS"
            e2e_args copy "$input" "$topic" "$n"
            /usr/bin/time -f "%U %S %M" -o "$WORK/time.copy" "${BIN[$client]}" "${E2E_CMD[@]}" \
                >"$WORK/out.copy" 2>"$WORK/err.copy" &
            cpid=$!
            wait_ready "$WORK/ready.copy" "$cpid" || ok=0
        fi
        if ((ok)); then
            e2e_args produce "${input:-$topic}" "" "$n"
            /usr/bin/time -f "%U %S %M" -o "$WORK/time.produce" "${BIN[$client]}" "${E2E_CMD[@]}" \
                >"$WORK/out.produce" 2>"$WORK/err.produce" || ok=0
        fi
        if ((ok == 0)); then
            kill "$rpid" ${cpid:+"$cpid"} 2>/dev/null || true
        fi
        if [[ -n $cpid ]]; then wait "$cpid" || ok=0; fi
        wait "$rpid" || ok=0
    fi
    broker_after=$(tree_cpu_ticks "$BROKER_PID")
    "$TOPIC_BIN" "$BOOTSTRAP" delete "$topic" || true
    if [[ -n $input ]]; then "$TOPIC_BIN" "$BOOTSTRAP" delete "$input" || true; fi
    line=$(grep '^{' "$WORK/out.read" 2>/dev/null | tail -1 || true)
    pline=$(grep '^{' "$WORK/out.produce" 2>/dev/null | tail -1 || true)
    local lost dups
    lost=$(json_field "$line" lost)
    dups=$(json_field "$line" duplicates)
    if ((ok == 0)) || [[ -z $line || $lost != 0 || $dups != 0 ]]; then
        FAILURES=$((FAILURES + 1))
        echo "FAILED: $client $wl round $round (lost ${lost:-?}, duplicated ${dups:-?})" >&2
        for f in err.read out.read err.copy out.copy err.produce out.produce; do
            [[ -s $WORK/$f ]] && sed "s/^/  $f: /" "$WORK/$f" | tail -20 >&2
        done
        [[ -z $line ]] && return 0
    fi
    [[ $round == warmup ]] && return 0
    local commits cn=0 cp50=-
    commits=$(sed -n 's/.*"commit_ms":\[\([^]]*\)\].*/\1/p' <<<"$pline" | tr ',' '\n' | sed '/^$/d' | sort -g)
    cn=$(grep -c . <<<"$commits" || true)
    if ((cn > 0)); then
        cp50=$(awk -v n="$cn" 'BEGIN{r=int(n*0.5); if (r<n*0.5) r++; if (r<1) r=1} NR==r' <<<"$commits")
    fi
    local copier_cpu=- broker_cpu rate=$RATE
    [[ -n $input ]] && copier_cpu=$(cpu_of "$WORK/time.copy")
    [[ $client == java ]] && rate=serial
    broker_cpu=$(awk -v a="$broker_before" -v b="$broker_after" -v hz="$CLK_TCK" 'BEGIN{printf "%.2f", (b - a) / hz}')
    local f=()
    for k in p50_ms p99_ms p999_ms max_ms; do
        v=$(json_field "$line" "$k")
        f+=("${v/null/-}")
    done
    local lag
    lag=$(json_field "$pline" lag_max_ms)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$SETTINGS" "$wl" "$round" "$client" "$rate" "$n" "${f[0]}" "${f[1]}" "${f[2]}" "${f[3]}" \
        "${lost:--}" "${dups:--}" "${lag/null/-}" "$cn" "$cp50" "$(cpu_of "$WORK/time.produce")" \
        "$(cpu_of "$WORK/time.read")" "$copier_cpu" "$broker_cpu" >>"$E2E_RESULTS"
}

# What each client is given per workload (its --print-settings).
declare -A SHOWN_DEFAULTS=()
echo "== settings: $SETTINGS"
if [[ $SETTINGS == equal ]]; then
    echo "   every client the same explicit producer and fetch settings (see the top of this script)"
else
    echo "   each client as shipped, given only what the workload needs to exist; per workload and client:"
fi
for wl in $WORKLOADS; do
    spec "$wl"
    for c in "${CLIENTS[@]}"; do
        [[ $c == baseline ]] && continue
        case $MODE in
            produce)
                [[ $c == java ]] && continue
                cmd=(--bootstrap "$BOOTSTRAP" --topic T --records "$N" --size "$SIZE" --window "$WIN" --compression "$COMP")
                ((KEYED)) && cmd+=(--keyed)
                ((TXN)) && cmd+=(--txn-ms "$TXN" --txn-id ID)
                ;;
            consume)
                cmd=(--mode consume --bootstrap "$BOOTSTRAP" --topic T --partitions "$PARTITIONS"
                    --records "$N" --size "$SIZE" --isolation "$ISOLATION")
                ;;
            copy)
                cmd=(--mode copy --bootstrap "$BOOTSTRAP" --topic IN --out OUT --group G --txn-id ID
                    --txn-ms "$TXN" --partitions "$PARTITIONS" --records "$N" --size "$SIZE")
                ;;
            e2e | e2e-copy)
                if [[ $c == java ]]; then
                    [[ $MODE == e2e && $TXN == 0 ]] || continue
                    cmd=(--mode e2e --bootstrap "$BOOTSTRAP" --topic T --records "$E2E_JAVA_RECORDS" --size "$SIZE")
                else
                    e2e_args produce T "" "$N"
                    cmd=("${E2E_CMD[@]}")
                fi
                ;;
        esac
        out=$("${BIN[$c]}" "${cmd[@]}" --settings "$SETTINGS" --print-settings 2>&1) || out="(--print-settings failed: $out)"
        if [[ $MODE == e2e* && $c != java ]]; then
            e2e_args read T "" "$N"
            out="$out"$'\n'"reader: $("${BIN[$c]}" "${E2E_CMD[@]}" --print-settings 2>&1)"
            if [[ $MODE == e2e-copy ]]; then
                e2e_args copy IN OUT "$N"
                out="$out"$'\n'"copier: $("${BIN[$c]}" "${E2E_CMD[@]}" --print-settings 2>&1)"
            fi
        fi
        echo "   $wl, $c:"
        # A client's defaults line ("  not set, ...") once per client.
        while IFS= read -r l; do
            if [[ $l == "  not set, "* ]]; then
                [[ ${SHOWN_DEFAULTS[$c]:-} == "$l" ]] && continue
                SHOWN_DEFAULTS[$c]=$l
            fi
            echo "     $l"
        done <<<"$out"
    done
done

echo "== warm-up: $WARMUP records of 100 B per client (untimed)"
N_SAVE=$RECORDS
RECORDS=$WARMUP
spec idem-100
for c in "${CLIENTS[@]}"; do [[ $c == java ]] || run_one "$c" warmup warmup; done
RECORDS=$N_SAVE

# fill_input: the input topic of a consume or copy workload, filled once;
# sets INPUT and N (the records each client must receive).
fill_input() {
    INPUT="compare-input-$1-$$"
    local fill_args=("$PARTITIONS" "$N" "$SIZE")
    [[ -n $FILL_TXN ]] && fill_args+=("$FILL_TXN")
    local t0 line
    t0=$(date +%s.%N)
    line=$("$TOPIC_BIN" "$BOOTSTRAP" fill "$INPUT" "${fill_args[@]}") || die "filling $INPUT failed"
    echo "   input $INPUT: $line ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s)"
    N=$(sed -n 's/^committed=\([0-9]*\).*/\1/p' <<<"$line")
    [[ -n $N ]] || die "bench-topic fill printed no committed count"
}

: >"$RESULTS"
: >"$E2E_RESULTS"
for wl in $WORKLOADS; do
    spec "$wl"
    INPUT=
    if [[ $MODE == e2e* ]]; then
        runs=()
        for c in "${CLIENTS[@]}"; do
            [[ $c == java && ($MODE != e2e || $TXN != 0) ]] || runs+=("$c")
        done
        for ((w = 0; w < WORKLOAD_WARMUP; w++)); do
            echo "== $wl warm-up $w (untimed, ${E2E_WARMUP_SECS} s): ${runs[*]/java/}"
            for c in "${runs[@]}"; do [[ $c == java ]] || run_e2e "$c" "$wl" warmup "$E2E_WARMUP_SECS"; done
        done
        for ((r = 0; r < ROUNDS; r++)); do
            order=()
            for ((i = 0; i < ${#runs[@]}; i++)); do
                order+=("${runs[$(((i + r) % ${#runs[@]}))]}")
            done
            commit_note=
            ((TXN)) && commit_note=", commit every $TXN ms"
            [[ $MODE == e2e-copy ]] && commit_note=", copied exactly once with a commit every $COPY_TXN ms"
            echo "== $wl round $r: ${order[*]} ($RATE records/s of $SIZE B for $E2E_SECS s$commit_note, settings $SETTINGS)"
            for c in "${order[@]}"; do run_e2e "$c" "$wl" "$r" "$E2E_SECS"; done
        done
        continue
    fi
    if [[ $MODE != produce ]]; then
        echo "== $wl: filling the input"
        fill_input "$wl"
    fi
    # The clients of this workload (java: consume and copy only).
    runs=()
    for c in "${CLIENTS[@]}"; do
        [[ $c == java && $MODE == produce ]] || runs+=("$c")
    done
    for ((w = 0; w < WORKLOAD_WARMUP; w++)); do
        echo "== $wl warm-up $w (untimed): ${runs[*]}"
        for c in "${runs[@]}"; do run_one "$c" "$wl" warmup; done
    done
    for ((r = 0; r < ROUNDS; r++)); do
        # Rotated by r.
        order=()
        for ((i = 0; i < ${#runs[@]}; i++)); do
            order+=("${runs[$(((i + r) % ${#runs[@]}))]}")
        done
        echo "== $wl round $r: ${order[*]} ($N records of $SIZE B, window $WIN)"
        for c in "${order[@]}"; do run_one "$c" "$wl" "$r"; done
    done
    if [[ -n $INPUT ]]; then "$TOPIC_BIN" "$BOOTSTRAP" delete "$INPUT" || true; fi
done

# ---------------------------------------------------------------- report
if [[ -s $RESULTS ]]; then
echo
echo "== per-round figures (settings: $SETTINGS)"
awk -F'\t' '
BEGIN {
    printf "%-15s %5s %-8s %9s %11s %8s %8s %7s %7s %10s %9s %8s %7s %8s %8s %9s %9s %8s %9s %8s %s\n",
        "workload", "round", "client", "records", "records/s", "MiB/s", "secs",
        "user s", "sys s", "user s/1M", "sys s/1M", "RSS MB", "commits", "p50 ms", "p99 ms",
        "broker s", "busy cores", "ctx/1M", "sysc/1M", "futex/1M", "settings"
}
function per_m(x) { return (x == "-") ? "-" : sprintf("%.0f", x / $4 * 1e6) }
{
    rate = $4 / $6
    printf "%-15s %5s %-8s %9d %11.0f %8.1f %8.3f %7.2f %7.2f %10.3f %9.3f %8.1f %7s %8s %8s %9.2f %9.2f %8s %9s %8s %s\n",
        $1, $2, $3, $4, rate, rate * $5 / 1048576, $6, $7, $8, $7 / $4 * 1e6, $8 / $4 * 1e6,
        $9 / 1024, ($10 > 0 ? $10 : "-"), $11, $12, $13, ($7 + $8 + $13) / $6,
        per_m($14), per_m($15), per_m($16), $17
}' "$RESULTS"

echo
echo "== per workload: median over rounds of the per-round ratio ours/peer (settings: $SETTINGS)"
echo "   (throughput above 1: ours faster; CPU, RSS and commit latency below 1: ours smaller;"
echo "    CPU/1M is user + system; RSS +MB is the median of ours minus the peer's peak RSS)"
awk -F'\t' -v peers="$PEERS" '
function median(list,    a, n, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return "-"
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(x) { return (x == "-") ? "-" : sprintf("%.2fx", x) }
function ratio(o, p) { return (o == "-" || p == "-" || p + 0 == 0) ? "" : o / p }
{
    key = $1 SUBSEP $2 SUBSEP $3
    secs[key] = $6; user[key] = $7; sys[key] = $8; rss[key] = $9; p50[key] = $11; p99[key] = $12
    ctx[key] = $14; sysc[key] = $15; settings = $17
    if (!($1 in seen)) { seen[$1] = 1; order[++nw] = $1 }
    rounds[$1] = rounds[$1] " " $2
}
END {
    printf "%-15s %-9s %6s %10s %10s %11s %10s %9s %11s %11s %11s %9s %9s %s\n",
        "workload", "peer", "rounds", "throughput", "CPU/1M", "user CPU/1M", "sys CPU/1M",
        "peak RSS", "RSS +MB", "commit p50", "commit p99", "ctx sw", "syscalls", "settings"
    for (w = 1; w <= nw; w++) {
        wl = order[w]
        split(rounds[wl], rs, " ")
        delete uniq
        for (i in rs) uniq[rs[i]] = 1
        npeers = split(peers, peer_list, " ")
        for (pi = 1; pi <= npeers; pi++) {
            peer = peer_list[pi]
            t = a = u = s = m = d = c5 = c9 = cs = sc = ""; n = 0
            for (r in uniq) {
                o = wl SUBSEP r SUBSEP "ours"; q = wl SUBSEP r SUBSEP peer
                if (!(o in secs) || !(q in secs)) continue
                n++
                t = t " " secs[q] / secs[o]
                x = ratio(user[o] + sys[o], user[q] + sys[q]); if (x != "") a = a " " x
                d = d " " (rss[o] - rss[q]) / 1024
                x = ratio(user[o], user[q]); if (x != "") u = u " " x
                x = ratio(sys[o], sys[q]); if (x != "") s = s " " x
                x = ratio(rss[o], rss[q]); if (x != "") m = m " " x
                x = ratio(p50[o], p50[q]); if (x != "") c5 = c5 " " x
                x = ratio(p99[o], p99[q]); if (x != "") c9 = c9 " " x
                x = ratio(ctx[o], ctx[q]); if (x != "") cs = cs " " x
                x = ratio(sysc[o], sysc[q]); if (x != "") sc = sc " " x
            }
            if (n == 0) continue
            md = median(d)
            printf "%-15s %-9s %6d %10s %10s %11s %10s %9s %11s %11s %11s %9s %9s %s\n", wl, peer, n,
                fmt(median(t)), fmt(median(a)), fmt(median(u)), fmt(median(s)), fmt(median(m)),
                (md == "-") ? "-" : sprintf("%+.1f", md), fmt(median(c5)), fmt(median(c9)),
                fmt(median(cs)), fmt(median(sc)), settings
        }
    }
}' "$RESULTS"
fi

if [[ -s $E2E_RESULTS ]]; then
echo
echo "== end-to-end latency per round (settings: $SETTINGS; ms from the scheduled send time to"
echo "   the read_committed reader; java: EndToEndLatency, serial, whole ms, no max; CPU s per process)"
awk -F'\t' '
BEGIN {
    printf "%-13s %5s %-8s %7s %8s %9s %9s %9s %9s %5s %5s %9s %7s %9s %8s %8s %8s %8s %s\n",
        "workload", "round", "client", "rate/s", "records", "p50 ms", "p99 ms", "p99.9 ms", "max ms",
        "lost", "dup", "lag max", "commits", "commit p50", "prod s", "read s", "copy s", "broker s",
        "settings"
}
{
    printf "%-13s %5s %-8s %7s %8s %9s %9s %9s %9s %5s %5s %9s %7s %9s %8s %8s %8s %8s %s\n",
        $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, ($14 > 0 ? $14 : "-"), $15, $16, $17, $18, $19, $1
}' "$E2E_RESULTS"

echo
echo "== end-to-end latency per workload and client: median over rounds (max: the largest),"
echo "   lost/dup summed; ours/peer: ratio of the medians (below 1: ours lower) (settings: $SETTINGS)"
awk -F'\t' '
function median(list,    a, n, i, j, t) {
    n = split(list, a, " ")
    if (n == 0) return "-"
    for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(list, x) { return (x == "-" || x == "") ? list : list " " x }
function r(o, p) { return (o == "-" || p == "-" || p + 0 == 0) ? "-" : sprintf("%.2fx", o / p) }
{
    k = $2 SUBSEP $4
    if (!(k in n)) { order[++nk] = k; wl[k] = $2; cl[k] = $4 }
    n[k]++; settings = $1
    p50[k] = add(p50[k], $7); p99[k] = add(p99[k], $8); p999[k] = add(p999[k], $9)
    if ($10 != "-" && (mx[k] == "" || $10 + 0 > mx[k] + 0)) mx[k] = $10
    lost[k] += $11; dup[k] += $12
}
END {
    printf "%-13s %-8s %6s %9s %9s %9s %9s %6s %5s %11s %11s %11s %s\n", "workload", "client",
        "rounds", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "lost", "dup", "p50 ours/", "p99 ours/",
        "p99.9 ours/", "settings"
    for (i = 1; i <= nk; i++) {
        k = order[i]
        m50[k] = median(p50[k]); m99[k] = median(p99[k]); m999[k] = median(p999[k])
    }
    for (i = 1; i <= nk; i++) {
        k = order[i]; o = wl[k] SUBSEP "ours"
        # (java measures a serial ping-pong, not the fixed load: no ratio)
        have = (o in n) && cl[k] != "ours" && cl[k] != "java"
        printf "%-13s %-8s %6d %9s %9s %9s %9s %6d %5d %11s %11s %11s %s\n", wl[k], cl[k], n[k],
            m50[k], m99[k], m999[k], (mx[k] == "" ? "-" : mx[k]), lost[k], dup[k],
            have ? r(m50[o], m50[k]) : "", have ? r(m99[o], m99[k]) : "", have ? r(m999[o], m999[k]) : "",
            settings
    }
}' "$E2E_RESULTS"
fi

echo
machine "at end"
if ((FAILURES > 0)); then
    echo "compare.sh: $FAILURES run(s) failed (see above)" >&2
    exit 1
fi
