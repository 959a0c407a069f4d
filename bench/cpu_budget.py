#!/usr/bin/env python3
"""The per-acquisition client-CPU budget (issue 34), from the committed bench results.

    python3 bench/cpu_budget.py [--out bench/results/cpu_budget.md]

Every harness records each run's client CPU (user + system of the driver process, measured
around its cycles) beside its cycle count; this divides one by the other for deadbolt and for
the raw client of the same engine (the same requests with no library logic), uncontended (one
client) and at the harness's throughput row, and shows the ratio against the budget of 1.2x.
Nothing is run: it reads bench/results/{results.json,etcd,zk,db,mc}.
"""
import argparse
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
BUDGET = 1.2


def load(*parts):
    path = os.path.join(RESULTS, *parts)
    with open(path) as f:
        return json.load(f)


def each_us(runs):
    """Client CPU per cycle in µs of each repetition that has it."""
    return [1e6 * r["cpu_s"] / r["cycles"] for r in runs if r.get("cycles") and "cpu_s" in r]


def per_cycle_us(runs):
    """Median client CPU per cycle in µs over the repetitions, or None."""
    vals = each_us(runs)
    return statistics.median(vals) if vals else None


def user_us(runs):
    """Median user-space CPU per cycle in µs, where the runs recorded it (user_s), or None."""
    vals = [1e6 * r["user_s"] / r["cycles"] for r in runs if r.get("cycles") and "user_s" in r]
    return statistics.median(vals) if vals else None


def rep_ratios(raw, ours):
    """deadbolt / raw of each repetition, paired as the harness ran them (side by side)."""
    return [d / r for r, d in zip(each_us(raw), each_us(ours)) if r > 0]


def rows():
    """(engine, row, raw contender, raw runs, deadbolt runs) for every row with both."""
    redis = load("results.json")["scenarios"]
    yield "Redis", "1 client (scenario 2, 1 thread)", "raw hiredis", \
        redis["2_throughput"]["raw hiredis"]["1"], redis["2_throughput"]["deadbolt"]["1"]
    yield "Redis", "16 threads (scenario 2)", "raw hiredis", \
        redis["2_throughput"]["raw hiredis"]["16"], redis["2_throughput"]["deadbolt"]["16"]
    etcd = load("etcd", "results.json")["scenarios"]
    # Against the bare Txns, and (where measured) against deadbolt's own requests sent raw: the
    # watch it keeps on a holding's key hears every release, on a stream read by another thread.
    for raw in ("raw gRPC", "raw gRPC, deadbolt's requests"):
        for scenario, row in (("E1_latency", "1 client (E1)"), ("E2_throughput", "16 threads (E2)")):
            if raw in etcd[scenario]:
                yield "etcd", row, raw, etcd[scenario][raw], etcd[scenario]["deadbolt"]
    zk = load("zk", "results.json")["scenarios"]
    # Against the bare create and delete, and (where measured) against deadbolt's own requests
    # sent raw: its listing and its watch on the granted node are replies the client reads too.
    for raw in ("raw C client", "raw, deadbolt's requests"):
        for scenario, row in (("Z1_latency", "1 client (Z1)"), ("Z2_throughput", "16 threads (Z2)")):
            if raw in zk[scenario]:
                yield "ZooKeeper", row, raw, zk[scenario][raw], zk[scenario]["deadbolt"]
    db = load("db", "results.json")["engines"]
    for engine, name in (("postgresql", "PostgreSQL"), ("mariadb", "MariaDB")):
        # Against the bare lock calls, and (where measured) against deadbolt's own statements sent
        # raw, which cost the server more (a fence drawn, the holding named) and so change what
        # the client's kernel pays per cycle too.
        for raw, raw_name in (("raw", "raw lock calls"), ("raw, deadbolt's statements", "raw, deadbolt's statements")):
            for scenario, row in (("D1_latency", "1 client (D1)"), ("D2_throughput", "16 threads (D2)")):
                if raw in db[engine][scenario]:
                    yield name, row, raw_name, db[engine][scenario][raw], db[engine][scenario]["deadbolt"]
    mc = load("mc", "results.json")["scenarios"]
    # Against the bare add and delete, and (where measured) against deadbolt's own commands sent
    # raw: the CAS read and the fence drawn are replies the client's kernel takes in too.
    for raw, raw_name in (("raw", "raw meta commands"), ("raw, deadbolt's commands", "raw, deadbolt's commands")):
        for scenario, row in (("M1_latency", "1 client (M1)"), ("M2_throughput", "16 threads (M2)")):
            if raw in mc[scenario]:
                yield "memcached", row, raw_name, mc[scenario][raw], mc[scenario]["deadbolt"]


def started(*parts):
    """When the rows read here were measured: a harness that re-runs some scenarios (run.py
    --only) keeps its first start and lists the re-runs; the last re-run of scenario 2 counts."""
    r = load(*parts)
    again = [x["started"] for x in r.get("reruns", []) if 2 in x.get("scenarios", [])]
    return again[-1] if again else r.get("started", "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(RESULTS, "cpu_budget.md"))
    args = ap.parse_args()
    lines = ["Client CPU per acquire+release cycle, deadbolt against the engine's raw client (the same "
             f"requests, no library logic), from the committed results (`python3 bench/cpu_budget.py`); "
             f"budget ≤ {BUDGET}x. Medians of the repetitions; \"per repetition\" is the lowest and "
             "highest ratio of one repetition's pair (run side by side), which shows how far one "
             f"sitting's noise moves a row. Results of: Redis {started('results.json')}, "
             f"etcd {started('etcd', 'results.json')}, ZooKeeper {started('zk', 'results.json')}, "
             f"databases {started('db', 'results.json')}, memcached {started('mc', 'results.json')}.", "",
             "\"of it in user space\" is the part outside the kernel, raw → deadbolt, where the run recorded it.", "",
             "| engine | row | raw client | raw µs/cycle | deadbolt µs/cycle | of it in user space | deadbolt / raw "
             "| per repetition | within budget |",
             "|---|---|---|---|---|---|---|---|---|"]
    for engine, row, raw_name, raw, ours in rows():
        r, d = per_cycle_us(raw), per_cycle_us(ours)
        if r is None or d is None:
            continue
        ratio = d / r
        each = rep_ratios(raw, ours)
        spread = f"{min(each):.2f}..{max(each):.2f}x" if len(each) > 1 else ""
        ru, du = user_us(raw), user_us(ours)
        user = f"{ru:.1f} → {du:.1f}" if ru is not None and du is not None else "–"
        lines.append(f"| {engine} | {row} | {raw_name} | {r:.1f} | {d:.1f} | {user} | {ratio:.2f}x | {spread} | "
                     f"{'yes' if ratio <= BUDGET else 'no'} |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
