#!/usr/bin/python3
"""bench/zk.py: deadbolt's Mutex on ZooKeeper against the engine's limit and a peer, in one
run on one three-server ensemble (Debian's zookeeper, default tick, fsync on):

  raw C client   one ephemeral sequential create and its delete per cycle (the limit)
  raw, deadbolt's requests
                 the same client sending what deadbolt's Mutex sends per cycle (the create
                 with its listing pipelined, a get with a watch on the granted node that hears a
                 loss, the delete): what those requests cost the servers, apart from the library
  deadbolt       Client::connect("zk://...")
  Kazoo          Debian python3-kazoo's Lock (what Python services use)

Z1 uncontended latency (one thread), Z2 throughput (16 threads on distinct names), Z3
contention (8 processes on one name, a read-modify-write inside: handoffs, lost updates), Z4
waiting cost (10 processes wait behind a held lock for 10 s: requests the servers received,
pings included). Medians of --reps repetitions with min..max, ratios to the raw client.
Writes results.json and table.md under --out.

    bench/zk.py [--out bench/results/zk] [--reps 3] [--smoke]
    bench/zk.py --requests [--reps 3]   what each of deadbolt's requests costs (Z2, 16 threads):
                                        its requests sent raw, then without the listing or the
                                        watch; writes requests.md under --out
"""
import argparse
import datetime
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaper  # noqa: E402
import stats  # noqa: E402
from etcd import contend_row, cpu_s  # noqa: E402
from run import DRIVER, HERE, Server, free_port, now_ns  # noqa: E402

PY = ["/usr/bin/python3", os.path.join(HERE, "peers", "kazoo_lock.py")]
RAW, RAWS, OURS, PEER = "raw C client", "raw, deadbolt's requests", "deadbolt", "Kazoo"
CLI = os.path.join(os.path.dirname(os.path.dirname(DRIVER)), "deadbolt")
JAVA = ["java", "-Xmx256m", "-XX:+UseSerialGC", "-cp", "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar",
        "org.apache.zookeeper.server.quorum.QuorumPeerMain"]


class Ensemble:
    """Three ZooKeeper servers on free ports, as one new ensemble, in a temporary directory."""

    def __init__(self, servers=3):
        self.dir = tempfile.mkdtemp(prefix="deadbolt-bench-zk-")
        self.ports = [(free_port(), free_port(), free_port()) for _ in range(servers)]
        self.procs = []
        for i, (client, _, _) in enumerate(self.ports):
            data = f"{self.dir}/s{i}"
            os.makedirs(data)
            with open(f"{data}/myid", "w") as f:
                f.write(f"{i + 1}\n")
            with open(f"{data}.cfg", "w") as f:
                f.write(f"tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir={data}\nclientPort={client}\n"
                        "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=*\n")
                f.writelines(f"server.{j + 1}=127.0.0.1:{p}:{e}\n" for j, (_, p, e) in enumerate(self.ports))
            self.procs.append(subprocess.Popen([*JAVA, f"{data}.cfg"], stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL))
        self.hosts = ",".join(f"127.0.0.1:{c}" for c, _, _ in self.ports)
        for _ in range(600):
            if all("Mode: " in self.ask(i, "srvr") for i in range(servers)):
                return
            time.sleep(0.1)
        self.stop()
        raise SystemExit("bench: ZooKeeper did not serve within 60 s")

    def ask(self, i, cmd):
        try:
            with socket.create_connection(("127.0.0.1", self.ports[i][0]), timeout=2) as s:
                s.sendall(cmd.encode())
                out = b""
                while chunk := s.recv(65536):
                    out += chunk
                return out.decode(errors="replace")
        except OSError:
            return ""

    def received(self):
        """Packets every server received so far (mntr's zk_packets_received)."""
        total = 0
        for i in range(len(self.ports)):
            for line in self.ask(i, "mntr").splitlines():
                if line.startswith("zk_packets_received"):
                    total += int(line.split()[1])
        return total

    def contenders(self, key):
        r = subprocess.run(["/usr/bin/python3", "-c", "import sys\nfrom kazoo.client import KazooClient\n"
                            "zk = KazooClient(hosts=sys.argv[1]); zk.start()\n"
                            "print(len(zk.get_children(sys.argv[2])) if zk.exists(sys.argv[2]) else 0); zk.stop()",
                            self.hosts, "/" + key], capture_output=True, text=True)
        return int(r.stdout.strip() or 0)

    def version(self):
        return self.ask(0, "srvr").splitlines()[0].split(":", 1)[1].split(",")[0].strip()

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()
        subprocess.run(["rm", "-rf", self.dir])


