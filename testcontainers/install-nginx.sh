#!/usr/bin/env bash
# Install Debian's nginx if it is missing, without letting the package start
# (or leave running) a system-wide server: kafka-schema-registry's tests run
# their own nginx (an authenticating and TLS-terminating reverse proxy in
# front of the schema registry) with a private configuration and ports.
#
#   bash testcontainers/install-nginx.sh
#
# Idempotent: exits at once when nginx is already installed. Prints its path.
set -euo pipefail

find_nginx() {
  command -v nginx 2>/dev/null && return 0
  [[ -x /usr/sbin/nginx ]] && { echo /usr/sbin/nginx; return 0; }
  return 1
}

if find_nginx; then
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
$SUDO apt-get update -q >&2
$SUDO apt-get install -y -q --no-install-recommends nginx openssl >&2

# If a service manager started the system server anyway, stop and disable it.
if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || true
else
  $SUDO service nginx stop >/dev/null 2>&1 || true
  $SUDO update-rc.d nginx disable >/dev/null 2>&1 || true
fi

find_nginx
