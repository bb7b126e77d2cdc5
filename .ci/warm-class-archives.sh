#!/usr/bin/env bash
# Writes the JVM class archives (testcontainers/src/class_archive.rs) of
# both Kafka releases' broker and storage tool, and of the schema registry,
# by starting a one-node cluster of each release with kafka-dev (Kafka 4.4
# with a registry beside it) and stopping it: on a fresh machine no archive
# exists until a JVM the harness started has exited, and every one started
# before that loads its classes from the jars (4.4.0's broker: 4.1 CPU s
# against 2.1 with its archive, 3.9.2's: 3.4 against 2.2; the registry's
# on Java 25: 3.9 against 2.3). .ci/run runs it as a job beside the tests,
# started first.
#
#   bash .ci/warm-class-archives.sh PATH-OF-KAFKA-DEV
set -euo pipefail
kafka_dev="$1"
log=$(mktemp)
for version in 4.4.0 3.9.2; do
  # With Kafka 4.4, the schema registry's archive too (Apicurio on Java
  # 25: an ahead-of-time cache, 2.3 CPU seconds per start against 3.9).
  extra=()
  if [ "$version" = 4.4.0 ]; then
    extra=(--schema-registry)
  fi
  "$kafka_dev" --version "$version" --nodes 1 "${extra[@]}" >"$log" 2>&1 &
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
    echo "class archives of Kafka $version written${extra[*]:+, and the schema registry archive}"
  else
    echo "Kafka $version did not start; its archives are written by the tests' first brokers instead:"
    tail -n 20 "$log"
  fi
done
rm -f "$log"
