#!/usr/bin/env bash
# Installs the load tools `make bench` needs when they are missing (Debian/Ubuntu):
# wrk (HTTP load), nginx (the reference server), gcc (the C references and the stream load
# client), valgrind (callgrind: the instruction counts of workload 7, a goal). perf is used for
# profiles when present and never installed (it must match the running kernel).
# No service is started by the install: the only nginx that runs is the one run.sh starts on
# loopback with its own configuration.
set -euo pipefail

missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v gcc >/dev/null || missing+=(gcc)
command -v curl >/dev/null || missing+=(curl)
command -v taskset >/dev/null || missing+=(util-linux)
command -v valgrind >/dev/null || missing+=(valgrind)
[ ${#missing[@]} -eq 0 ] || "$(dirname "$0")/../../scripts/apt-install.sh" "${missing[@]}"
