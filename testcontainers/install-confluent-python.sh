#!/usr/bin/env bash
# Install Confluent's Python client with its Schema Registry serializers
# (confluent-kafka on PyPI, extras avro, json, protobuf, schemaregistry) in a
# virtual environment: the byte-exactness oracle of kafka-schema-registry's
# tests (Confluent's own serializer logic, in Python).
#
#   bash testcontainers/install-confluent-python.sh
#
# Result: $CACHE/confluent-python/bin/python and the marker
# $CACHE/confluent-python/.complete, where
# CACHE=${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}.
# Idempotent; prints the interpreter's path on stdout.
set -euo pipefail

VERSION=2.16.1
CACHE="${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}"
VENV="$CACHE/confluent-python"
MARKER="$VENV/.complete-$VERSION"

if [[ -f "$MARKER" ]]; then
  echo "$VENV/bin/python"
  exit 0
fi
mkdir -p "$CACHE"
exec 9>"$CACHE/confluent-python.lock"
flock 9
if [[ -f "$MARKER" ]]; then
  echo "$VENV/bin/python"
  exit 0
fi
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --disable-pip-version-check \
  "confluent-kafka[avro,json,protobuf,schemaregistry]==$VERSION" >&2
"$VENV/bin/python" -c 'import confluent_kafka.schema_registry.avro, confluent_kafka.schema_registry.protobuf, confluent_kafka.schema_registry.json_schema'
touch "$MARKER"
echo "$VENV/bin/python"
