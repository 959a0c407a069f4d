#!/usr/bin/python3
"""bench/etcd.py: deadbolt's Mutex on etcd against the engine's limit and the peers, in one
run on one three-member etcd cluster (Debian's etcd-server, default timings, fsync on):

  raw gRPC       the same two Txns per cycle deadbolt sends, with no library logic (the limit)
  deadbolt       Client::connect("etcd://...") (and its asynchronous API for throughput)
  python-etcd3   Debian python3-etcd3's Lock (a lease per acquire, a watch to wait)
  etcdctl lock   etcd's own tool, one process per lock (what shell users call)

E1 uncontended latency (one thread), E2 throughput (16 threads or loops on distinct names),
E3 contention (8 processes on one name, a read-modify-write inside: handoffs, lost updates),
E4 waiting cost (10 processes wait behind etcdctl's holder for 10 s: what the members serve).
Medians of --reps repetitions with min..max, and ratios to raw gRPC. Writes results.json and
table.md under --out.

    bench/etcd.py [--out bench/results/etcd] [--reps 3] [--smoke]
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaper  # noqa: E402
import stats  # noqa: E402
from run import DRIVER, HERE, Server, free_port, now_ns  # noqa: E402

PY = ["/usr/bin/python3", os.path.join(HERE, "peers", "etcd3_lock.py")]
RAW, OURS, ASYNC, PY_PEER, CTL = "raw gRPC", "deadbolt", "deadbolt async", "python-etcd3", "etcdctl lock"
RAWS = "raw gRPC, deadbolt's requests"
# The CLI beside the bench driver (build/bench/deadbolt-bench -> build/deadbolt).
CLI = os.path.join(os.path.dirname(os.path.dirname(DRIVER)), "deadbolt")


class Etcd:
    """Three etcd members on free ports, as one new cluster, in a temporary directory."""

    def __init__(self, members=3):
        self.dir = tempfile.mkdtemp(prefix="deadbolt-bench-etcd-")
        self.ports = [(free_port(), free_port()) for _ in range(members)]
        cluster = ",".join(f"m{i}=http://127.0.0.1:{p}" for i, (_, p) in enumerate(self.ports))
        self.procs = []
        for i, (client, peer) in enumerate(self.ports):
            self.procs.append(subprocess.Popen(
                ["etcd", "--name", f"m{i}", "--data-dir", f"{self.dir}/m{i}",
                 "--listen-client-urls", f"http://127.0.0.1:{client}",
                 "--advertise-client-urls", f"http://127.0.0.1:{client}",
                 "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-cluster", cluster, "--initial-cluster-state", "new",
                 "--initial-cluster-token", "bench"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        self.endpoints = ",".join(f"127.0.0.1:{c}" for c, _ in self.ports)
        for _ in range(300):
            if self.ctl("endpoint", "health").returncode == 0:
                return
            time.sleep(0.1)
        raise SystemExit("bench: etcd did not become healthy")

    def ctl(self, *args):
        return subprocess.run(["etcdctl", "--endpoints", self.endpoints, *args], capture_output=True, text=True)

    def metric(self, name, label):
        """The sum over every member of a metric's samples whose labels contain label."""
        total = 0.0
        for client, _ in self.ports:
            with urllib.request.urlopen(f"http://127.0.0.1:{client}/metrics", timeout=5) as r:
                for line in r.read().decode().splitlines():
                    if line.startswith(name + "{") and label in line:
                        total += float(line.rsplit(" ", 1)[1])
        return total

    def await_contenders(self, key, n, who):
        """Waits up to 10 s until n keys are queued under key/."""
        for _ in range(200):
            if len(self.ctl("get", "--prefix", "--keys-only", key + "/").stdout.split()) >= n:
                return
            time.sleep(0.05)
        raise SystemExit(f"bench: {who} did not queue under {key}/ within 10 s")

    def version(self):
        return self.ctl("version").stdout.split()[2] if self.ctl("version").returncode == 0 else "?"

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(timeout=20)
        shutil.rmtree(self.dir, ignore_errors=True)


