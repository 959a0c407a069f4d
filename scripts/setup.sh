#!/usr/bin/env bash
# Installs what deadbolt needs from Debian (idempotent) and builds it into ./build.
# Usage: scripts/setup.sh            (installs packages when missing, then builds)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build pkg-config libasio-dev libhiredis-dev libssl-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev redis-server redis-tools
          python3 python3-redis python3-matplotlib openssl procps)
missing=()
# Node.js and npm run the benchmark's node-redlock peer; machines that have them already
# (e.g. from NodeSource) keep theirs.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Debian package starts a redis-server on 6379 at install; deadbolt never relies on it.

# CI builds with warnings as errors; people get them as warnings.
werror=OFF
[ -n "${CI:-}" ] && werror=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEADBOLT_WERROR=$werror >/dev/null
cmake --build build -j"$(nproc)"
