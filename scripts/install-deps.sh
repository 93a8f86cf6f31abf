#!/usr/bin/env bash
# Installs the system packages the build and the tests need, when they are missing
# (Debian/Ubuntu): libmicrohttpd's and zlib's headers, pkg-config, Python's venv for the API
# tools; with --test also what only the tests need (Chromium for the browser tests, nginx for
# the replicas test).
#
#   scripts/install-deps.sh [--test]
set -euo pipefail

missing=()
pkg-config --exists libmicrohttpd 2>/dev/null || missing+=(libmicrohttpd-dev)
pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
if [ "${1:-}" = --test ]; then
  command -v chromium >/dev/null || missing+=(chromium)
  command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
fi
[ ${#missing[@]} -eq 0 ] || "$(dirname "$0")/apt-install.sh" "${missing[@]}"
