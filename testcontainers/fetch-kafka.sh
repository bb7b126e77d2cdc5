#!/usr/bin/env bash
# Fetch a Kafka broker + tools distribution (jars only) from Maven Central.
#
#   bash testcontainers/fetch-kafka.sh VERSION      # e.g. 4.4.0 or 3.9.1
#
# Result: $CACHE/kafka-VERSION/libs/*.jar and the marker $CACHE/kafka-VERSION/.complete
# where CACHE=${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}.
# Idempotent: once the marker exists the script exits immediately (offline).
# Safe to run concurrently: a flock(1) on $CACHE/kafka-VERSION.lock serialises
# fetchers and the libs directory appears through an atomic rename.
# Prints the distribution directory on stdout.
set -euo pipefail

VERSION="${1:?usage: fetch-kafka.sh VERSION}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}"
DIST="$CACHE/kafka-$VERSION"
MARKER="$DIST/.complete"

if [[ -f "$MARKER" ]]; then
  echo "$DIST"
  exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/kafka-$VERSION.lock"
flock 9

# Another process may have finished while we waited for the lock.
if [[ -f "$MARKER" ]]; then
  echo "$DIST"
  exit 0
fi

case "$VERSION" in
  3.*) PROFILE=kafka3 ;;
  *) PROFILE=kafka4 ;;
esac

TMP="$(mktemp -d "$CACHE/.fetch-$VERSION.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

cp "$HERE/pom-template.xml" "$TMP/pom.xml"
echo "fetch-kafka: resolving Kafka $VERSION from Maven Central into $DIST" >&2
mvn -B -q -Dstyle.color=never -f "$TMP/pom.xml" -P "$PROFILE" -Dkafka.version="$VERSION" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$TMP/libs" >&2

# Sanity check: the broker jar and the tools jar must be there.
ls "$TMP/libs"/kafka_2.13-"$VERSION".jar "$TMP/libs"/kafka-tools-"$VERSION".jar >/dev/null

mkdir -p "$DIST"
rm -rf "$DIST/libs"
mv "$TMP/libs" "$DIST/libs"
date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
echo "$DIST"
