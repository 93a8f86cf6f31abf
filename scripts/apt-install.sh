#!/usr/bin/env bash
# Installs the named Debian packages with apt-get, as root or through sudo. Package scripts
# are not allowed to start services while it runs (a temporary policy-rc.d), so installing a
# server such as nginx starts nothing on this machine.
#
#   scripts/apt-install.sh PACKAGE...
set -euo pipefail
[ $# -gt 0 ] || exit 0

echo "installing: $*"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to apt-get install $*" >&2; exit 1; }
  sudo="sudo"
fi

policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  created_policy=1
fi
cleanup() { if [ "$created_policy" = 1 ]; then $sudo rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "$@"
