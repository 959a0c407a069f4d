#!/usr/bin/env python3
"""What one Redlock cycle costs each node, by command (INFO commandstats), against node-redlock.

    python3 bench/redlock_commands.py [--nodes 3,5] [--threads 1,16] [--seconds 3]

Scenario 7 of bench/run.py: lock+unlock cycles over N independent redis-servers (all on CPU
0, the clients on CPU 1), each thread on its own name; deadbolt fenced (the default), deadbolt
fencing=0 and node-redlock. Around each run every node's INFO commandstats is read, and the
difference is divided by the run's cycles: the commands (scripts and the calls made inside
them, counted apart) each node executed per cycle, and its CPU time (INFO cpu). Writes
bench/results/redlock_commands.md and .json.
"""
import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (the servers and the contenders' commands)


def cpu_us(srv):
    """The server's CPU time so far (user + system), in microseconds."""
    f = dict(line.split(":", 1) for line in srv.cli("INFO", "cpu").splitlines() if ":" in line)
    return 1e6 * (float(f["used_cpu_user"]) + float(f["used_cpu_sys"]))


def per_cycle(before, after, cycles):
    """{command: [calls, usec] per cycle} of what ran between the two readings."""
    d = {}
    for name, (calls, usec) in after.items():
        c0, u0 = before.get(name, (0, 0))
        if calls > c0:
            d[name] = [(calls - c0) / cycles, (usec - u0) / cycles]
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="3,5")
    ap.add_argument("--threads", default="1,16")
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    run.ensure_peers()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    results, lines = [], []
    key = 0
    for n in (int(x) for x in a.nodes.split(",")):
        nodes = [run.Server() for _ in range(n)]
        try:
            ports = ",".join(str(s.port) for s in nodes)
            for t in (int(x) for x in a.threads.split(",")):
                for name, (c, extra) in run.REDLOCK.items():
                    if "async" in name:
                        continue  # the same requests as the blocking path's
                    key += 1
                    before = [s.commandstats() for s in nodes]
                    cpu0 = [cpu_us(s) for s in nodes]
                    r = run.run(c, "cycle", ["--ports", ports, "--threads", t, "--seconds", a.seconds,
                                             "--key", f"rc{key}", *extra], 1)
                    after = [s.commandstats() for s in nodes]
                    cpu = sum(cpu_us(s) - c0 for s, c0 in zip(nodes, cpu0)) / n / r["cycles"]
                    each = [per_cycle(b, x, r["cycles"]) for b, x in zip(before, after)]
                    results.append({"nodes": n, "threads": t, "contender": name, "cycles_per_s": r["cycles_per_s"],
                                    "server_cpu_us_per_cycle": cpu, "per_node": each})
                    # The nodes are alike: the mean over them, per command.
                    cmds = sorted({k for e in each for k in e})
                    mean = {k: [sum(e.get(k, [0, 0])[i] for e in each) / n for i in (0, 1)] for k in cmds}
                    calls = sum(v[0] for k, v in mean.items() if not k.startswith(("eval", "fcall")))
                    scripts = sum(v[0] for k, v in mean.items() if k.startswith(("eval", "fcall")))
                    detail = ", ".join(f"{k} {v[0]:.2f}" for k, v in mean.items())
                    lines.append(f"| {n} | {t} | {name} | {r['cycles_per_s']:,.0f} | {scripts:.2f} | "
                                 f"{calls:.2f} | {cpu:.1f} | {detail} |")
                    print(lines[-1], file=sys.stderr)
                for s in nodes:
                    s.cli("FLUSHALL")
        finally:
            for s in nodes:
                s.stop()
    out = os.path.join(HERE, "results", "redlock_commands")
    with open(out + ".json", "w") as f:
        json.dump({"started": started, "seconds": a.seconds, "runs": results}, f, indent=1)
    text = (f"Redlock, per node and per lock+unlock cycle (the mean over the nodes), run {started}, "
            f"{a.seconds:g} s per row (`python3 bench/redlock_commands.py`). Scripts: EVAL/EVALSHA/FCALL "
            "calls; commands: everything else the node executed, the calls made inside scripts included; "
            "server CPU: the node's user + system CPU time (INFO cpu) per cycle, in µs.\n\n"
            "| nodes | threads | contender | cycles/s | scripts | commands | server CPU µs | by command (calls) |\n"
            "|---:|---:|---|---:|---:|---:|---:|---|\n" + "\n".join(lines) + "\n")
    with open(out + ".md", "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
