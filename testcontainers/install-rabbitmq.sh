#!/usr/bin/env bash
# Install the Debian rabbitmq-server package if it is missing, without letting
# the package start (or leave running) a system-wide broker: the harness runs
# its own brokers with private node names, ports, cookies and data dirs.
#
#   bash testcontainers/install-rabbitmq.sh
#
# Idempotent: exits at once when rabbitmq-server is already installed.
set -euo pipefail

find_server() {
  command -v rabbitmq-server 2>/dev/null && return 0
  for p in /usr/lib/rabbitmq/bin/rabbitmq-server /usr/sbin/rabbitmq-server; do
    [[ -x "$p" ]] && { echo "$p"; return 0; }
  done
  return 1
}

if find_server >/dev/null; then
  exit 0
fi

SUDO=""
if [[ "$(id -u)" != 0 ]]; then
  SUDO="sudo"
fi

# Keep invoke-rc.d from starting the service during installation.
POLICY=/usr/sbin/policy-rc.d
CREATED_POLICY=0
if [[ ! -e "$POLICY" ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
  $SUDO chmod +x "$POLICY"
  CREATED_POLICY=1
fi
cleanup() {
  if [[ "$CREATED_POLICY" == 1 ]]; then $SUDO rm -f "$POLICY"; fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends rabbitmq-server

# If a service manager started the system broker anyway, stop and disable it.
if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
  $SUDO systemctl disable --now rabbitmq-server >/dev/null 2>&1 || true
else
  $SUDO service rabbitmq-server stop >/dev/null 2>&1 || true
  $SUDO update-rc.d rabbitmq-server disable >/dev/null 2>&1 || true
fi

find_server
