#!/usr/bin/python3
"""bench/run.py: every scenario against deadbolt, the server's limit and the peers, in one
run on one redis-server pinned to CPU 0; contenders interleaved (A B C A B C ...), medians
of the repetitions with min..max. Writes results.json, table.md and charts (PNG).

    bench/run.py [--out bench/results] [--reps 3] [--smoke]

--smoke: seconds-long runs with tiny counts, so the tests can prove the harness still works.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import stats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DRIVER = os.environ.get("DEADBOLT_BENCH", os.path.join(ROOT, "build", "bench", "deadbolt-bench"))
PY = ["/usr/bin/python3", os.path.join(HERE, "peers", "redis_py_lock.py")]
NODE = ["node", os.path.join(HERE, "peers", "redlock.mjs")]

# name -> (argv prefix, extra options); the limit first, deadbolt second, then the peers.
CONTENDERS = {
    "raw hiredis": ([DRIVER], ["--contender", "raw"]),
    "deadbolt": ([DRIVER], ["--contender", "deadbolt"]),
    "redis-py sleep=0.1": (PY, ["--sleep", "0.1"]),
    "redis-py sleep=0.001": (PY, ["--sleep", "0.001"]),
    "node-redlock default": (NODE, []),
    "node-redlock busy": (NODE, ["--retry", "busy"]),
}
LIMIT, OURS = "raw hiredis", "deadbolt"
# The asynchronous API, in scenarios 1 and 2: --threads loops in flight from one thread.
ASYNC = "deadbolt async"
# Scenario 3n: raw hiredis that waits for the release's message instead of polling.
NOTIFIED = "raw hiredis notified"
# Scenario 1: raw hiredis's scripts, sent and waited for as deadbolt's blocking connection does
# it (a send that never blocks, then a recv bounded by the socket's receive timeout).
POLLED = "raw, deadbolt's waits"
DRIVERS = {**CONTENDERS, ASYNC: ([DRIVER], ["--contender", "deadbolt-async"]),
           NOTIFIED: ([DRIVER], ["--contender", "raw-notify"]),
           POLLED: ([DRIVER], ["--contender", "raw-polled"])}
# Scenario 3p: deadbolt's primitives, each by 8 processes on one name.
PRIMITIVES = {
    "Mutex": "mutex",
    "FairMutex": "fair",
    "RWLock, 2 writers + 6 readers": "rw",
    "Semaphore N=4": "sem4",
    "ReentrantMutex, taken twice": "reentrant",
    "MultiLock of 2 names": "multi",
    "LeaderElection campaign+resign": "leader",
}
PEERS = [c for c in CONTENDERS if c not in (LIMIT, OURS)]
# Scenario 7: Redlock over several nodes; node-redlock is the one peer that does it.
REDLOCK = {"deadbolt": (OURS, []), "deadbolt fencing=0": (OURS, ["--query", "fencing=0"]),
           "deadbolt async": (ASYNC, []), "deadbolt async fencing=0": (ASYNC, ["--query", "fencing=0"]),
           "node-redlock": ("node-redlock default", [])}
# Scenario 8: a Redis Cluster of 3 masters; redis-py's RedisCluster Lock is the peer, and
# deadbolt on one plain server shows what routing costs.
CLUSTER = ["deadbolt cluster", "deadbolt one server", "redis-py cluster"]


def make_cluster(n=3):
    """n cluster-enabled servers joined into one cluster (no replicas); waits until it is ok."""
    nodes = [Server(cluster=True) for _ in range(n)]
    subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{s.port}" for s in nodes],
                    "--cluster-replicas", "0", "--cluster-yes"], check=True, capture_output=True)
    for _ in range(200):
        if all("cluster_state:ok" in s.cli("CLUSTER", "INFO") for s in nodes):
            return nodes
        time.sleep(0.05)
    raise SystemExit("bench: the cluster never became ok")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A throwaway redis-server pinned to CPU 0."""

    def __init__(self, cluster=False):
        self.dir = tempfile.mkdtemp(prefix="deadbolt-bench-")
        self.port = free_port()
        extra = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                 "--cluster-port", str(free_port())] if cluster else []
        self.proc = subprocess.Popen(
            ["taskset", "-c", "0", "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", self.dir, "--logfile", "redis.log", *extra],
            stdout=subprocess.DEVNULL)
        for _ in range(100):
            if self.cli("PING") == "PONG":
                return
            time.sleep(0.05)
        raise SystemExit("bench: redis-server did not start")

    def cli(self, *args):
        r = subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True)
        return r.stdout.strip()

    def commandstats(self):
        """{command: (calls, usec)} the server executed so far (INFO commandstats), calls made
        inside scripts included, our own INFO excluded."""
        out = {}
        for line in self.cli("INFO", "commandstats").splitlines():
            if not line.startswith("cmdstat_") or line.startswith("cmdstat_info:"):
                continue
            name, fields = line[len("cmdstat_"):].split(":", 1)
            kv = dict(f.split("=", 1) for f in fields.split(","))
            out[name] = (int(kv["calls"]), int(kv["usec"]))
        return out

    def commands(self):
        """How many commands the server executed so far (commandstats)."""
        return sum(calls for calls, _ in self.commandstats().values())

    def stat(self, field):
        """A numeric field of INFO."""
        for line in self.cli("INFO", "all").splitlines():
            if line.startswith(field + ":"):
                return int(line.split(":")[1])
        return 0

    def stop(self):
        self.cli("SHUTDOWN", "NOSAVE")
        self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def ensure_peers():
    """The Node.js peers' packages (npm ci), installed once."""
    if not os.path.isdir(os.path.join(HERE, "peers", "node_modules")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"], cwd=os.path.join(HERE, "peers"), check=True)


def argv_for(contender, scenario, opts, cpu=None):
    """The contender's driver command for scenario, pinned to cpu if given."""
    prefix, extra = DRIVERS[contender]
    argv = [*prefix, scenario, *extra, *[str(o) for o in opts]]
    return ["taskset", "-c", str(cpu), *argv] if cpu is not None else argv


def run(contender, scenario, opts, cpu=None, timeout=600):
    argv = argv_for(contender, scenario, opts, cpu)
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"bench: {contender} {scenario} failed ({r.returncode}): {r.stderr[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def redis_benchmark(srv, clients, n, pipeline=1):
    """The acquire and the release script through redis-benchmark (fresh keys, so every
    acquire succeeds): one cycle = one of each. pipeline > 1: that many requests in flight
    per connection, the server's capacity for deadbolt's own scripts."""
    srv.cli("SCRIPT", "FLUSH")
    sha = {}
    for name in ("acquire", "release"):
        source = subprocess.run([DRIVER, "script", name], capture_output=True, text=True, check=True).stdout
        sha[name] = srv.cli("SCRIPT", "LOAD", source)
    rows = {}
    for name, cmd in (("acquire", ["EVALSHA", sha["acquire"], "3", "k:__rand_int__", "{k:__rand_int__}:fence",
                                   "{k:__rand_int__}:waiters", "tok", "30000", "90000", "ch", "", ""]),
                      ("release", ["EVALSHA", sha["release"], "2", "k:__rand_int__", "{k:__rand_int__}:waiters",
                                   "tok", "ch"])):
        out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(srv.port), "-c", str(clients),
                              "-n", str(n), "-P", str(pipeline), "-r", "1000000", "--csv", *cmd], capture_output=True, text=True).stdout
        fields = out.strip().splitlines()[-1].replace('"', "").split(",")
        rows[name] = {"rps": float(fields[1]), "p50_ms": float(fields[4]), "p99_ms": float(fields[6])}
    return {"cycles_per_s": 1 / (1 / rows["acquire"]["rps"] + 1 / rows["release"]["rps"]),
            "p50_us": (rows["acquire"]["p50_ms"] + rows["release"]["p50_ms"]) * 1000,
            "p99_us": (rows["acquire"]["p99_ms"] + rows["release"]["p99_ms"]) * 1000}


