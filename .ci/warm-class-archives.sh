#!/usr/bin/env bash
# Writes the JVM class archives (testcontainers/src/class_archive.rs) of
# both Kafka releases' broker and storage tool, and of the schema registry,
# by starting a one-node cluster of each release and a registry with
# kafka-dev, the three at once, and stopping them: on a fresh
# machine no archive exists until a JVM the harness started has exited
# cleanly, and every one started before that loads its classes from the
# jars (4.4.0's broker: 4.1 CPU s against 2.1 with its archive, 3.9.2's:
# 3.4 against 2.2; the registry's on Java 25: 3.9 against 2.3).
#
# .ci/run runs it after the build and before the tests, on an otherwise
# idle machine. Beside the tests it could not work: a broker writes its
# archive as it exits, and under the tests' load its stop took longer than
# the harness waits (15 s), so it was killed, nothing was written, and
# every broker of the run started from the jars and tried again at its
# own exit. Prints which archives exist at the end; a missing one is
# reported, not a failure (the tests' brokers then write it).
#
#   bash .ci/warm-class-archives.sh PATH-OF-KAFKA-DEV
set -euo pipefail
kafka_dev="$1"
dir=$(mktemp -d)
started=$(date +%s)

# warm NAME KAFKA-DEV-OPTIONS...: starts kafka-dev, waits until what it
# started is ready (or it has died), then stops it with Ctrl-C: kafka-dev
# stops the broker or registry with SIGTERM and waits for it to exit, which
# writes the archive.
warm() {
  local name=$1 log="$dir/$1.log" pid ready=0
  shift
  "$kafka_dev" "$@" >"$log" 2>&1 &
  pid=$!
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
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" || true
  if [ "$ready" = 0 ]; then
    echo "$name did not start; its archives are written by the tests' first runs instead:"
    tail -n 20 "$log"
  fi
}

warm "Kafka 4.4.0" --version 4.4.0 --nodes 1 &
first=$!
warm "Kafka 3.9.2" --version 3.9.2 --nodes 1 &
second=$!
# The schema registry alone (Apicurio on Java 25: an ahead-of-time cache).
warm "the schema registry" --schema-registry-only &
third=$!
wait "$first" "$second" "$third"
echo "class archives after $(($(date +%s) - started)) s:"
cache="${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}/jvm-class-archives"
for program in 4.4.0/kafka.Kafka 4.4.0/kafka.tools.StorageTool 3.9.2/kafka.Kafka 3.9.2/kafka.tools.StorageTool apicurio-3.3.3/; do
  if compgen -G "$cache/$program*.[ja][so][at]" >/dev/null; then
    echo "  written: $program"
  else
    echo "  MISSING: $program (the tests' first clean stop writes it)"
  fi
done
rm -rf "$dir"
