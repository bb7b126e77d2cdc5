#!/usr/bin/env bash
# Fetch Apicurio Registry (a Confluent-compatible schema registry: its
# `/apis/ccompat/v7` API) from Maven Central and unpack it.
#
#   bash testcontainers/fetch-apicurio.sh [VERSION]     # default 3.3.3
#
# Result: $CACHE/apicurio-VERSION/quarkus-run.jar (a Quarkus fast-jar; it needs
# Java 21 or newer) and the marker $CACHE/apicurio-VERSION/.complete, where
# CACHE=${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}.
# Idempotent and safe to run concurrently (flock, atomic rename), like
# fetch-kafka.sh. Prints the directory on stdout.
set -euo pipefail

VERSION="${1:-3.3.3}"
CACHE="${KAFKA_EOS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kafka-eos}"
DIST="$CACHE/apicurio-$VERSION"
MARKER="$DIST/.complete"

if [[ -f "$MARKER" ]]; then
  echo "$DIST"
  exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/apicurio-$VERSION.lock"
flock 9
if [[ -f "$MARKER" ]]; then
  echo "$DIST"
  exit 0
fi

TMP="$(mktemp -d "$CACHE/.fetch-apicurio-$VERSION.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# One file, downloaded with curl and checked by its SHA-1 (the one below for
# the harness's release, else Maven Central's): no Maven run, whose JVM and
# dependency plugin took more CPU than the download.
ARCHIVE="apicurio-registry-app-$VERSION-all.tar.gz"
URL="https://repo1.maven.org/maven2/io/apicurio/apicurio-registry-app/$VERSION/$ARCHIVE"
case "$VERSION" in
  3.3.3) SHA1=71e7918455480cbce405ad45552254eb47ec932d ;;
  *) SHA1="$(curl -fsSL --retry 3 "$URL.sha1" | cut -c1-40)" ;;
esac
echo "fetch-apicurio: downloading io.apicurio:apicurio-registry-app:$VERSION (tar.gz, all) from Maven Central" >&2
curl -fsSL --retry 3 -o "$TMP/$ARCHIVE" "$URL"
echo "$SHA1  $TMP/$ARCHIVE" | sha1sum --quiet -c >&2
mkdir "$TMP/app"
tar -xzf "$TMP/apicurio-registry-app-$VERSION-all.tar.gz" -C "$TMP/app"
# 3.3.0 and later put the fast-jar at the archive root.
[[ -f "$TMP/app/quarkus-run.jar" ]] || { echo "fetch-apicurio: no quarkus-run.jar in the archive" >&2; exit 1; }
touch "$TMP/app/.complete"
rm -rf "$DIST"
mv "$TMP/app" "$DIST"
echo "$DIST"
