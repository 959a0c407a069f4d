#!/usr/bin/env bash
# Installs what deadbolt needs from Debian (idempotent) and builds it into ./build.
# Usage: scripts/setup.sh [--no-tests] [--servers] [engine ...]
#   engines: redis etcd zookeeper postgres mariadb memcached files (default: all). For each, the packages to
#   build it and, unless --no-tests, the servers and peers its tests start. --no-tests builds
#   the libraries and the CLI only; --servers installs the engines' servers all the same
#   (scripts/demo.sh: --no-tests --servers redis).
set -euo pipefail
cd "$(dirname "$0")/.."

tests=ON
servers=OFF
engines=()
for arg in "$@"; do
  case "$arg" in
    --no-tests) tests=OFF ;;
    --servers) servers=ON ;;
    redis | etcd | zookeeper | postgres | mariadb | memcached | files | memory) engines+=("$arg") ;;
    *) echo "setup: unknown argument '$arg' (--no-tests, --servers, or engines: redis etcd zookeeper postgres mariadb memcached files memory)" >&2; exit 64 ;;
  esac
done
((${#engines[@]})) || engines=(redis etcd zookeeper postgres mariadb memcached files memory)

packages=(g++ cmake ninja-build pkg-config libasio-dev libcli11-dev nlohmann-json3-dev libfmt-dev
          libcivetweb-dev python3 procps)
declare -A build_deps=(
  [redis]="libhiredis-dev libssl-dev"
  [etcd]="libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc"
  [zookeeper]="libzookeeper-mt-dev" [postgres]="libpq-dev" [mariadb]="libmariadb-dev"
  [memcached]="libssl-dev" [files]="libssl-dev" [memory]="")
declare -A server_deps=(
  [redis]="redis-server redis-tools" [etcd]="etcd-server etcd-client"
  [zookeeper]="zookeeper default-jre-headless" [postgres]="postgresql"
  [mariadb]="mariadb-server mariadb-client" [memcached]="memcached" [files]="" [memory]="")
declare -A test_deps=(
  [redis]="redis-server redis-tools python3-redis openssl"
  [etcd]="etcd-server etcd-client python3-etcd3" [zookeeper]="zookeeper default-jre-headless python3-kazoo"
  [postgres]="postgresql python3-psycopg2" [mariadb]="mariadb-server mariadb-client python3-pymysql"
  [memcached]="memcached python3-pymemcache" [files]="util-linux" [memory]="")
for e in "${engines[@]}"; do
  # shellcheck disable=SC2206
  packages+=(${build_deps[$e]})
  # shellcheck disable=SC2206
  [ "$tests" = OFF ] || packages+=(${test_deps[$e]})
  # shellcheck disable=SC2206
  [ "$servers" = OFF ] || packages+=(${server_deps[$e]})
done
if [ "$tests" = ON ]; then
  # Every test fixture starts Redis servers; the benchmarks plot and run node-redlock; a real
  # Prometheus scrapes the metrics endpoints (tests/prometheus).
  # shellcheck disable=SC2206
  # The Python binding is built (pybind11) and tested (pytest, redis-py, a venv for pip).
  packages+=(libgtest-dev libgmock-dev ${build_deps[redis]} ${test_deps[redis]} python3-matplotlib
             prometheus python3-dev pybind11-dev python3-pytest python3-venv python3-setuptools
             python3-wheel)
  # Node.js and npm run the benchmark's node-redlock peer and build and test the Node.js
  # binding; machines that have them already (e.g. from NodeSource, headers included) keep
  # theirs. N-API is one ABI, so Debian's headers serve any later Node.js.
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
  [ -f /usr/include/node/node_api.h ] || packages+=(libnode-dev)
fi
missing=()
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
if [[ " ${engines[*]} " == *" etcd "* ]] &&
   [ ! -f /usr/share/gocode/src/go.etcd.io/etcd/etcdserver/etcdserverpb/rpc.proto ] &&
   [ ! -f .deps/golang-etcd-server-dev/usr/share/gocode/src/go.etcd.io/etcd/etcdserver/etcdserverpb/rpc.proto ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  mkdir -p .deps
  (cd .deps && { apt-get download golang-etcd-server-dev >/dev/null 2>&1 ||
                 { $SUDO apt-get update -qq && apt-get download golang-etcd-server-dev >/dev/null; }; })
  dpkg -x .deps/golang-etcd-server-dev_*.deb .deps/golang-etcd-server-dev
fi

# The Node.js binding builds with node-addon-api and tests with node-redlock, from npm.
if [ "$tests" = ON ] && [ ! bindings/node/node_modules/.package-lock.json -nt bindings/node/package-lock.json ]; then
  (cd bindings/node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

# CI builds with warnings as errors; people get them as warnings.
werror=OFF
[ -n "${CI:-}" ] && werror=ON
# The engines and tests are passed every time: a build that the demo configured for Redis
# alone is widened by the next full setup.
engine_list=$(IFS=';'; echo "${engines[*]}")
# Unity batches (each batch parses Asio, gRPC and gtest once): a fresh build in about half the
# time. DEADBOLT_UNITY=OFF scripts/setup.sh compiles file by file, for quicker rebuilds of one edit.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDEADBOLT_WERROR=$werror \
      -DDEADBOLT_ENGINES="$engine_list" -DDEADBOLT_BUILD_TESTS=$tests -DDEADBOLT_BUILD_BENCH=$tests \
      -DDEADBOLT_UNITY="${DEADBOLT_UNITY:-ON}" >/dev/null
what="deadbolt ($engine_list) and its tests, about 5 minutes on 2 cores"
[ "$tests" = ON ] || what="deadbolt for $engine_list, about 2 minutes on 2 cores"
[ -f build/deadbolt ] || echo "setup: building $what into ./build" >&2
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
echo "setup: done: the CLI is build/deadbolt, the libraries build/libdeadbolt_core.so and build/src/backends/*/libdeadbolt_*.so" >&2