def driver(contender, scenario, opts):
    argv = {RAW: [DRIVER, scenario, "--contender", "raw-zk"],
            RAWS: [DRIVER, scenario, "--contender", "raw-zk", "--statements", "1"],
            OURS: [DRIVER, scenario, "--contender", "deadbolt"],
            PEER: [*PY, scenario]}[contender]
    return [*argv, *[str(o) for o in opts]]


# What a run that met a stalled session says. On this machine a server of a new ensemble now
# and then answers nothing on one session for 20 s (the C client's receive timeout, 2/3 of the
# session's 30 s), to the raw client and to deadbolt alike, with nothing in the servers' logs
# and no pause of the machine (cause not found). Such a run measured nothing.
STALLED = ("operation timeout", "did not answer in time")


def run(contender, scenario, opts, timeout=600, retries=None):
    """The run's JSON line. A run that met a stalled session is run again on a fresh name (its
    dead session's nodes stay until the session expires), at most twice; each is recorded in
    retries."""
    for attempt in range(3):
        argv = driver(contender, scenario, opts)
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if r.returncode == 0:
            return json.loads(r.stdout.strip().splitlines()[-1])
        stalled = any(s in r.stderr for s in STALLED)
        if not stalled or retries is None or attempt == 2:
            raise SystemExit(f"bench: {contender} {scenario} failed ({r.returncode}): {r.stderr[-800:]}")
        retries.append({"contender": contender, "scenario": scenario, "stderr": r.stderr[-400:]})
        opts = list(opts)
        opts[opts.index("--key") + 1] += f"r{attempt + 1}"


def waiting_cost(zk, key, contender, waiters, seconds):
    """What `waiters` processes cost the servers while they wait behind a held lock: packets
    received (their pings included) and the waiters' CPU."""
    hold = ["/usr/bin/python3", "-c", "import sys, time\nfrom kazoo.client import KazooClient\n"
            "zk = KazooClient(hosts=sys.argv[1]); zk.start()\nl = zk.Lock(sys.argv[2]); l.acquire()\n"
            "print('held', flush=True); time.sleep(float(sys.argv[3])); l.release(); zk.stop()",
            zk.hosts, "/" + key, str(seconds + 30)]
    wait = {OURS: [CLI, "run", "--url", f"zk://{zk.hosts}", "--wait", "120s", key, "--", "true"],
            PEER: ["/usr/bin/python3", "-c", "import sys\nfrom kazoo.client import KazooClient\n"
                   "zk = KazooClient(hosts=sys.argv[1]); zk.start()\nl = zk.Lock(sys.argv[2], "
                   "extra_lock_patterns=['-lock-']); l.acquire(); l.release(); zk.stop()",
                   zk.hosts, "/" + key]}[contender]
    holder = subprocess.Popen(hold, stdout=subprocess.PIPE, text=True)
    procs = []
    try:
        holder.stdout.readline()  # it holds before anyone waits
        procs = [subprocess.Popen(wait, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(waiters)]
        for _ in range(600):
            if zk.contenders(key) >= waiters + 1:
                break
            time.sleep(0.1)
        else:
            raise SystemExit(f"bench: {contender}'s waiters did not queue")
        time.sleep(1)  # their watches are set
        before = (zk.received(), sum(cpu_s(p.pid) for p in procs))
        time.sleep(seconds)
        after = (zk.received(), sum(cpu_s(p.pid) for p in procs))
        # Our mntr reads are four-letter words, not packets: they do not count.
        return {"waiters": waiters, "seconds": seconds, "packets": after[0] - before[0],
                "client_cpu_s": after[1] - before[1]}
    finally:
        reaper.kill_all([holder, *procs])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "zk"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--requests", action="store_true")
    a = ap.parse_args()
    if a.requests:
        return requests_cost(a)
    reps = 1 if a.smoke else a.reps
    cycle_s, contend_s, threads, wait_s = (0.5, 2, 4, 2) if a.smoke else (5, 10, 16, 10)
    if not os.access(DRIVER, os.X_OK):
        raise SystemExit("bench: build first (scripts/setup.sh)")
    results = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "smoke": a.smoke, "reps": reps, "machine": {"cpus": os.cpu_count()}, "versions": {},
               "scenarios": {"Z1_latency": {}, "Z2_throughput": {}, "Z3_contended": {}, "Z4_waiting": {}},
               "retries": []}
    sc = results["scenarios"]
    zk, srv = Ensemble(), Server()
    try:
        results["versions"]["zookeeper"] = zk.version()
        key = [0]

        def fresh():
            key[0] += 1
            return f"z{key[0]}"

        for _ in range(reps):
            for scenario, n in (("Z1_latency", 1), ("Z2_throughput", threads)):
                for c in (RAW, RAWS, OURS, PEER):
                    r = run(c, "cycle", ["--zk", zk.hosts, "--threads", n, "--seconds", cycle_s, "--key", fresh()],
                            retries=results["retries"])
                    if "version" in r:
                        results["versions"][c] = r["version"]
                    sc[scenario].setdefault(c, []).append(r)
            for c in (OURS, PEER):
                k = fresh()
                start = now_ns() + 3_000_000_000
                until = start + int(contend_s * 1e9)
                sc["Z3_contended"].setdefault(c, []).append(contend_row(
                    [driver(c, "contend", ["--zk", zk.hosts, "--port", srv.port, "--id", i,
                                           "--key", k, "--start-ns", start, "--until-ns", until]) for i in range(8)],
                    srv, k, contend_s))
            for c in (OURS, PEER):
                sc["Z4_waiting"].setdefault(c, []).append(waiting_cost(zk, fresh(), c, 10, wait_s))
    finally:
        zk.stop()
        srv.stop()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table(results))
    print(table(results))
    bad = [f"{s}: nothing measured for {c}" for s, by in sc.items() for c, rows in by.items()
           if s != "Z4_waiting" and any(r.get("cycles", r.get("acquisitions", 0)) == 0 for r in rows)]
    bad += [f"Z3: {c} lost updates" for c, rows in sc["Z3_contended"].items()
            if any(r.get("lost_updates") for r in rows)]
    if bad:
        raise SystemExit("bench: " + "; ".join(bad))


