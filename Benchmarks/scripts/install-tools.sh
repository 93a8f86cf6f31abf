#!/usr/bin/env bash
# Installs the load tools `make bench` needs when they are missing (Debian/Ubuntu):
# wrk (HTTP load), nginx (the reference server), gcc (the C references and the stream load
# client). Optional profilers (perf, valgrind) are used when present and never installed.
#
# nginx's package would start a system-wide nginx on port 80; a temporary policy-rc.d stops
# the package scripts from starting any service, so the only nginx that ever runs is the one
# run.sh starts on loopback with its own configuration.
set -euo pipefail

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v gcc >/dev/null || missing+=(gcc)
command -v curl >/dev/null || missing+=(curl)
command -v taskset >/dev/null || missing+=(util-linux)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
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
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
