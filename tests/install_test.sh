#!/usr/bin/env bash
# Installs deadbolt into a temp prefix and builds consumers against it, each locking a Mutex on
# a throwaway redis-server: one that links deadbolt::redis alone (find_package COMPONENTS redis,
# and pkg-config deadbolt-redis), whose ldd must show no other engine's libraries and whose
# registry must hold Redis alone; one that links deadbolt::deadbolt (every engine built).
#   tests/install_test.sh BUILD_DIR SOURCE_DIR [static|deb]
# static: the libraries are archives. deb: the build's Debian packages (cpack) are installed
# into the system with dpkg -i, the consumers built with no path given, and the packages
# removed again (needs root or sudo).
set -euo pipefail
build_dir=$1 src_dir=$2 kind=${3:-shared}
tmp=$(mktemp -d)
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --dir "$tmp" --daemonize yes --pidfile "$tmp/r.pid" --logfile "$tmp/r.log"
packages=()
cleanup() {
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  ((${#packages[@]} == 0)) || $SUDO dpkg --purge "${packages[@]}" >/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
url="redis://127.0.0.1:$port"

if [ "$kind" = deb ]; then
  rm -f "$build_dir"/*.deb
  (cd "$build_dir" && cpack -G DEB >/dev/null)
  for deb in "$build_dir"/*.deb; do
    packages+=("$(dpkg-deb -f "$deb" Package)")
    echo "install test (deb): $(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"
  done
  if dpkg-query -W "${packages[@]}" >/dev/null 2>&1; then
    echo "install test: deadbolt's packages are installed already; remove them first" >&2
    packages=()
    exit 1
  fi
  $SUDO dpkg -i "$build_dir"/*.deb >/dev/null
  prefix=/usr
else
  cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
  prefix=$tmp/prefix
fi
test -f "$prefix/include/deadbolt/deadbolt.hpp"
if grep -rlE "hiredis|grpc|zookeeper|libpq|mysql" "$prefix/include/deadbolt"; then
  echo "install test: the public headers above name an engine's library" >&2
  exit 1
fi
libdir=$(find "$prefix"/lib* -maxdepth 3 -name deadbolt-core.pc -printf '%h\n' | head -1)
if [ "$kind" != deb ]; then
  LD_LIBRARY_PATH=$(dirname "$libdir")
  export LD_LIBRARY_PATH PKG_CONFIG_PATH="$libdir"
fi
engines=$(sed -n 's/^set(_deadbolt_engines \(.*\))$/\1/p' "$(dirname "$libdir")/cmake/deadbolt/deadboltConfig.cmake")

# What each engine's library brings: a consumer of one engine loads no other's.
declare -A brings=([redis]="hiredis|deadbolt_redis" [etcd]="grpc|protobuf|absl|deadbolt_etcd"
                   [zookeeper]="zookeeper" [postgres]="libpq|deadbolt_postgres"
                   [mariadb]="mariadb|mysql|deadbolt_mariadb" [memcached]="deadbolt_memcached" [files]="deadbolt_files"
                   [memory]="deadbolt_memory")
declare -A scheme=([redis]=redis:// [etcd]=etcd:// [zookeeper]=zk:// [postgres]=postgresql://
                   [mariadb]=mysql:// [memcached]=memcached:// [files]=file:// [memory]=memory://)
alone() {  # engine binary: the registry holds that engine alone, and ldd none of the others'
  local e=$1 bin=$2 others="" o
  [ "$("$bin" --forms | wc -l)" = 1 ] && "$bin" --forms | grep -q "^${scheme[$e]}"
  for o in "${!brings[@]}"; do [ "$o" = "$e" ] || others+="${others:+|}${brings[$o]}"; done
  case $e in postgres | mariadb) ;; *) others+="|deadbolt_sql" ;; esac
  ldd "$bin" >"$tmp/ldd"
  echo "install test ($kind): ldd of a consumer of deadbolt::$e alone ($(basename "$bin")): $(wc -l <"$tmp/ldd") libraries"
  sed 's/ (0x[0-9a-f]*)//' "$tmp/ldd"
  if grep -Ei "$others" "$tmp/ldd"; then
    echo "install test: a consumer of deadbolt::$e loads another engine's libraries (above)" >&2
    exit 1
  fi
}

for e in $engines; do
  cmake -S "$src_dir/tests/consumer" -B "$tmp/$e-only" -DCMAKE_PREFIX_PATH="$prefix" -DCOMPONENTS="$e" >/dev/null
  cmake --build "$tmp/$e-only" >/dev/null
  alone "$e" "$tmp/$e-only/consumer"
  pc=$(pkg-config --cflags --libs "deadbolt-$e")
  [ "$kind" = static ] && pc=$(pkg-config --static --cflags --libs "deadbolt-$e")
  # shellcheck disable=SC2086
  g++ -std=c++20 "$src_dir/tests/consumer/main.cpp" -o "$tmp/pc-$e-consumer" $pc
  alone "$e" "$tmp/pc-$e-consumer"
  if [ "$e" = redis ]; then
    "$tmp/$e-only/consumer" "$url" | grep -q "^fence [0-9]"
    "$tmp/pc-$e-consumer" "$url" | grep -q "^fence [0-9]"
  fi
  if [ "$e" = files ]; then  # no server at all
    "$tmp/$e-only/consumer" "file://$tmp/locks" | grep -q "^fence [0-9]"
  fi
  if [ "$e" = memory ]; then  # inside the process
    "$tmp/$e-only/consumer" "memory://install-test" | grep -q "^fence [0-9]"
    "$tmp/pc-$e-consumer" "memory://install-test" | grep -q "^fence [0-9]"
  fi
  if [ "$e" = memcached ] && command -v memcached >/dev/null; then  # no server but its own
    mc_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    memcached -p "$mc_port" -l 127.0.0.1 -U 0 -M -u nobody &
    mc_pid=$!
    for _ in $(seq 50); do "$tmp/$e-only/consumer" "memcached://127.0.0.1:$mc_port" >"$tmp/mc.out" 2>&1 && break; sleep 0.1; done
    kill "$mc_pid"
    grep -q "^fence [0-9]" "$tmp/mc.out"
  fi
done

cmake -S "$src_dir/tests/consumer" -B "$tmp/all" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/all" >/dev/null
[ "$("$tmp/all/consumer" --forms | wc -l)" = "$(wc -w <<<"$engines")" ]
if [[ " $engines " == *" redis "* ]]; then
  "$tmp/all/consumer" "$url" | grep -q "^fence [0-9]"
fi
pc=$(pkg-config --cflags --libs deadbolt)
[ "$kind" = static ] && pc=$(pkg-config --static --cflags --libs deadbolt)
# shellcheck disable=SC2086
g++ -std=c++20 "$src_dir/tests/consumer/main.cpp" -o "$tmp/pc-consumer" $pc
[ "$("$tmp/pc-consumer" --forms | wc -l)" = "$(wc -w <<<"$engines")" ]
if [ -x "$prefix/bin/deadbolt" ]; then
  "$prefix/bin/deadbolt" --help | grep -q "run"
  if [[ " $engines " == *" redis "* ]]; then  # the installed CLI finds its engine's library
    "$prefix/bin/deadbolt" run --url "$url" installed -- true
  fi
fi
echo "install test ($kind): consumers of [$engines] built with find_package and pkg-config, and ran"
