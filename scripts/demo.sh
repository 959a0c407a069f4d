#!/usr/bin/env bash
# Quick start, command 1: set up, start a throwaway redis-server, and show what deadbolt does:
#   1. 8 processes update one shared record, with `deadbolt run` and without a lock;
#   2. a holder paused past its TTL tries a late write, and fencing rejects it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-tests --servers redis >/dev/null  # what the demo needs: Redis alone, no tests
D="$PWD/build/deadbolt"

work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
  --logfile "$work/redis.log" --daemonize yes --pidfile "$work/redis.pid"
R="redis-cli -p $port"
cleanup() { $R shutdown nosave >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 50); do $R ping >/dev/null 2>&1 && break; sleep 0.1; done
export DEADBOLT_URL="redis://127.0.0.1:$port"

echo "== deadbolt demo against a throwaway redis-server on port $port"
echo
echo "-- 1. Eight processes each add 1 to a shared record 25 times (read, think 10 ms, write)."
cat > "$work/update.sh" <<EOS
#!/bin/sh
v=\$($R GET demo:record); sleep 0.01; $R SET demo:record \$((\${v:-0} + 1)) >/dev/null
EOS
chmod +x "$work/update.sh"
workers=8 rounds=25 expected=$((8 * 25))

$R SET demo:record 0 >/dev/null
for _ in $(seq $workers); do
  ( for _ in $(seq $rounds); do "$work/update.sh"; done ) &
done
wait
nolock=$($R GET demo:record)
echo "   without a lock:          $nolock of $expected updates kept, $((expected - nolock)) lost"

$R SET demo:record 0 >/dev/null
for _ in $(seq $workers); do
  ( for _ in $(seq $rounds); do "$D" run --wait 60s demo:record-lock -- "$work/update.sh"; done ) &
done
wait
locked=$($R GET demo:record)
echo "   with 'deadbolt run':     $locked of $expected updates kept, $((expected - locked)) lost"
echo

echo "-- 2. Holder A is paused (SIGSTOP) past its 1 s TTL; B takes the lock and writes;"
echo "      then A's late write arrives with A's older fencing token."
$R SET demo:row "initial" >/dev/null
"$D" run --ttl 1s demo:row-lock -- sh -c \
  'sleep 2.5; "$0" fenced-set --fence "$DEADBOLT_FENCE" demo:row "written by A (fence $DEADBOLT_FENCE)" \
     && echo "   A: late write accepted (fence $DEADBOLT_FENCE)" \
     || echo "   A: late write REJECTED (fence $DEADBOLT_FENCE): a newer holder wrote first"' "$D" &
a_pid=$!
sleep 0.5
kill -STOP "$a_pid"   # A's process stops renewing, like a long GC pause or a swapped-out VM
echo "   A paused (its lease runs out; its command keeps going, like a write already in flight)"
"$D" run --wait 10s demo:row-lock -- sh -c \
  '"$0" fenced-set --fence "$DEADBOLT_FENCE" demo:row "written by B (fence $DEADBOLT_FENCE)" \
     && echo "   B: took the lock after A expired and wrote (fence $DEADBOLT_FENCE)"' "$D"
sleep 2.5
kill -CONT "$a_pid"
set +e
wait "$a_pid"
a_rc=$?
set -e
echo "   A resumed: deadbolt exits $a_rc (70 = lease lost while the command ran)"
echo "   demo:row = $($R GET demo:row)"
echo
if [ "$locked" -eq "$expected" ] && [ "$($R GET demo:row | cut -c1-12)" = "written by B" ]; then
  echo "== demo OK: no lost update under the lock, and the paused holder's late write was rejected."
else
  echo "== demo FAILED"; exit 1
fi
