#!/usr/bin/env python3
"""Two designs of the blocking API, side by side at 1, 4, 16 and 64 threads (issue 34).

    python3 bench/loop_blocking.py [--reps 3] [--seconds 3] [--threads 1,4,16,64]

Scenario 2 of bench/run.py (each thread locks and unlocks its own name on one redis-server,
pinned to CPU 0): deadbolt's blocking path (a connection per busy thread, the call on the
caller's thread), "deadbolt loop-blocking" (each thread starts an asynchronous call and sleeps
until its callback wakes it, so all of them share the loop's pipelined connection), the async
API (that many loops in flight from one thread), raw hiredis (a connection per thread) and
node-redlock. Contenders alternate within each repetition. Writes
bench/results/loop_blocking.md and .json: medians [min..max] and each one's ratio to raw hiredis
and to deadbolt's blocking path.
"""
import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (the server and the contenders' commands)
import stats  # noqa: E402

LOOP = "deadbolt loop-blocking"
run.DRIVERS[LOOP] = ([run.DRIVER], ["--contender", "loop-blocking"])
CONTENDERS = ["raw hiredis", "deadbolt", LOOP, run.ASYNC, "node-redlock busy"]


def table(res, threads):
    lines = ["| threads | " + " | ".join(CONTENDERS) + " | loop-blocking / deadbolt | loop-blocking / raw |",
             "|---" * (len(CONTENDERS) + 3) + "|"]
    for t in threads:
        cells, med = [], {}
        for c in CONTENDERS:
            s = stats.spread(res[c][str(t)])
            med[c] = s["median"]
            cells.append(f"{s['median']:,.0f} [{s['min']:,.0f}..{s['max']:,.0f}]")
        lines.append(f"| {t} | " + " | ".join(cells) +
                     f" | {med[LOOP] / med['deadbolt']:.2f}x | {med[LOOP] / med['raw hiredis']:.2f}x |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--threads", default="1,4,16,64")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    res = {c: {str(t): [] for t in threads} for c in CONTENDERS}
    run.ensure_peers()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    srv = run.Server()
    try:
        key = 0
        for rep in range(a.reps):
            for t in threads:
                for c in CONTENDERS:
                    key += 1
                    r = run.run(c, "cycle", ["--port", srv.port, "--threads", t, "--seconds", a.seconds,
                                             "--key", f"lb{key}"], 1)
                    res[c][str(t)].append(r["cycles_per_s"])
                    print(f"rep {rep + 1} {t:>2} threads {c:<24} {r['cycles_per_s']:>9,.0f} cycles/s",
                          file=sys.stderr)
                srv.cli("FLUSHALL")
    finally:
        srv.stop()
    out = os.path.join(HERE, "results", "loop_blocking")
    with open(out + ".json", "w") as f:
        json.dump({"started": started, "reps": a.reps, "seconds": a.seconds, "cycles_per_s": res}, f, indent=1)
    text = (f"Scenario 2 (uncontended, a name per thread), cycles/s, run {started}, {a.reps} repetitions of "
            f"{a.seconds:g} s, medians [min..max]; redis-server on CPU 0, clients on CPU 1 "
            f"(`python3 bench/loop_blocking.py`).\n\n{table(res, threads)}\n")
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
