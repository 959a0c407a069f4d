#!/usr/bin/env bash
# The benchmarks (README "Measuring"): sets up, then runs every scenario against deadbolt, the
# server's limit and the peers in one run. Writes bench/results/. Not part of the tests.
#   scripts/bench.sh [--reps N] [--out DIR]
#   scripts/bench.sh --etcd [--reps N] [--out DIR]   the etcd backend's (bench/etcd.py)
#   scripts/bench.sh --zk [--reps N] [--out DIR]     ZooKeeper's (bench/zk.py)
#   scripts/bench.sh --db [--reps N] [--out DIR]     PostgreSQL's and MariaDB's (bench/db.py)
#   scripts/bench.sh --mc [--reps N] [--out DIR]     memcached's (bench/mc.py)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
case "${1:-}" in
  --etcd) shift; exec /usr/bin/python3 bench/etcd.py "$@" ;;
  --zk) shift; exec /usr/bin/python3 bench/zk.py "$@" ;;
  --db) shift; exec /usr/bin/python3 bench/db.py "$@" ;;
  --mc) shift; exec /usr/bin/python3 bench/mc.py "$@" ;;
esac
(cd bench/peers && npm ci --no-audit --no-fund --silent)
exec /usr/bin/python3 bench/run.py "$@"
