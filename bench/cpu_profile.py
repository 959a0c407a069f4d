#!/usr/bin/env python3
"""Where a lock cycle's client CPU goes: the hot rows of bench/run.py under perf.

    python3 bench/cpu_profile.py [--tag after] [--reps 3] [--seconds 3] [--no-graphs]
                                 [--only 2-1t,pg-1t,...]

Each row (scenario 2 at 1 and 16 threads on one redis-server; Redlock over 3 nodes at 16
threads; one thread's Mutex cycle on PostgreSQL, MariaDB, memcached, a 3-member etcd and a
3-server ZooKeeper, against the raw client sending deadbolt's own statements) runs every
contender pinned to CPU 1 (the servers on CPU 0, as in run.py) under `perf stat` for its
client CPU (task-clock) and context switches per cycle, medians of the repetitions; then once
under `perf record` for a flame graph of deadbolt's and the raw client's cycle
(bench/flame.py). Writes bench/results/profiles/<row>-<contender>-<tag>.svg and
table-<tag>.md (rows kept in results-<tag>.json, so a row can be re-run
alone). The ratio to raw is the per-acquisition client-CPU budget of issue 34.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (the servers and the contenders' commands)

OUT = os.path.join(HERE, "results", "profiles")
# row -> (what it is, threads, redlock nodes (0 = one server), contenders, graphed)
ROWS = {
    "2-1t": ("scenario 2, 1 thread", 1, 0,
             ["raw hiredis", "deadbolt", "deadbolt async", "node-redlock busy"], ["raw hiredis", "deadbolt"]),
    "2-16t": ("scenario 2, 16 threads", 16, 0,
              ["raw hiredis", "deadbolt", "deadbolt loop-blocking", "deadbolt async", "node-redlock busy"],
              ["raw hiredis", "deadbolt", "deadbolt async"]),
    "7-3n-16t": ("Redlock, 3 nodes, fenced, 16 threads", 16, 3,
                 ["deadbolt", "deadbolt async", "node-redlock default"], ["deadbolt", "deadbolt async"]),
}
# The other engines: row -> (what, threads, the server (where it is, as the driver's
# arguments), contenders and their driver arguments (the first is the raw one), graphed). Made
# on first use: the servers' modules import what they need.
RAWS = "raw, deadbolt's statements"


def engine_rows():
    import db
    import etcd
    import mc
    import zk

    def one(what, make, url, raw, pin=True):
        return (what, 1, make, url, {RAWS: raw, "deadbolt": ["--contender", "deadbolt"]}, [RAWS, "deadbolt"],
                pin)
    return {
        "pg-1t": one("PostgreSQL, 1 thread", db.Postgres, lambda s: ["--url", s.url],
                     ["--contender", "raw-pg", "--statements", "1"]),
        "my-1t": one("MariaDB, 1 thread", db.MariaDb, lambda s: ["--url", s.url],
                     ["--contender", "raw-my", "--statements", "1"]),
        "mc-1t": one("memcached, 1 thread", mc.Memcached, lambda s: ["--url", s.url],
                     ["--contender", "raw-mc", "--statements", "1"]),
        "etcd-1t": one("etcd, 3 members, 1 thread", etcd.Etcd, lambda s: ["--etcd", s.endpoints],
                       ["--contender", "raw-etcd", "--statements", "1"]),
        # Not pinned: three JVMs on one CPU time the clients' connections out (as zk.py).
        "zk-1t": one("ZooKeeper, 3 servers, 1 thread", zk.Ensemble, lambda s: ["--zk", s.hosts],
                     ["--contender", "raw-zk", "--statements", "1"], pin=False),
    }


def pin_to_cpu0():
    """Every server process this bench started (children of this one and theirs) onto CPU 0."""
    me = str(os.getpid())
    kids = subprocess.run(["pgrep", "-P", me], capture_output=True, text=True).stdout.split()
    for pid in kids:
        kids += subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split()
    for pid in kids:
        subprocess.run(["taskset", "-a", "-p", "-c", "0", pid], capture_output=True)


# A contender run.py does not have, added to its drivers so that run.argv_for makes its command.
# The loop spins for replies after work by default (loop_spin): on the client's one CPU that spin
# starves the waiting threads, so this design is measured at its best, without it.
run.DRIVERS["deadbolt loop-blocking"] = ([run.DRIVER], ["--contender", "loop-blocking", "--loop-spin-us", "0"])


def fresh():
    """A key no earlier run used."""
    return "profile:" + uuid.uuid4().hex[:12]


def command(contender, opts):
    """The contender's cycle command, pinned to CPU 1."""
    return run.argv_for(contender, "cycle", opts, 1)


