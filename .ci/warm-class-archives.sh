#!/usr/bin/env bash
# Writes the JVM class-data-sharing archives of both Kafka releases' broker
# and storage tool (testcontainers/src/class_archive.rs) by starting a
# one-node cluster of each with kafka-dev and stopping it: on a fresh
# machine no archive exists until a broker the harness started has exited,
# and every broker started before that loads its classes from the jars
# (about twice the CPU of a start with the archive: 4.1 against 2.1 CPU s
# for 4.4.0, 3.4 against 2.2 for 3.9.2). .ci/run does this in the
# background after the test build; a release whose archives exist starts
# and stops in about two CPU seconds.
#
#   bash .ci/warm-class-archives.sh PATH-OF-KAFKA-DEV
set -euo pipefail
kafka_dev="$1"
log=$(mktemp)
for version in 4.4.0 3.9.2; do
  "$kafka_dev" --version "$version" --nodes 1 >"$log" 2>&1 &
  pid=$!
  ready=0
  for _ in $(seq 1 600); do
    if grep -q "ready at" "$log"; then
      ready=1
      break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    sleep 0.2
  done
  # Ctrl-C: kafka-dev stops the broker with SIGTERM, which lets it write
  # the archive, and removes the cluster's files.
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" || true
  if [ "$ready" = 1 ]; then
    echo "class archives of Kafka $version written"
  else
    echo "Kafka $version did not start; its archives are written by the tests' first brokers instead:"
    tail -n 20 "$log"
  fi
done
rm -f "$log"
