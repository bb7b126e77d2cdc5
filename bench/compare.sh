#!/usr/bin/env bash
# Side-by-side benchmark of three clients against one Kafka 4.4 broker:
# ours (kafka-eos, bench/peers/ours), librdkafka (the rdkafka crate,
# bench/peers/rdkafka) and franz-go (bench/peers/franz-go): producing,
# consuming and exactly-once copying. All three run the same workload loop
# and print one JSON line each:
#   {"client":..., "records":..., "bytes":..., "secs":..., "commit_ms":[...]}
#
# Usage (from anywhere; take the shared broker lock on a shared machine):
#   flock /tmp/kafka-eos-broker.lock bash bench/compare.sh
#   RECORDS=20000 ROUNDS=1 WORKLOADS="idem-100 txn-100ms" bash bench/compare.sh
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
#               consume-1k consume-committed copy-100 (default: all)
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
#               is a writable tmpfs, else the system temp dir): on this
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
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RECORDS=${RECORDS:-1000000}
RECORDS_1K=${RECORDS_1K:-$((RECORDS / 2))}
RECORDS_TXN_1S=${RECORDS_TXN_1S:-$((RECORDS * 5))}
ROUNDS=${ROUNDS:-5}
PERF_STAT=${PERF_STAT:-0}
ALL_WORKLOADS="idem-100 idem-100-keyed idem-1k idem-1k-keyed txn-100ms txn-1s lz4-1k zstd-1k consume-100 consume-1k consume-committed copy-100"
TXN_RECORDS=${TXN_RECORDS:-2000}
WORKLOADS=${WORKLOADS:-$ALL_WORKLOADS}
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

for w in $WORKLOADS; do
    [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload $w (known: $ALL_WORKLOADS)"
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

# ---------------------------------------------------------------- runs
# spec WORKLOAD: sets MODE SIZE KEYED COMP TXN N WIN ISOLATION FILL_TXN
spec() {
    MODE=produce KEYED=0 COMP=none TXN=0 ISOLATION=uncommitted FILL_TXN=
    case $1 in
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
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$wl" "$round" "$client" "$N" "$SIZE" "$secs" "$user" "$sys" "$rss" "$n" "$p50" "$p99" \
        "$broker_cpu" "${ctx:--}" "${syscalls:--}" "${futex:--}" >>"$RESULTS"
}

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
for wl in $WORKLOADS; do
    spec "$wl"
    INPUT=
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
echo
echo "== per-round figures"
awk -F'\t' '
BEGIN {
    printf "%-15s %5s %-8s %9s %11s %8s %8s %7s %7s %10s %9s %8s %7s %8s %8s %9s %9s %8s %9s %8s\n",
        "workload", "round", "client", "records", "records/s", "MiB/s", "secs",
        "user s", "sys s", "user s/1M", "sys s/1M", "RSS MB", "commits", "p50 ms", "p99 ms",
        "broker s", "busy cores", "ctx/1M", "sysc/1M", "futex/1M"
}
function per_m(x) { return (x == "-") ? "-" : sprintf("%.0f", x / $4 * 1e6) }
{
    rate = $4 / $6
    printf "%-15s %5s %-8s %9d %11.0f %8.1f %8.3f %7.2f %7.2f %10.3f %9.3f %8.1f %7s %8s %8s %9.2f %9.2f %8s %9s %8s\n",
        $1, $2, $3, $4, rate, rate * $5 / 1048576, $6, $7, $8, $7 / $4 * 1e6, $8 / $4 * 1e6,
        $9 / 1024, ($10 > 0 ? $10 : "-"), $11, $12, $13, ($7 + $8 + $13) / $6,
        per_m($14), per_m($15), per_m($16)
}' "$RESULTS"

echo
echo "== per workload: median over rounds of the per-round ratio ours/peer"
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
    ctx[key] = $14; sysc[key] = $15
    if (!($1 in seen)) { seen[$1] = 1; order[++nw] = $1 }
    rounds[$1] = rounds[$1] " " $2
}
END {
    printf "%-15s %-9s %6s %10s %10s %11s %10s %9s %11s %11s %11s %9s %9s\n",
        "workload", "peer", "rounds", "throughput", "CPU/1M", "user CPU/1M", "sys CPU/1M",
        "peak RSS", "RSS +MB", "commit p50", "commit p99", "ctx sw", "syscalls"
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
            printf "%-15s %-9s %6d %10s %10s %11s %10s %9s %11s %11s %11s %9s %9s\n", wl, peer, n,
                fmt(median(t)), fmt(median(a)), fmt(median(u)), fmt(median(s)), fmt(median(m)),
                (md == "-") ? "-" : sprintf("%+.1f", md), fmt(median(c5)), fmt(median(c9)),
                fmt(median(cs)), fmt(median(sc))
        }
    }
}' "$RESULTS"

echo
machine "at end"
if ((FAILURES > 0)); then
    echo "compare.sh: $FAILURES run(s) failed (see above)" >&2
    exit 1
fi
