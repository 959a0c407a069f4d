#!/usr/bin/env bash
# Builds each engine alone, as a user who takes one package would: its libraries and the CLI,
# installed, and consumers built against the installed package (find_package COMPONENTS and
# pkg-config, tests/install_test.sh), whose ldd must show no other engine's libraries. Redis
# is built a second time as static archives, and its Debian packages (cpack) are installed and
# consumed. The tests run once, in the full build
# (scripts/test.sh); these builds check the configurations, so they are unoptimised, and compile
# in unity batches as the normal build does (394 s for all nine here; 212 s in batches).
#   scripts/engines.sh [engine...]      default: every engine, then Redis static
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache: the core compiles the same way in every configuration, so it is compiled once (paths
# under the checkout are hashed relative to it, and every configuration sits at the same depth).
export CCACHE_BASEDIR="$PWD"
# dpkg-dev and file: cpack's dpkg-shlibdeps, for the Debian packages.
if ! command -v ccache >/dev/null || ! command -v dpkg-shlibdeps >/dev/null || ! command -v file >/dev/null; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends ccache dpkg-dev file >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends ccache dpkg-dev file >/dev/null; }
fi
configs=("$@")
((${#configs[@]})) || configs=(redis etcd zookeeper postgres mariadb memcached files memory redis-static)
for config in "${configs[@]}"; do
  engine=${config%-static}
  shared=ON kind=shared
  [ "$config" = "$engine" ] || shared=OFF kind=static
  dir=build-engines/$config
  start=$(date +%s)
  # A build type with no flags of its own: -O0, no debug info.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Check -DDEADBOLT_ENGINES="$engine" \
        -DBUILD_SHARED_LIBS=$shared -DDEADBOLT_UNITY=ON -DDEADBOLT_BUILD_TESTS=OFF -DDEADBOLT_BUILD_BENCH=OFF -DDEADBOLT_METRICS=OFF -DDEADBOLT_PYTHON=OFF -DDEADBOLT_NODE=OFF \
        -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache \
        -DDEADBOLT_WERROR="$([ -n "${CI:-}" ] && echo ON || echo OFF)" >/dev/null
  cmake --build "$dir" -j"$(nproc)" >/dev/null
  tests/install_test.sh "$dir" . "$kind" | grep -v "^	"
  if [ "$config" = redis ]; then  # its Debian packages, installed with dpkg -i and consumed
    tests/install_test.sh "$dir" . deb | grep -v "^	"
  fi
  echo "engines: $config ($kind) built, installed and consumed in $(($(date +%s) - start)) s"
done