def check(results):
    """What a smoke run must show, so the harness cannot rot: every contender measured in
    every scenario it takes part in, and no lost update under the locks that promise none."""
    sc, bad = results["scenarios"], []
    for c, by_cpu in sc["1_latency"].items():
        bad += [f"1: no cycles for {c}" for rows in by_cpu.values() for r in rows if r["cycles_per_s"] <= 0]
    for c, by_t in sc["2_throughput"].items():
        bad += [f"2: no cycles for {c}" for rows in by_t.values() for r in rows if r["cycles_per_s"] <= 0]
    bad += ["2: no pipelined limit measured" for r in sc.get("2_pipelined_limit", [{}]) if not r.get("cycles_per_s")]
    for c, rows in sc["3_contended"].items():
        bad += [f"3: no acquisitions for {c}" for r in rows if r["acquisitions"] == 0]
        bad += [f"3: {c} lost {r['lost_updates']} updates" for r in rows if r["lost_updates"] != 0]
    for name, rows in sc.get("3n_notified", {}).items():
        bad += [f"3n: no acquisitions for {name}" for r in rows if r["acquisitions"] == 0]
        bad += [f"3n: {name} lost {r['lost_updates']} updates" for r in rows if r["lost_updates"] != 0]
    for name, rows in sc.get("3p_primitives", {}).items():
        bad += [f"3p: no acquisitions for {name}" for r in rows if r["acquisitions"] == 0]
        bad += [f"3p: {name} lost {r['lost_updates']} updates" for r in rows if r["lost_updates"] != 0]
        bad += [f"3p: {name} had {r['violations']} violations" for r in rows if r["violations"] != 0]
    for c, by_n in sc["4_waiting"].items():
        bad += [f"4: no server commands seen for {c}" for rows in by_n.values() for r in rows if r["server_commands"] <= 0]
    for n, rows in sc["5_renewal"].items():
        bad += [f"5 ({n}): {r['leases'] - r['valid_at_end']} leases lost" for r in rows if r["valid_at_end"] != r["leases"]]
    for c, rows in sc.get("9_metrics_overhead", {}).items():
        bad += [f"9: no cycles for {c}" for r in rows if r["cycles_per_s"] <= 0]
        if c.endswith("+metrics"):  # the observer was on: it counted every cycle's grant
            bad += [f"9: {c} counted {r.get('observed_grants')} grants of {r['cycles']} cycles"
                    for r in rows if (r.get("observed_grants") or 0) < r["cycles"]]
    for c, by_t in sc.get("8_cluster", {}).items():
        bad += [f"8: no cycles for {c}" for rows in by_t.values() for r in rows if r["cycles_per_s"] <= 0]
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--only", default="1,2,3,4,5,7,8,9",
                    help="scenarios to run (3 includes 3p); the others are kept from --out's results.json")
    a = ap.parse_args()
    only = {int(x) for x in a.only.split(",")}
    smoke = a.smoke
    reps = 1 if smoke else a.reps
    cycle_s = 0.3 if smoke else 3
    contend_s = 1 if smoke else 10
    wait_s = 1 if smoke else 10
    renew_s = 2 if smoke else 30
    thread_counts = [1, 4] if smoke else [1, 4, 16, 64]
    redlock_threads = [1, 4] if smoke else [1, 16]
    waiters = [1, 3] if smoke else [1, 10, 100]
    lease_counts = [100] if smoke else [1000, 10000, 100000]
    lease_ttls_ms = [3000] if smoke else [3000, 30000]  # a renewal every 1 s, and the default
    if not os.access(DRIVER, os.X_OK):
        raise SystemExit("bench: build first (scripts/setup.sh)")
    ensure_peers()

    results = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "smoke": smoke, "reps": reps, "machine": {"cpus": os.cpu_count(), "kernel": platform.release()},
               "versions": {}, "scenarios": {}}
    if only != {1, 2, 3, 4, 5, 7, 8, 9}:  # a partial re-run: keep the rest of the last full run
        with open(os.path.join(a.out, "results.json")) as f:
            kept = json.load(f)
        kept.setdefault("reruns", []).append({"scenarios": sorted(only), "started": results["started"]})
        results = kept
    sc = results["scenarios"]
    srv = Server()  # after the last early exit: nothing to leave running
    try:
        results["versions"]["redis-server"] = srv.cli("INFO", "server").split("redis_version:")[1].split()[0]
        key = 0

        def fresh():
            nonlocal key
            key += 1
            return f"b{key}"

        # 1. Uncontended latency: one thread, client on CPU 0 and on CPU 1.
        s1 = {c: {0: [], 1: []} for c in [*CONTENDERS, ASYNC, POLLED, "redis-benchmark"]}
        if 1 in only:
            sc["1_latency"] = s1
        for _ in range(reps if 1 in only else 0):
            for cpu in (0, 1):
                for c in [*CONTENDERS, ASYNC, POLLED]:
                    r = run(c, "cycle", ["--port", srv.port, "--threads", 1, "--seconds", cycle_s, "--key", fresh()], cpu)
                    if "version" in r:
                        results["versions"][c.split()[0]] = r["version"] + (f", ioredis {r['ioredis']}" if "ioredis" in r else "")
                    s1[c][cpu].append(r)
                s1["redis-benchmark"][cpu].append(redis_benchmark(srv, 1, 2000 if smoke else 20000))
            srv.cli("FLUSHALL")
        # 2. Uncontended throughput: T threads (or T concurrent loops) on distinct keys.
        s2 = {c: {t: [] for t in thread_counts} for c in [*CONTENDERS, ASYNC, "redis-benchmark"]}
        # The pipelined limit: the same scripts by redis-benchmark -P 16 -c 16, what the
        # server can do when nothing waits for a round trip.
        pipelined = []
        if 2 in only:
            sc["2_throughput"] = s2
            sc["2_pipelined_limit"] = pipelined
        for _ in range(reps if 2 in only else 0):
            for t in thread_counts:
                for c in [*CONTENDERS, ASYNC]:
                    s2[c][t].append(run(c, "cycle", ["--port", srv.port, "--threads", t, "--seconds", cycle_s, "--key", fresh()], 1))
                s2["redis-benchmark"][t].append(redis_benchmark(srv, t, 2000 if smoke else 50000))
                srv.cli("FLUSHALL")
            pipelined.append(redis_benchmark(srv, 16, 20000 if smoke else 500000, pipeline=16))
            srv.cli("FLUSHALL")
        # 9. What the metrics observer costs: scenario 2's 16 threads (and 16 in flight), with
        # a deadbolt::metrics Registry counting every event and without, alternating, so that
        # the machine's drift falls on both alike.
        s9 = {c + m: [] for c in (OURS, ASYNC) for m in ("", " +metrics")}
        if 9 in only:
            sc["9_metrics_overhead"] = s9
        for _ in range(reps if 9 in only else 0):
            for pair in range(1 if smoke else 3):
                for c in (OURS, ASYNC):
                    # ABBA: neither side always goes first.
                    for m in ("", " +metrics") if pair % 2 == 0 else (" +metrics", ""):
                        s9[c + m].append(run(c, "cycle", ["--port", srv.port, "--threads", 4 if smoke else 16,
                                                          "--seconds", cycle_s, "--key", fresh(),
                                                          "--metrics", 1 if m else 0], 1))
                srv.cli("FLUSHALL")
        # 3 and 6. Contended handoff: 8 processes, one key, a read-modify-write inside.
        s3 = {c: [] for c in CONTENDERS}
        if 3 in only:
            sc["3_contended"] = s3
        def contend(c, extra=()):
            """One contended run: 8 processes of contender c on a fresh key."""
            k = fresh()
            start = now_ns() + 3_000_000_000  # eight processes start up meanwhile
            until = start + int(contend_s * 1e9)
            procs = []
            for i in range(8):
                argv = argv_for(c, "contend", ["--port", srv.port, "--id", i, "--key", k,
                                               "--start-ns", start, "--until-ns", until, *extra], 1)
                procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, text=True))
            outs = [json.loads(p.communicate(timeout=contend_s + 120)[0].strip().splitlines()[-1]) for p in procs]
            counter = int(srv.cli("GET", f"{k}:counter") or 0)
            writes = sum(o["writes"] for o in outs) if all("writes" in o for o in outs) else None
            row = stats.contended([o["events"] for o in outs], counter, writes)
            row["failures"] = sum(o["failures"] for o in outs)
            row["violations"] = sum(o.get("violations", 0) for o in outs)
            row["cpu_s"] = sum(o["cpu_s"] for o in outs)
            return row

        for _ in range(reps if 3 in only else 0):
            for c in CONTENDERS:
                s3[c].append(contend(c))
        # 3n. The limit of not polling: raw hiredis notified, beside the busy raw and deadbolt.
        notified = {"raw hiredis busy": LIMIT, "raw hiredis notified": NOTIFIED, "deadbolt": OURS}
        s3n = {name: [] for name in notified}
        if 3 in only:
            sc["3n_notified"] = s3n
        for _ in range(reps if 3 in only else 0):
            for name, c in notified.items():
                s3n[name].append(contend(c))
        # 3p. deadbolt's other primitives under the same load (no peer here has them).
        s3p = {name: [] for name in PRIMITIVES}
        if 3 in only:
            sc["3p_primitives"] = s3p
        for _ in range(reps if 3 in only else 0):
            for name, prim in PRIMITIVES.items():
                s3p[name].append(contend(OURS, ["--primitive", prim]))
        # 4. Waiting cost: N clients wait on a lock someone else holds.
        s4 = {c: {n: [] for n in waiters} for c in CONTENDERS if c != LIMIT}
        if 4 in only:
            sc["4_waiting"] = s4
        for _ in range(reps if 4 in only else 0):
            for n in waiters:
                for c in s4:
                    k = fresh()
                    srv.cli("SET", k, "someone-else", "PX", str(int((wait_s + 5) * 1000)))
                    before = srv.commands()
                    r = run(c, "wait", ["--port", srv.port, "--clients", n, "--seconds", wait_s, "--key", k], 1)
                    r["server_commands"] = srv.commands() - before
                    s4[c][n].append(r)
        # 5. Renewal cost: one deadbolt process holds L auto-renewed leases.
        s5 = {f"{n} leases, TTL {ttl // 1000} s": [] for ttl in lease_ttls_ms for n in lease_counts}
        if 5 in only:
            sc["5_renewal"] = s5
        for ttl, n in [(ttl, n) for ttl in lease_ttls_ms for n in lease_counts] if 5 in only else []:
            k = fresh()
            argv = argv_for(OURS, "renew", ["--port", srv.port, "--leases", n, "--threads", 16,
                                            "--ttl-ms", ttl, "--seconds", renew_s, "--key", k], 1)
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
            p.stdout.readline()  # all acquired: the holding phase begins
            before, reads0, t0 = srv.commands(), srv.stat("total_reads_processed"), time.time()
            # Redis counts renewals (EVALSHA) and the INFO of this loop; subtract ours.
            last = json.loads(p.stdout.readline())
            p.wait()
            el = time.time() - t0
            row = dict(last, server_commands_per_s=(srv.commands() - before) / el,
                       server_reads_per_s=(srv.stat("total_reads_processed") - reads0 - 2) / el,
                       client_cpu_pct=100 * last["cpu_s"] / last["held_s"])
            s5[f"{n} leases, TTL {ttl // 1000} s"].append(row)
            srv.cli("FLUSHALL")
        # 7. Redlock: lock+unlock cycles over 3 and 5 independent nodes, deadbolt's redlock://
        #    against node-redlock on the same nodes (each thread its own key).
        s7 = {f"{n} nodes": {c: {t: [] for t in redlock_threads} for c in REDLOCK} for n in (3, 5)}
        if 7 in only:
            sc["7_redlock"] = s7
        for n in (3, 5) if 7 in only else []:
            nodes = [Server() for _ in range(n)]
            try:
                ports = ",".join(str(s.port) for s in nodes)
                for _ in range(reps):
                    for t in redlock_threads:
                        for name, (c, extra) in REDLOCK.items():
                            s7[f"{n} nodes"][name][t].append(run(c, "cycle", [
                                "--ports", ports, "--threads", t, "--seconds", cycle_s, "--key", fresh(),
                                *extra], 1))
            finally:
                for s in nodes:
                    s.stop()
        # 8. Redis Cluster: lock+unlock cycles over 3 masters (all on CPU 0, as the one server
        #    is), deadbolt's redis-cluster:// against redis-py's RedisCluster Lock, and
        #    deadbolt on one plain server for the cost of routing.
        s8 = {c: {t: [] for t in redlock_threads} for c in CLUSTER}
        if 8 in only:
            sc["8_cluster"] = s8
            nodes = make_cluster()
            try:
                ports = ",".join(str(s.port) for s in nodes)
                for _ in range(reps):
                    for t in redlock_threads:
                        common = ["--threads", t, "--seconds", cycle_s, "--key", fresh()]
                        s8["deadbolt cluster"][t].append(
                            run(OURS, "cycle", ["--ports", ports, "--cluster", 1, *common], 1))
                        s8["deadbolt one server"][t].append(
                            run(OURS, "cycle", ["--port", srv.port, *common], 1))
                        s8["redis-py cluster"][t].append(run(
                            "redis-py sleep=0.1", "cycle", ["--port", nodes[0].port, "--cluster", 1, *common], 1))
                    srv.cli("FLUSHALL")
            finally:
                for s in nodes:
                    s.stop()
    except SystemExit:
        # A contender failed: keep what the scenarios before it measured, beside the last
        # complete results (which stay as they were).
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "results.partial.json"), "w") as f:
            json.dump(results, f, indent=1, default=str)
        raise
    finally:
        srv.stop()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(os.path.join(a.out, "results.json")) as f:  # the report reads what was saved
        summary = report.write(json.load(f), a.out)
    print(summary)
    problems = check(results)
    for p in problems:
        print("bench: " + p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
