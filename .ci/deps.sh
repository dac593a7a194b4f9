#!/usr/bin/env bash
# Installs the system libraries thumbd builds against, when absent (Debian).
set -euo pipefail
need=()
for pkg in libpng-dev libjpeg-dev libssl-dev libcurl4-openssl-dev libwebp-dev libgif-dev libheif-dev libavif-dev \
           liblcms2-dev pkg-config curl; do
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
