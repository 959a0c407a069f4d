#!/usr/bin/env bash
# The benchmarks (README "Measuring"): sets up, then runs every scenario against deadbolt, the
# server's limit and the peers in one run. Writes bench/results/. Not part of the tests.
#   scripts/bench.sh [--reps N] [--out DIR]
#   scripts/bench.sh --etcd [--reps N] [--out DIR]   the etcd backend's (bench/etcd.py)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ "${1:-}" = "--etcd" ]; then
  shift
  exec /usr/bin/python3 bench/etcd.py "$@"
fi
(cd bench/peers && npm ci --no-audit --no-fund --silent)
exec /usr/bin/python3 bench/run.py "$@"
