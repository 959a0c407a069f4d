#!/usr/bin/env bash
# Installs what deadbolt needs from Debian (idempotent) and builds it into ./build.
# Usage: scripts/setup.sh            (installs packages when missing, then builds)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake ninja-build pkg-config libasio-dev libhiredis-dev libssl-dev libcli11-dev
          nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev redis-server redis-tools
          python3 python3-redis python3-matplotlib python3-etcd3 openssl procps
          libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
          etcd-server etcd-client zookeeper default-jre-headless libzookeeper-mt-dev
          python3-kazoo postgresql libpq-dev python3-psycopg2 mariadb-server mariadb-client
          libmariadb-dev python3-pymysql)
missing=()
# Node.js and npm run the benchmark's node-redlock peer; machines that have them already
# (e.g. from NodeSource) keep theirs.
command -v node >/dev/null || packages+=(nodejs)
command -v npm >/dev/null || packages+=(npm)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} Debian packages (a few minutes on a fresh machine): ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The Debian package starts a redis-server on 6379 at install; deadbolt never relies on it.

# etcd's .proto files (the etcd backend's gRPC client is generated from them) ship in
# golang-etcd-server-dev. Installing it pulls ~140 Go source packages (430 MB), so unless
# it is installed, only its own files are unpacked into .deps/ (cmake/EtcdProto.cmake looks
# there too).
if [ ! -f /usr/share/gocode/src/go.etcd.io/etcd/etcdserver/etcdserverpb/rpc.proto ] &&
   [ ! -f .deps/golang-etcd-server-dev/usr/share/gocode/src/go.etcd.io/etcd/etcdserver/etcdserverpb/rpc.proto ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  mkdir -p .deps
  (cd .deps && { apt-get download golang-etcd-server-dev >/dev/null 2>&1 ||
                 { $SUDO apt-get update -qq && apt-get download golang-etcd-server-dev >/dev/null; }; })
  dpkg -x .deps/golang-etcd-server-dev_*.deb .deps/golang-etcd-server-dev
fi

# CI builds with warnings as errors; people get them as warnings.
werror=OFF
[ -n "${CI:-}" ] && werror=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEADBOLT_WERROR=$werror >/dev/null
[ -f build/deadbolt ] || echo "setup: building deadbolt and its tests into ./build (about 5 minutes on 2 cores)" >&2
if [ -t 2 ]; then
  # One live line of progress on a terminal; anything else ninja says (errors) passes through.
  cmake --build build -j"$(nproc)" | while IFS= read -r line; do
    case "$line" in
      "["[0-9]*/*"]"*) printf '\r\033[Ksetup: building %s' "${line%%]*}]" >&2 ;;
      *) printf '\r\033[K%s\n' "$line" >&2 ;;
    esac
  done
  printf '\r\033[K' >&2
else
  cmake --build build -j"$(nproc)"
fi
echo "setup: done: the CLI is build/deadbolt, the library build/libdeadbolt.so" >&2
