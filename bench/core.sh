#!/usr/bin/env bash
# The measurements of issue 2's closing note, on one throwaway redis-server pinned to CPU 0:
#   1. single-thread acquire+release: deadbolt vs. the same two scripts over raw hiredis,
#      with the client on CPU 0 and on CPU 1, interleaved, 3 repetitions;
#   2. aggregate cycles/s with 16 threads vs. 1 thread (distinct keys).
# Usage: bench/core.sh [seconds-per-run]   (results also in results/core.jsonl)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
B=build/bench/mutex_cycle
[ -x "$B" ] || { echo "build first: scripts/setup.sh"; exit 1; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
taskset -c 0 redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --daemonize yes --pidfile "$work/r.pid" --logfile "$work/r.log"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
mkdir -p results
out=results/core.jsonl
: > "$out"
for rep in 1 2 3; do
  for cpu in 0 1; do
    for mode in raw deadbolt; do
      line=$(taskset -c "$cpu" "$B" --port "$port" --mode "$mode" --threads 1 --seconds "$secs")
      echo "{\"rep\":$rep,\"client_cpu\":$cpu,${line:1}" | tee -a "$out"
    done
  done
done
for rep in 1 2 3; do
  for threads in 1 16; do
    line=$("$B" --port "$port" --mode deadbolt --threads "$threads" --seconds "$secs")
    echo "{\"rep\":$rep,\"client_cpu\":\"any\",${line:1}" | tee -a "$out"
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(sel, key):
    v = [r[key] for r in rows if all(r.get(k) == x for k, x in sel.items())]
    return statistics.median(v), min(v), max(v)
print("\nsingle thread, acquire+release p50 (µs), median of 3 [min..max]:")
for cpu in (0, 1):
    raw = med({"client_cpu": cpu, "mode": "raw", "threads": 1}, "p50_us")
    db = med({"client_cpu": cpu, "mode": "deadbolt", "threads": 1}, "p50_us")
    print(f"  client on CPU {cpu}: raw hiredis {raw[0]:.1f} [{raw[1]:.1f}..{raw[2]:.1f}]  "
          f"deadbolt {db[0]:.1f} [{db[1]:.1f}..{db[2]:.1f}]  ratio {db[0]/raw[0]:.2f}x")
one = med({"client_cpu": "any", "threads": 1}, "cycles_per_s")
six = med({"client_cpu": "any", "threads": 16}, "cycles_per_s")
print(f"aggregate cycles/s: 1 thread {one[0]:.0f} [{one[1]:.0f}..{one[2]:.0f}], "
      f"16 threads {six[0]:.0f} [{six[1]:.0f}..{six[2]:.0f}]  ratio {six[0]/one[0]:.1f}x")
PY
