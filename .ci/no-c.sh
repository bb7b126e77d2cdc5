#!/usr/bin/env bash
# No C in the default build of the library crates; only ring (TLS) in the CLI.
#
# 1. No -sys crate anywhere in the normal build of each crate and feature set.
# 2. C compiled by a build script (a build dependency on cc, cmake,
#    pkg-config or bindgen) only where listed: the library crates in their
#    default features (and the sink with its RabbitMQ source) compile none;
#    the CLI, whose default build carries TLS (kafka-client's `tls`
#    feature: rustls with ring, C and assembly), compiles exactly ring. Any
#    other crate that compiles C fails the check.
#
# It reads only the dependency graph (cargo tree, for the host target, as a
# user's build resolves it), so .ci/run runs it as a job beside the tests
# instead of ahead of the build.
#
#   bash .ci/no-c.sh
set -euo pipefail
cd "$(dirname "$0")/.."
unset CARGO_BUILD_TARGET

sys_check() {
  if cargo tree "$@" -e normal --prefix none | grep -E -- '-sys( |$)'; then
    echo "a -sys crate is in the normal build of: $*" >&2
    exit 1
  fi
}
# The crates whose build scripts compile C in the normal build of "$@"
# (sorted, one line): the parent of every C build tool in one tree, read
# from the depth of each line (cargo tree --prefix depth).
c_builders() {
  cargo tree "$@" -e normal,build --prefix depth | awk '
    {
      match($0, /^[0-9]+/)
      depth = substr($0, 1, RLENGTH) + 0
      name = substr($1, RLENGTH + 1)
      at[depth] = name
      if (depth > 0 && (name == "cc" || name == "cmake" || name == "pkg-config" || name == "bindgen"))
        print at[depth - 1]
    }' | sort -u | paste -sd ' ' -
}
c_check() {
  local allowed="$1" got
  shift
  got=$(c_builders "$@")
  if [ "$got" != "$allowed" ]; then
    echo "crates compiling C in the normal build of $*: '${got}'; allowed: '${allowed}'" >&2
    exit 1
  fi
  echo "C compiled in the normal build of $*: '${got:-none}' (allowed: '${allowed:-none}')"
}
for crate in kafka-proto kafka-client kafka-producer kafka-consumer kafka-admin kafka-sink kafka-eos kafka-mock kafka-eos-cli; do
  sys_check -p "$crate"
done
sys_check -p kafka-sink --features rabbitmq
sys_check -p kafka-eos --features rabbitmq
sys_check -p kafka-schema-registry
sys_check -p kafka-schema-registry --features avro,protobuf,json
echo "no -sys crate in the normal builds"
for crate in kafka-proto kafka-client kafka-producer kafka-consumer kafka-admin kafka-sink kafka-eos kafka-mock; do
  c_check "" -p "$crate"
done
c_check "" -p kafka-sink --features rabbitmq
c_check "" -p kafka-eos --features rabbitmq
c_check "" -p kafka-schema-registry
c_check "" -p kafka-schema-registry --features avro,protobuf,json
c_check "" -p kafka-eos --features avro,protobuf,json
c_check "ring" -p kafka-client --features tls
c_check "ring" -p kafka-eos --features tls
c_check "ring" -p kafka-eos-cli
c_check "" -p kafka-eos-cli --no-default-features --features gzip,snappy,lz4,zstd,local-kafka
