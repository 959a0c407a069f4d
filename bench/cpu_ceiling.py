#!/usr/bin/env python3
"""What the client-CPU budget (issue 34, deadbolt <= 1.2x the raw client's CPU per cycle) leaves a
library: the raw client given deadbolt's own user CPU per cycle, on memcached, PostgreSQL and
MariaDB.

    python3 bench/cpu_ceiling.py [--reps 3] [--seconds 3] [--engines mc,pg,my] [--threads 1,16]

Per engine and thread count, with the client on CPU 1 and the server on CPU 0 (as
bench/cpu_profile.py): the raw client sending deadbolt's own statements, and deadbolt, side by
side in each repetition; each run's user and system CPU per cycle (getrusage around its cycles).
Then the raw client again, burning in user space (--spend-us, a counted loop: no system call)
  * deadbolt's extra user CPU per cycle, as measured in this sitting: if it then costs what
    deadbolt costs, kernel side included, the library's whole excess is its own user CPU, and
    what the kernel pays on top at 16 threads comes from that CPU, not from deadbolt's calls;
  * 20% and 10% of the raw cycle's CPU (all of the budget's room, and half of it): what the
    budget leaves a library if its user CPU adds only itself, an estimate the run then shows
    (the burnt CPU also moves the kernel's share, up or down, within the machine's noise).
Medians are per column over the repetitions, so a row's total need not be one run's.
Writes bench/results/cpu_ceiling.md and .json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_profile  # noqa: E402  (pinning the servers)
import run  # noqa: E402  (the driver's path)

BUDGET = 1.2
ENGINES = {"mc": "memcached", "pg": "PostgreSQL", "my": "MariaDB"}


def server(engine):
    import db
    import mc
    return {"mc": (mc.Memcached, "raw-mc"), "pg": (db.Postgres, "raw-pg"), "my": (db.MariaDb, "raw-my")}[engine]


def once(argv):
    """(cycles/s, user µs/cycle, system µs/cycle) of one pinned run."""
    out = subprocess.run(["taskset", "-c", "1", *argv, "--key", "ceiling:" + uuid.uuid4().hex[:12]],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"bench: {' '.join(argv)} failed ({out.returncode}): {out.stderr[-800:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["cycles_per_s"], 1e6 * r["user_s"] / r["cycles"], 1e6 * (r["cpu_s"] - r["user_s"]) / r["cycles"]


def medians(runs):
    return [statistics.median(x[i] for x in runs) for i in range(3)]


def measure(engine, threads, reps, seconds):
    make, raw = server(engine)
    s = make()
    try:
        cpu_profile.pin_to_cpu0()
        base = [run.DRIVER, "cycle", "--url", s.url, "--threads", str(threads), "--seconds", str(seconds)]
        raw_argv = [*base, "--contender", raw, "--statements", "1"]
        runs = {"raw": [], "deadbolt": []}
        for _ in range(reps):
            runs["raw"].append(once(raw_argv))
            runs["deadbolt"].append(once([*base, "--contender", "deadbolt"]))
        med = {c: medians(v) for c, v in runs.items()}
        extra = max(0.0, med["deadbolt"][1] - med["raw"][1])
        raw_total = med["raw"][1] + med["raw"][2]
        # deadbolt's extra, and the shares of the budget's 20% of the raw cycle.
        spends = [("deadbolt's extra user CPU", extra)] + [
            (f"{share:.0%} of the budget", share * (BUDGET - 1) * raw_total) for share in (1.0, 0.5)]
        rows = {}
        for name, us in spends:
            rows[name] = {"spend_us": us,
                          "medians": medians([once([*raw_argv, "--spend-us", f"{us:.3f}"]) for _ in range(reps)])}
        return {"medians": med, "spent": rows}
    finally:
        s.stop()


def render(done, reps, seconds):
    lines = [f"The client-CPU budget's room (`python3 bench/cpu_ceiling.py`): client on CPU 1, server on CPU 0, "
             f"medians of {reps} runs of {seconds:g} s; CPU per cycle from getrusage around the cycles. "
             "\"raw + N µs\" is the raw client sending deadbolt's statements and burning N µs of user CPU per cycle "
             "in a counted loop (no system call); \"of the budget\" is 20% of the raw cycle's CPU, and half of it. Medians "
             "per column, so a row's total need not be one run's.", "",
             "| engine | threads | contender | cycles/s | user µs/cycle | system µs/cycle | total | / raw |",
             "|---|---:|---|---:|---:|---:|---:|---:|"]
    for key, row in done.items():
        engine, threads = key.split("-")
        raw_total = sum(row["medians"]["raw"][1:])
        shown = [("raw, deadbolt's statements", row["medians"]["raw"]), ("deadbolt", row["medians"]["deadbolt"])]
        shown += [(f"raw + {v['spend_us']:.1f} µs ({name})", v["medians"]) for name, v in row["spent"].items()]
        for name, (rate, user, system) in shown:
            lines.append(f"| {ENGINES[engine]} | {threads} | {name} | {rate:,.0f} | {user:.1f} | {system:.1f} | "
                         f"{user + system:.1f} | {(user + system) / raw_total:.2f}x |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--engines", default="mc,pg,my")
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "cpu_ceiling"))
    args = ap.parse_args()
    done = {}
    for engine in args.engines.split(","):
        for threads in args.threads.split(","):
            done[f"{engine}-{threads}"] = measure(engine, int(threads), args.reps, args.seconds)
            print(f"{engine}-{threads}: {json.dumps(done[f'{engine}-{threads}'])}", flush=True)
    with open(args.out + ".json", "w") as f:
        json.dump(done, f, indent=1)
    text = render(done, args.reps, args.seconds)
    with open(args.out + ".md", "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
