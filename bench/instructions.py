#!/usr/bin/env python3
"""User-space instructions per uncontended lock cycle, deadbolt against each engine's raw client.

    python3 bench/instructions.py [--engines redis,memcached,postgres,mariadb] [--out FILE]

Time on these machines is noisy; instruction counts are not. Each contender's one-thread cycle
runs under valgrind's callgrind twice, for a short and a longer time; the difference in
instructions over the difference in cycles is the cost of one acquire+release, with the fixed
cost of starting (dynamic linking, connecting) cancelled out. System calls and the kernel's
work are not counted: bench/cpu_budget.py has the whole client CPU. Needs valgrind.
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
    """(instructions, cycles) of one run of the driver under callgrind."""
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/out", *argv],
                           capture_output=True, text=True, timeout=600)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or not m:
        raise SystemExit(f"bench: {' '.join(argv)} failed under callgrind: {r.stderr[-800:]}")
    return int(m.group(1)), json.loads(r.stdout.strip().splitlines()[-1])["cycles"]


def per_cycle(argv):
    """Instructions of one cycle: the longer run's extra instructions over its extra cycles."""
    def timed(s):
        return counted([*argv, "--threads", "1", "--seconds", str(s), "--key", "ir:" + uuid.uuid4().hex[:12]])
    (i1, c1), (i2, c2) = timed(SHORT_S), timed(LONG_S)
    return (i2 - i1) / max(c2 - c1, 1)


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
            rows.append(f"| {engine} | {c} | {raw:,.0f} | {ours:,.0f} | {ours / raw:.2f}x |")
            print(rows[-1], flush=True)
    text = "\n".join([
        "User-space instructions per uncontended acquire+release cycle (one thread), deadbolt against the "
        "engine's raw client, counted by callgrind (`python3 bench/instructions.py`): the longer run's extra "
        f"instructions over its extra cycles ({LONG_S} s against {SHORT_S} s under valgrind), so starting "
        "costs cancel out. The kernel's share is not counted (`bench/cpu_budget.py` has the whole client CPU).",
        "", "| engine | raw client | raw instructions/cycle | deadbolt instructions/cycle | deadbolt / raw |",
        "|---|---|---:|---:|---:|", *rows, ""])
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
