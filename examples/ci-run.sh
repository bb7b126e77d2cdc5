#!/usr/bin/env bash
# Runs the examples against a real Kafka broker started by the test harness
# (`kafka-dev`, one node of Kafka 4.4), checks each exit status, and always
# stops the broker. Called by .ci/run after the test step: it builds with the
# test step's profile and features (dev, --workspace --all-features), so
# nothing is compiled a second time (the benchmarks, kafka-eos-bench, are
# not run here and not built).
#
# Usage: bash examples/ci-run.sh        (from anywhere)
#   The RabbitMQ bridge example also runs when a RabbitMQ is available:
#   KAFKA_EOS_AMQP=amqp://guest:guest@127.0.0.1:5672/%2f (an existing broker),
#   or a dev binary that starts one, prints `AMQP_URL=...` when it is ready and
#   stops it on SIGINT: $RABBITMQ_DEV, else target/debug/rabbitmq-dev when built.
#   Otherwise it is skipped.
#   EXAMPLE_TIMEOUT=300   seconds allowed per example.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --locked --workspace --exclude kafka-eos-bench --all-features --bins --examples
bin="${CARGO_TARGET_DIR:-target}/debug"

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

start kafka-dev BOOTSTRAP "$bin/kafka-dev" --version 4.4.0 --nodes 1
bootstrap=$value
export KAFKA_EOS_BOOTSTRAP="$bootstrap"
echo "ci-run: Kafka ready at $bootstrap"

examples=(transactional_producer idempotent_producer consume_transform_produce group_consume_transform_produce exactly_once_sink)
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
    timeout "${EXAMPLE_TIMEOUT:-300}" "$bin/examples/$example" --bootstrap "$bootstrap" || status=$?
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
