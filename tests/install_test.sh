#!/usr/bin/env bash
# Installs deadbolt into a temp prefix and builds consumers against it, each locking a Mutex on
# a throwaway redis-server: one that links deadbolt::redis alone (find_package COMPONENTS redis,
# and pkg-config deadbolt-redis), whose ldd must show no other engine's libraries and whose
# registry must hold Redis alone; one that links deadbolt::deadbolt (every engine built).
#   tests/install_test.sh BUILD_DIR SOURCE_DIR [static]   (static: the libraries are archives)
set -euo pipefail
build_dir=$1 src_dir=$2 kind=${3:-shared}
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --dir "$tmp" --daemonize yes --pidfile "$tmp/r.pid" --logfile "$tmp/r.log"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
url="redis://127.0.0.1:$port"

cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/deadbolt/deadbolt.hpp"
! grep -rqE "hiredis|grpc|zookeeper|libpq|mysql" "$tmp/prefix/include/deadbolt"  # engine-free headers
libdir=$(find "$tmp/prefix" -name deadbolt-core.pc -printf '%h\n')
export LD_LIBRARY_PATH="$(dirname "$libdir")" PKG_CONFIG_PATH="$libdir"
engines=$(sed -n 's/^set(_deadbolt_engines \(.*\))$/\1/p' "$(dirname "$libdir")/cmake/deadbolt/deadboltConfig.cmake")

# What each engine's library brings: a consumer of one engine loads no other's.
declare -A brings=([redis]="hiredis|deadbolt_redis" [etcd]="grpc|protobuf|absl|deadbolt_etcd"
                   [zookeeper]="zookeeper" [postgres]="libpq|deadbolt_postgres"
                   [mariadb]="mariadb|mysql|deadbolt_mariadb")
declare -A scheme=([redis]=redis:// [etcd]=etcd:// [zookeeper]=zk:// [postgres]=postgresql://
                   [mariadb]=mysql://)
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
  cmake -S "$src_dir/tests/consumer" -B "$tmp/$e-only" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCOMPONENTS="$e" >/dev/null
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
done

cmake -S "$src_dir/tests/consumer" -B "$tmp/all" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
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
if [ -x "$tmp/prefix/bin/deadbolt" ]; then
  "$tmp/prefix/bin/deadbolt" --help | grep -q "run"
fi
echo "install test ($kind): consumers of [$engines] built with find_package and pkg-config, and ran"
