#!/usr/bin/env bash
# Runs the examples against a real Kafka broker, checks each exit status,
# and always stops what it started. The broker: the test harness's shared
# Kafka 4.4 (transaction version 2) cluster when KAFKA_EOS_SHARED_KAFKA names
# the directory of the shared clusters' descriptions and its 4.4-tv2.cluster
# is there (or appears within 300 s) with its broker running; each example
# then gets `--name-suffix` with this run's id, so that its topics, groups
# and transactional ids are its own beside the tests using that cluster.
# Otherwise a broker of its own started by the test harness (`kafka-dev`, one
# node of Kafka 4.4). Called by .ci/run's test step (beside the tests, with
# the shared clusters): it builds with the test step's profile and features
# (dev, --workspace --all-features), so nothing is compiled a second time
# (the benchmarks, kafka-eos-bench, are not run here and not built).
#
# Usage: bash examples/ci-run.sh        (from anywhere)
#   KAFKA_EOS_SHARED_KAFKA=DIR            use the shared cluster described in
#                                         DIR/4.4-tv2.cluster (see above).
#   The RabbitMQ bridge example also runs when a RabbitMQ is available:
#   KAFKA_EOS_AMQP=amqp://guest:guest@127.0.0.1:5672/%2f (an existing broker),
#   or a dev binary that starts one, prints `AMQP_URL=...` when it is ready and
#   stops it on SIGINT: $RABBITMQ_DEV, else the build's rabbitmq-dev when built.
#   Otherwise it is skipped.
#   EXAMPLE_TIMEOUT=300   seconds allowed per example.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --locked --workspace --exclude kafka-eos-bench --all-features --bins --examples
# (CARGO_BUILD_TARGET, as CI sets it: the build is in that target's folder.)
bin="${CARGO_TARGET_DIR:-target}/${CARGO_BUILD_TARGET:+$CARGO_BUILD_TARGET/}debug"

log_dir=$(mktemp -d)
service_pids=()

stop_services() {
    local pid
    for pid in "${service_pids[@]}"; do
        # kafka-dev (and rabbitmq-dev) stop their brokers and remove their data on SIGINT.
        kill -INT "$pid" 2>/dev/null || true
    done
    for pid in "${service_pids[@]}"; do
        for _ in $(seq 1 300); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "ci-run: process $pid did not stop on SIGINT; killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$log_dir"
}
trap stop_services EXIT

# start NAME KEY COMMAND...: starts COMMAND in the background and waits
# (bounded; a first start may download Kafka) until it prints KEY=value on
# stdout; sets $value.
start() {
    local name=$1 key=$2
    shift 2
    # Job control on: a background job keeps the default SIGINT disposition.
    set -m
    "$@" >"$log_dir/$name.out" 2>"$log_dir/$name.err" &
    local pid=$!
    set +m
    service_pids+=("$pid")
    local deadline=$(( $(date +%s) + 600 ))
    until grep -q "^$key=" "$log_dir/$name.out"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            cat "$log_dir/$name.err" >&2
            echo "ci-run: $name exited before it was ready" >&2
            exit 1
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            cat "$log_dir/$name.err" >&2
            echo "ci-run: no $key= line from $name within 600 s" >&2
            exit 1
        fi
        sleep 0.2
    done
    value=$(sed -n "s/^$key=//p" "$log_dir/$name.out" | head -n 1)
}

# shared_bootstrap FILE: waits (up to 300 s) for the shared cluster
# description FILE, written by `kafka-dev --shared` once its broker is ready
# (atomically: a complete file or none), and sets $value to its bootstrap
# list: 127.0.0.1:<client port> of each `node=<id> <client port> <internal
# port> <controller port> <pid>` line (KafkaCluster::description). Fails
# when the file does not appear or a node's process is gone.
shared_bootstrap() {
    local file=$1
    local deadline=$(( $(date +%s) + 300 ))
    until [ -f "$file" ]; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "ci-run: no $file within 300 s" >&2
            return 1
        fi
        sleep 0.5
    done
    local id port internal controller pid addrs=()
    while read -r id port internal controller pid; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "ci-run: the shared Kafka node $id of $file (process $pid) is gone" >&2
            return 1
        fi
        addrs+=("127.0.0.1:$port")
    done < <(sed -n 's/^node=//p' "$file")
    if [ "${#addrs[@]}" -eq 0 ]; then
        echo "ci-run: no node in $file" >&2
        return 1
    fi
    value=$(IFS=,; echo "${addrs[*]}")
}

name_args=()
if [ -n "${KAFKA_EOS_SHARED_KAFKA:-}" ] && shared_bootstrap "$KAFKA_EOS_SHARED_KAFKA/4.4-tv2.cluster"; then
    bootstrap=$value
    # This run's names: the examples' topics, groups and transactional ids
    # get -<run id> appended (the tests on the cluster use names of their own).
    name_args=(--name-suffix "ci-$$-$(date +%s)")
    echo "ci-run: using the shared Kafka 4.4 at $bootstrap (names suffixed -${name_args[1]})"
else
    start kafka-dev BOOTSTRAP "$bin/kafka-dev" --version 4.4.0 --nodes 1
    bootstrap=$value
    echo "ci-run: Kafka ready at $bootstrap"
fi
export KAFKA_EOS_BOOTSTRAP="$bootstrap"

examples=(transactional_producer idempotent_producer consume_transform_produce group_consume_transform_produce exactly_once_sink test_with_kafka_mock)
rabbitmq_dev="${RABBITMQ_DEV:-$bin/rabbitmq-dev}"
if [ -z "${KAFKA_EOS_AMQP:-}" ] && [ -x "$rabbitmq_dev" ]; then
    start rabbitmq-dev AMQP_URL "$rabbitmq_dev"
    export KAFKA_EOS_AMQP="$value"
    echo "ci-run: RabbitMQ ready at $KAFKA_EOS_AMQP"
fi
if [ -n "${KAFKA_EOS_AMQP:-}" ]; then
    examples+=(rabbitmq_kafka_bridge)
else
    echo "ci-run: no RabbitMQ (KAFKA_EOS_AMQP unset, no rabbitmq-dev); skipping rabbitmq_kafka_bridge"
fi

failed=()
for example in "${examples[@]}"; do
    echo
    echo "=== example $example"
    started=$(date +%s)
    status=0
    timeout "${EXAMPLE_TIMEOUT:-300}" "$bin/examples/$example" --bootstrap "$bootstrap" "${name_args[@]}" || status=$?
    echo "=== example $example: exit status $status in $(( $(date +%s) - started )) s"
    if [ "$status" -ne 0 ]; then
        failed+=("$example")
    fi
done

echo
if [ "${#failed[@]}" -ne 0 ]; then
    echo "ci-run: failed examples: ${failed[*]}" >&2
    tail -n 50 "$log_dir/kafka-dev.err" >&2 || true
    exit 1
fi
echo "ci-run: ${#examples[@]} examples passed"
