#!/usr/bin/env bash
# Installs the load tools `make bench` needs when they are missing (Debian/Ubuntu):
# wrk (HTTP load), nginx (the reference server), gcc (the C references and the stream load
# client). Optional profilers (perf, valgrind) are used when present and never installed.
# No service is started by the install: the only nginx that runs is the one run.sh starts on
# loopback with its own configuration.
set -euo pipefail

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v gcc >/dev/null || missing+=(gcc)
command -v curl >/dev/null || missing+=(curl)
command -v taskset >/dev/null || missing+=(util-linux)
[ ${#missing[@]} -eq 0 ] || "$(dirname "$0")/../../scripts/apt-install.sh" "${missing[@]}"
