#!/usr/bin/env python3
"""User-space instructions, and instruction-cache misses, per uncontended lock cycle: deadbolt
against each engine's raw client.

    python3 bench/instructions.py [--engines redis,memcached,postgres,mariadb] [--out FILE]

Time on these machines is noisy; instruction counts are not. Each contender's one-thread cycle
runs under valgrind's cachegrind twice, for a short and a longer time; the difference in counts
over the difference in cycles is the cost of one acquire+release, with the fixed cost of
starting (dynamic linking, connecting) cancelled out. The misses come from cachegrind's model of
this machine's first-level caches: equal instruction counts can still take twice the time when
one side's code does not fit the instruction cache. System calls and the kernel's work are not
counted: bench/cpu_budget.py has the whole client CPU. Needs valgrind.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import db  # noqa: E402  (PostgreSQL and MariaDB servers)
import mc  # noqa: E402  (memcached server)
import run  # noqa: E402  (redis-server, the driver's path)

SHORT_S, LONG_S = 2, 6


def counted(argv):
    """({event: count}, cycles) of one run of the driver under cachegrind."""
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=yes",
                            f"--cachegrind-out-file={d}/out", *argv],
                           capture_output=True, text=True, timeout=600)
        text = open(f"{d}/out").read() if r.returncode == 0 and os.path.exists(f"{d}/out") else ""
    events = re.search(r"^events: (.*)$", text, re.M)
    summary = re.search(r"^summary: (.*)$", text, re.M)
    if not events or not summary:
        raise SystemExit(f"bench: {' '.join(argv)} failed under cachegrind: {r.stderr[-800:]}")
    counts = dict(zip(events.group(1).split(), map(int, summary.group(1).split())))
    return counts, json.loads(r.stdout.strip().splitlines()[-1])["cycles"]


def per_cycle(argv):
    """(instructions, instruction-cache misses) of one cycle: the longer run's extra over its
    extra cycles."""
    def timed(s):
        return counted([*argv, "--threads", "1", "--seconds", str(s), "--key", "ir:" + uuid.uuid4().hex[:12]])
    (e1, c1), (e2, c2) = timed(SHORT_S), timed(LONG_S)
    return tuple((e2[k] - e1[k]) / max(c2 - c1, 1) for k in ("Ir", "I1mr"))


def engines(which):
    """(engine, server, [(contender, driver argv)]) for each engine asked for."""
    d = [run.DRIVER, "cycle"]
    if "redis" in which:
        s = run.Server()
        at = ["--port", str(s.port)]
        yield "Redis", s, [("raw hiredis", [*d, "--contender", "raw", *at]),
                           ("deadbolt", [*d, "--contender", "deadbolt", *at])]
    if "memcached" in which:
        s = mc.Memcached()
        yield "memcached", s, [("raw meta commands", [*d, "--contender", "raw-mc", "--url", s.url]),
                               ("deadbolt", [*d, "--contender", "deadbolt", "--url", s.url])]
    for name, cls, raw in (("postgres", db.Postgres, "raw-pg"), ("mariadb", db.MariaDb, "raw-my")):
        if name in which:
            s = cls()
            yield ("PostgreSQL" if name == "postgres" else "MariaDB"), s, [
                ("raw lock calls", [*d, "--contender", raw, "--url", s.url]),
                ("raw, deadbolt's statements", [*d, "--contender", raw, "--statements", "1", "--url", s.url]),
                ("deadbolt", [*d, "--contender", "deadbolt", "--url", s.url])]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="redis,memcached,postgres,mariadb")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "instructions.md"))
    args = ap.parse_args()
    rows = []
    for engine, server, contenders in engines(args.engines.split(",")):
        try:
            got = {c: per_cycle(argv) for c, argv in contenders}
        finally:
            server.stop()
        ours = got.pop("deadbolt")
        for c, raw in got.items():
            rows.append(f"| {engine} | {c} | {raw[0]:,.0f} | {ours[0]:,.0f} | {ours[0] / raw[0]:.2f}x "
                        f"| {max(raw[1], 0):,.0f} | {max(ours[1], 0):,.0f} |")
            print(rows[-1], flush=True)
    text = "\n".join([
        "User-space instructions and instruction-cache misses per uncontended acquire+release cycle (one "
        "thread), deadbolt against the engine's raw client, counted by cachegrind "
        "(`python3 bench/instructions.py`): the longer run's extra counts over its extra cycles "
        f"({LONG_S} s against {SHORT_S} s under valgrind), so starting costs cancel out. The misses are "
        "cachegrind's model of this machine's first-level instruction cache: a cycle whose code does not "
        "fit it runs its instructions at a lower rate. The kernel's share is not counted "
        "(`bench/cpu_budget.py` has the whole client CPU).",
        "", "| engine | raw client | raw instructions/cycle | deadbolt instructions/cycle | deadbolt / raw "
        "| raw I-cache misses/cycle | deadbolt I-cache misses/cycle |",
        "|---|---|---:|---:|---:|---:|---:|", *rows, ""])
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