def driver(contender, scenario, opts):
    argv = {RAW: [DRIVER, scenario, "--contender", "raw-etcd"],
            RAWS: [DRIVER, scenario, "--contender", "raw-etcd", "--statements", "1"],
            OURS: [DRIVER, scenario, "--contender", "deadbolt"],
            ASYNC: [DRIVER, scenario, "--contender", "deadbolt-async"],
            PY_PEER: [*PY, scenario]}[contender]
    return [*argv, *[str(o) for o in opts]]


def run(contender, scenario, opts, timeout=600):
    r = subprocess.run(driver(contender, scenario, opts), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"bench: {contender} {scenario} failed ({r.returncode}): {r.stderr[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def etcdctl_cycles(etcd, key, seconds):
    """etcdctl lock as a shell user runs it: one process per lock and unlock."""
    lat, end = [], time.monotonic() + seconds
    start = time.monotonic()
    while time.monotonic() < end:
        t0 = time.monotonic_ns()
        if etcd.ctl("lock", key, "--", "true").returncode != 0:
            raise SystemExit("bench: etcdctl lock failed")
        lat.append((time.monotonic_ns() - t0) / 1000)
    el = time.monotonic() - start
    return {"cycles": len(lat), "cycles_per_s": len(lat) / el, "p50_us": stats.pct(lat, 0.5),
            "p99_us": stats.pct(lat, 0.99)}


def cpu_s(pid):
    """User + system CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def waiting_cost(etcd, key, contender, waiters, seconds):
    """What `waiters` processes cost the members while they wait behind etcdctl's holder:
    unary calls, Watch and LeaseKeepAlive stream messages, and the waiters' CPU."""
    # etcdctl lock without a command holds until interrupted.
    holder = subprocess.Popen(["etcdctl", "--endpoints", etcd.endpoints, "lock", key],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    argv = {OURS: [CLI, "run", "--url", f"etcd://{etcd.endpoints}", "--wait", "120s", key, "--", "true"],
            CTL: ["etcdctl", "--endpoints", etcd.endpoints, "lock", key, "--", "true"]}[contender]
    procs = []
    try:
        etcd.await_contenders(key, 1, "etcdctl's holder")  # it holds before anyone waits
        procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(waiters)]
        etcd.await_contenders(key, waiters + 1, f"{contender}'s waiters")
        time.sleep(1)  # their watches are made
        unary = lambda: etcd.metric("grpc_server_started_total", 'grpc_type="unary"')
        msgs = lambda m: etcd.metric("grpc_server_msg_received_total", f'grpc_method="{m}"')
        before = (unary(), msgs("Watch"), msgs("LeaseKeepAlive"), sum(cpu_s(p.pid) for p in procs))
        time.sleep(seconds)
        after = (unary(), msgs("Watch"), msgs("LeaseKeepAlive"), sum(cpu_s(p.pid) for p in procs))
        # The metrics reads themselves are HTTP, not gRPC: they do not count.
        return {"waiters": waiters, "seconds": seconds, "unary_calls": after[0] - before[0],
                "watch_msgs": after[1] - before[1], "keepalive_msgs": after[2] - before[2],
                "client_cpu_s": after[3] - before[3]}
    finally:
        holder.send_signal(signal.SIGINT)
        holder.wait(timeout=20)
        reaper.kill_all(procs)


def contend_row(commands, srv, key, seconds):
    """Runs the contend scenario's processes (commands: one argv each) and merges their
    events: acquisitions, handoffs, waits, lost updates against the counter on srv. A peer
    that cannot wait at all says so: {"error": ...}."""
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for argv in commands]
    outs = [json.loads(p.communicate(timeout=seconds + 120)[0].strip().splitlines()[-1]) for p in procs]
    if any("error" in o for o in outs):
        return {"error": next(o["error"] for o in outs if "error" in o)}
    row = stats.contended([o["events"] for o in outs], int(srv.cli("GET", f"{key}:counter") or 0))
    row["failures"] = sum(o["failures"] for o in outs)
    row.pop("wait_ms_sample", None)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "etcd"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    reps = 1 if a.smoke else a.reps
    cycle_s, contend_s, threads = (0.5, 2, 4) if a.smoke else (5, 10, 16)
    if not os.access(DRIVER, os.X_OK):
        raise SystemExit("bench: build first (scripts/setup.sh)")
    results = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "smoke": a.smoke, "reps": reps, "machine": {"cpus": os.cpu_count()}, "versions": {},
               "scenarios": {"E1_latency": {}, "E2_throughput": {}, "E3_contended": {}, "E4_waiting": {}}}
    sc = results["scenarios"]
    etcd, srv = Etcd(), Server()
    try:
        results["versions"]["etcd"] = etcd.version()
        key = [0]

        def fresh():
            key[0] += 1
            return f"e{key[0]}"

        for _ in range(reps):
            for c in (RAW, RAWS, OURS, PY_PEER):
                r = run(c, "cycle", ["--etcd", etcd.endpoints, "--threads", 1, "--seconds", cycle_s, "--key", fresh()])
                if "version" in r:
                    results["versions"][c] = r["version"]
                sc["E1_latency"].setdefault(c, []).append(r)
            sc["E1_latency"].setdefault(CTL, []).append(etcdctl_cycles(etcd, fresh(), cycle_s))
            for c in (RAW, RAWS, OURS, ASYNC, PY_PEER):
                sc["E2_throughput"].setdefault(c, []).append(
                    run(c, "cycle", ["--etcd", etcd.endpoints, "--threads", threads, "--seconds", cycle_s, "--key", fresh()]))
            for c in (OURS, PY_PEER):
                k = fresh()
                start = now_ns() + 3_000_000_000
                until = start + int(contend_s * 1e9)
                sc["E3_contended"].setdefault(c, []).append(contend_row(
                    [driver(c, "contend", ["--etcd", etcd.endpoints, "--port", srv.port, "--id", i,
                                           "--key", k, "--start-ns", start, "--until-ns", until]) for i in range(8)],
                    srv, k, contend_s))
            for c in (OURS, CTL):
                sc["E4_waiting"].setdefault(c, []).append(
                    waiting_cost(etcd, fresh(), c, 10, 2 if a.smoke else 10))
    finally:
        etcd.stop()
        srv.stop()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table(results))
    print(table(results))
    # deadbolt must be measured everywhere and lose nothing; a peer may fail, and says why.
    bad = [f"{s}: nothing measured for {c}" for s, by in sc.items() for c, rows in by.items()
           if s != "E4_waiting" and c != PY_PEER and any(r.get("cycles", r.get("acquisitions", 0)) == 0 for r in rows)]
    # Waiting is the watch alone: no call, no new watch (keepalives are the session's).
    bad += [f"E4: deadbolt's waiters sent {r['unary_calls']:.0f} calls and {r['watch_msgs']:.0f} watch messages"
            for r in sc["E4_waiting"].get(OURS, []) if r["unary_calls"] or r["watch_msgs"]]
    bad += [f"E3: {c} lost updates" for c, rows in sc["E3_contended"].items()
            if any(r.get("lost_updates") for r in rows)]
    if bad:
        raise SystemExit("bench: " + "; ".join(bad))


