#!/usr/bin/env bash
# Installs deadbolt into a temp prefix, then builds a consumer against it twice: with
# find_package(deadbolt) and with pkg-config. Runs both against a throwaway redis-server.
set -euo pipefail
build_dir=$1 src_dir=$2
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --dir "$tmp" --daemonize yes --pidfile "$tmp/r.pid" --logfile "$tmp/r.log"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

cmake --install "$build_dir" --prefix "$tmp/prefix" >/dev/null
test -x "$tmp/prefix/bin/deadbolt"
test -f "$tmp/prefix/include/deadbolt/deadbolt.hpp"
! grep -rqE "asio|hiredis" "$tmp/prefix/include/deadbolt"   # public headers stay clean

cmake -S "$src_dir/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/consumer" "redis://127.0.0.1:$port" | grep -q "^fence [0-9]"

libdir=$(find "$tmp/prefix" -name deadbolt.pc -printf '%h\n')
PKG_CONFIG_PATH="$libdir" g++ -std=c++20 "$src_dir/tests/consumer/main.cpp" -o "$tmp/pc-consumer" \
  $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs deadbolt)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc-consumer" "redis://127.0.0.1:$port" | grep -q "^fence [0-9]"
"$tmp/prefix/bin/deadbolt" --help | grep -q "run"
echo "install test: find_package and pkg-config consumers built and ran"