def requests_cost(a):
    """Z2 for the raw client with deadbolt's requests, whole and with one left out."""
    variants = ((RAW, RAW, []), (RAWS, RAWS, []), (RAWS + " but the watch", RAWS, ["--leave-out", "watch"]),
                (RAWS + " but the listing", RAWS, ["--leave-out", "list"]))
    by = {}
    zk = Ensemble()
    try:
        for rep in range(a.reps):
            for i, (name, contender, extra) in enumerate(variants):
                by.setdefault(name, []).append(run(contender, "cycle", ["--zk", zk.hosts, "--threads", 16,
                                                                        "--seconds", 5, "--key", f"q{rep}-{i}",
                                                                        *extra]))
    finally:
        zk.stop()
    out = [f"What each of deadbolt's requests costs the ensemble (`python3 bench/zk.py --requests --reps "
           f"{a.reps}`, {datetime.date.today()}): three servers on one machine, 16 threads, medians (min..max).\n"]
    out += ["| requests per cycle | cycles/s | vs raw | p50 µs | client CPU µs/cycle |", "|---|---:|---:|---:|---:|"]
    for name, _, _ in variants:
        rows = by[name]
        cpu = statistics.median(1e6 * r["cpu_s"] / r["cycles"] for r in rows)
        out.append(f"| {name} | {stats.cell(rows, 'cycles_per_s')} | {stats.ratio(rows, by[RAW], 'cycles_per_s')} | "
                   f"{stats.cell(rows, 'p50_us')} | {cpu:.0f} |")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "requests.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


def table(results):
    sc = results["scenarios"]

    out = [f"ZooKeeper {results['versions'].get('zookeeper', '?')}, 3 servers on one machine "
           f"({results['machine']['cpus']} CPUs), {results['reps']} reps, medians (min..max)\n"]
    retried = results.get("retries", [])
    if retried:
        out += [f"{len(retried)} run(s) met a session the ensemble left unanswered for 20 s and were run "
                "again on a fresh name: " + ", ".join(f"{r['scenario']} {r['contender']}" for r in retried)
                + " (results.json has what each said).\n"]
    out += stats.uncontended_tables("Z", sc, RAW, RAWS, OURS, "requests")
    out += stats.contended_table("Z3 contended** (8 processes, one name, a read-modify-write inside)",
                                 sc["Z3_contended"])
    out += ["\n**Z4 waiting cost** (10 processes wait behind a Kazoo holder; packets every server "
            "received in the window, per second, session pings included: deadbolt's 30 s sessions "
            "ping every 10 s, Kazoo's (timeout 10 s) every ~3 s)\n",
            "| contender | packets/s | per waiter per s | waiters' CPU ms/s |", "|---|---:|---:|---:|"]
    for c, rows in sc["Z4_waiting"].items():
        out.append(f"| {c} | {stats.median_rate(rows, 'packets'):.1f} | {stats.median_rate(rows, 'packets') / 10:.2f} | {stats.median_rate(rows, 'client_cpu_s') * 1000:.1f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