def table(results):
    sc = results["scenarios"]

    out = [f"etcd {results['versions'].get('etcd', '?')}, 3 members on one machine "
           f"({results['machine']['cpus']} CPUs), {results['reps']} reps, medians (min..max)\n"]
    out += stats.cycles_table("E1 uncontended, one thread** (lock + unlock on its own name)",
                              sc["E1_latency"], RAW)
    out += stats.cycles_table("E2 uncontended throughput** (threads or loops in flight, each on its own name)",
                              sc["E2_throughput"], RAW)
    out += stats.contended_table("E3 contended** (8 processes, one name, a read-modify-write inside)",
                                 sc["E3_contended"])
    out += ["\n**E4 waiting cost** (10 processes wait behind `etcdctl lock`'s holder; what every "
            "member received in the window, per second; keepalives follow the TTL: `deadbolt run`'s 30 s, "
            "etcdctl's 60 s session. python-etcd3 cannot wait on Debian 12: see E3)\n",
            "| contender | unary calls/s | Watch messages/s | LeaseKeepAlive messages/s | waiters' CPU ms/s |",
            "|---|---:|---:|---:|---:|"]
    for c, rows in sc.get("E4_waiting", {}).items():
        out.append(f"| {c} | {stats.median_rate(rows, 'unary_calls'):.1f} | {stats.median_rate(rows, 'watch_msgs'):.1f} | "
                   f"{stats.median_rate(rows, 'keepalive_msgs'):.1f} | {stats.median_rate(rows, 'client_cpu_s') * 1000:.1f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
