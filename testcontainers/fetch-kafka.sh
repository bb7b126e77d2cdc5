#!/usr/bin/env bash
# Fetch a Kafka broker + tools distribution (jars only) from Maven Central.
#
#   bash testcontainers/fetch-kafka.sh VERSION         # e.g. 4.4.0 or 3.9.1
#   bash testcontainers/fetch-kafka.sh --lock VERSION  # (re)write kafka-jars/VERSION.txt
#
# A version listed in kafka-jars/ (group:artifact:version and SHA-1 of every
# jar, as Maven resolved them) is downloaded with curl, several at a time,
# and each jar checked against its SHA-1: no Maven run (its JVM took about
# 15 CPU seconds per version on a fresh machine). Any other version is
# resolved with Maven (`mvn dependency:copy-dependencies` on
# pom-template.xml).
#
# Result: $CACHE/kafka-VERSION/libs/*.jar and the marker $CACHE/kafka-VERSION/.complete
# where CACHE=${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}.
# Idempotent: once the marker exists the script exits immediately (offline).
# Safe to run concurrently: a flock(1) on $CACHE/kafka-VERSION.lock serialises
# fetchers and the libs directory appears through an atomic rename.
# Prints the distribution directory on stdout.
set -euo pipefail

LOCK_ONLY=0
if [[ "${1:-}" == "--lock" ]]; then
  LOCK_ONLY=1
  shift
fi
VERSION="${1:?usage: fetch-kafka.sh [--lock] VERSION}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOCK="$HERE/kafka-jars/$VERSION.txt"
CACHE="${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}"
DIST="$CACHE/kafka-$VERSION"
MARKER="$DIST/.complete"

if [[ -f "$MARKER" && $LOCK_ONLY == 0 ]]; then
  echo "$DIST"
  exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/kafka-$VERSION.lock"
flock 9

# Another process may have finished while we waited for the lock.
if [[ -f "$MARKER" && $LOCK_ONLY == 0 ]]; then
  echo "$DIST"
  exit 0
fi

case "$VERSION" in
  3.*) PROFILE=kafka3 ;;
  *) PROFILE=kafka4 ;;
esac

TMP="$(mktemp -d "$CACHE/.fetch-$VERSION.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# download_locked: every jar of $LOCK into $TMP/libs, checked by SHA-1.
download_locked() {
  echo "fetch-kafka: downloading Kafka $VERSION's jars listed in $LOCK from Maven Central into $DIST" >&2
  mkdir -p "$TMP/libs"
  local config="$TMP/curl.config" sums="$TMP/sha1sums" gav sha1 group artifact version file
  : >"$config"
  : >"$sums"
  while read -r gav sha1; do
    [[ -z "$gav" || "$gav" == \#* ]] && continue
    IFS=: read -r group artifact version <<<"$gav"
    file="$artifact-$version.jar"
    printf 'url = "https://repo1.maven.org/maven2/%s/%s/%s/%s"\noutput = "%s"\n' \
      "${group//.//}" "$artifact" "$version" "$file" "$TMP/libs/$file" >>"$config"
    printf '%s  %s\n' "$sha1" "$TMP/libs/$file" >>"$sums"
  done <"$LOCK"
  curl -fsSL --no-progress-meter --retry 3 --parallel --parallel-max 8 --config "$config"
  sha1sum --quiet -c "$sums" >&2
}

# resolve_with_maven: the runtime dependencies of pom-template.xml's profile
# into $TMP/libs, and their list into $TMP/list.txt.
resolve_with_maven() {
  cp "$HERE/pom-template.xml" "$TMP/pom.xml"
  echo "fetch-kafka: resolving Kafka $VERSION from Maven Central into $DIST" >&2
  mvn -B -q -Dstyle.color=never -f "$TMP/pom.xml" -P "$PROFILE" -Dkafka.version="$VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$TMP/libs" \
    dependency:list -DoutputFile="$TMP/list.txt" -Dsort=true >&2
}

if [[ $LOCK_ONLY == 1 ]]; then
  resolve_with_maven
  mkdir -p "$HERE/kafka-jars"
  {
    echo "# Kafka $VERSION's broker and tools jars (runtime scope of pom-template.xml's profile), as resolved from Maven Central: group:artifact:version sha1."
    echo "# fetch-kafka.sh downloads exactly these; regenerate with: bash testcontainers/fetch-kafka.sh --lock $VERSION"
    grep -E '^ +[a-z]' "$TMP/list.txt" | awk '{print $1}' | while IFS=: read -r group artifact _type version _scope; do
      echo "$group:$artifact:$version $(sha1sum "$TMP/libs/$artifact-$version.jar" | cut -c1-40)"
    done
  } >"$LOCK"
  echo "$LOCK"
  exit 0
fi

if [[ -f "$LOCK" ]]; then
  download_locked
else
  resolve_with_maven
fi

# Sanity check: the broker jar and the tools jar must be there.
ls "$TMP/libs"/kafka_2.13-"$VERSION".jar "$TMP/libs"/kafka-tools-"$VERSION".jar >/dev/null

mkdir -p "$DIST"
rm -rf "$DIST/libs"
mv "$TMP/libs" "$DIST/libs"
date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER.tmp"
mv "$MARKER.tmp" "$MARKER"
echo "$DIST"
