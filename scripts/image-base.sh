#!/usr/bin/env bash
# Builds the stand-in base image that scripts/image-test.sh needs where no registry image can
# be pulled: Debian bookworm from Debian's own packages (debootstrap --variant=minbase),
# imported into podman's storage as localhost/debian-minbase:bookworm. The root filesystem
# is cached as a tarball under .build-images/ (git-ignored), so later runs only import it.
#
#   scripts/image-base.sh            # prints the image name
#   MIRROR=http://deb.debian.org/debian scripts/image-base.sh
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=localhost/debian-minbase:bookworm
CACHE=.build-images
TARBALL=$CACHE/debian-minbase-bookworm.tar
# The mirror apt is configured with (deb822 or one-line sources), unless MIRROR is given.
if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(grep -h -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1 || true)
  [ -n "$MIRROR" ] || MIRROR=$(grep -h -E '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1 || true)
  MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
PODMAN=(podman --storage-driver vfs)

if "${PODMAN[@]}" image exists "$IMAGE"; then
  echo "$IMAGE"
  exit 0
fi
mkdir -p "$CACHE"
if [ ! -s "$TARBALL" ]; then
  root=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  chmod 0755 "$root"  # the image's / (mktemp makes it 0700)
  trap 'rm -rf "$root"' EXIT
  echo "debootstrap --variant=minbase bookworm from $MIRROR (about a minute)" >&2
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -cf "$TARBALL.tmp" .
  mv "$TARBALL.tmp" "$TARBALL"
fi
"${PODMAN[@]}" import --quiet "$TARBALL" "$IMAGE" >/dev/null
echo "$IMAGE"