def perf_stat(argv):
    """(the contender's JSON line, task-clock s, context switches) of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".csv") as f:
        out = subprocess.run(["perf", "stat", "-x,", "-o", f.name, "-e", "task-clock,context-switches",
                              *argv], capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise SystemExit(f"bench: {' '.join(argv)} failed ({out.returncode}): {out.stderr[-800:]}")
        stats = {}
        for line in f.read().splitlines():
            parts = line.split(",")
            if len(parts) > 2 and parts[2] in ("task-clock", "context-switches"):
                stats[parts[2]] = float(parts[0])
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result, stats["task-clock"] / 1000, stats["context-switches"]


def graph(argv, name, title):
    """A flame graph of one run: NAME.svg, and the category shares from flame.py top."""
    data = os.path.join(tempfile.gettempdir(), f"deadbolt-profile-{name}.data")
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "--call-graph", "dwarf,16384",
                    "-o", data, "--", *argv], capture_output=True, check=True, timeout=300)
    folded = subprocess.run([sys.executable, os.path.join(HERE, "flame.py"), "fold", data],
                            capture_output=True, text=True, check=True).stdout
    os.unlink(data)
    with tempfile.NamedTemporaryFile("w", suffix=".folded", delete=False) as f:
        f.write(folded)
    try:
        svg = subprocess.run([sys.executable, os.path.join(HERE, "flame.py"), "svg", f.name, "--title", title],
                             capture_output=True, text=True, check=True).stdout
        top = subprocess.run([sys.executable, os.path.join(HERE, "flame.py"), "top", f.name, "-n", "0"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    with open(os.path.join(OUT, name + ".svg"), "w") as out:
        out.write(svg)
    return top


def render(tag, reps, seconds, done):
    """The table of every row measured under tag so far (rows in ROWS order)."""
    lines = [f"Client CPU per lock cycle ({tag}): perf stat of each contender pinned to CPU 1, the servers on "
             f"CPU 0, medians of {reps} runs of {seconds:g} s (`python3 bench/cpu_profile.py --tag {tag}`).", "",
             "| row | contender | cycles/s | client CPU µs/cycle | / raw | context switches/cycle |",
             "|---|---|---|---|---|---|"]
    shares = []
    rows = {**ROWS, **engine_rows()}
    for row in (r for r in rows if r in done):
        med, graphs = done[row]["medians"], done[row]["graphs"]
        raw = med.get("raw hiredis", med.get(RAWS, [None, None]))[1]
        for c, (rate, us, sw) in med.items():
            ratio = f"{us / raw:.2f}x" if raw else "–"
            lines.append(f"| {rows[row][0]} | {c} | {rate:,.0f} | {us:.1f} | {ratio} | {sw:.2f} |")
        shares += [f"{name}.svg:\n" + "\n".join("    " + l for l in cats) for name, cats in graphs.items()]
    if shares:
        lines += ["", "Where the samples of each flame graph went (bench/flame.py top, self samples):", "",
                  "```", *shares, "```"]
    return "\n".join(lines) + "\n"


def measure_engine(row, reps, seconds, graphs):
    """One engine row: as measure(), on that engine's server."""
    what, threads, make, url, contenders, graphed, pin = engine_rows()[row]
    server = make()
    try:
        if pin:
            pin_to_cpu0()
        argv = {c: ["taskset", "-c", "1", run.DRIVER, "cycle", *args, *url(server), "--threads",
                    str(threads), "--seconds", str(seconds)] for c, args in contenders.items()}
        runs = {c: [] for c in contenders}
        for _ in range(reps):
            for c in contenders:
                r, cpu, switches = perf_stat([*argv[c], "--key", fresh()])
                runs[c].append((r["cycles_per_s"], 1e6 * cpu / r["cycles"], switches / r["cycles"]))
        out = {"medians": {c: [statistics.median(x[i] for x in runs[c]) for i in range(3)] for c in contenders},
               "graphs": {}}
        for c in graphed if graphs else []:
            name = f"{row}-{c.split(',')[0].replace(' ', '-')}-{graphs}"
            top = graph([*argv[c], "--key", fresh()], name, f"{what}: {c} ({graphs})")
            out["graphs"][name] = top[top.index("category"):top.index("self: by")].strip().splitlines()
        return out
    finally:
        server.stop()


def measure(row, reps, seconds, graphs):
    """One row: every contender's medians, and the flame graphs' category shares."""
    if row not in ROWS:
        return measure_engine(row, reps, seconds, graphs)
    what, threads, nodes, contenders, graphed = ROWS[row]
    servers = [run.Server() for _ in range(max(nodes, 1))]
    try:
        where = ["--ports", ",".join(str(s.port) for s in servers)] if nodes else ["--port", servers[0].port]
        runs = {c: [] for c in contenders}
        for _ in range(reps):
            for c in contenders:
                opts = [*where, "--threads", threads, "--seconds", seconds, "--key", fresh()]
                r, cpu, switches = perf_stat(command(c, opts))
                runs[c].append((r["cycles_per_s"], 1e6 * cpu / r["cycles"], switches / r["cycles"]))
        out = {"medians": {c: [statistics.median(x[i] for x in runs[c]) for i in range(3)] for c in contenders},
               "graphs": {}}
        for c in graphed if graphs else []:
            opts = [*where, "--threads", threads, "--seconds", seconds, "--key", fresh()]
            name = f"{row}-{c.replace(' ', '-')}-{graphs}"
            top = graph(command(c, opts), name, f"{what}: {c} ({graphs})")
            out["graphs"][name] = top[top.index("category"):top.index("self: by")].strip().splitlines()
        return out
    finally:
        for s in servers:
            s.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", default="now")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--only", default=",".join(ROWS))
    ap.add_argument("--no-graphs", action="store_true")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    # Rows measured earlier under the same tag stay (a row may be re-run alone).
    store = os.path.join(OUT, f"results-{args.tag}.json")
    done = json.load(open(store)) if os.path.exists(store) else {}
    for row in args.only.split(","):
        done[row] = measure(row, args.reps, args.seconds, None if args.no_graphs else args.tag)
        with open(store, "w") as f:
            json.dump(done, f, indent=1)
    text = render(args.tag, args.reps, args.seconds, done)
    with open(os.path.join(OUT, f"table-{args.tag}.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
