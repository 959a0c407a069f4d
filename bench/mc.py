#!/usr/bin/python3
"""bench/mc.py: deadbolt's Mutex on memcached against the meta protocol's own calls and the
add/delete loop users write, in one run on a server it starts (Debian's memcached, -M):

  raw            the meta add of a token with a TTL and a delete, one round trip each
                 (no fence, no owner check)
  raw, deadbolt's commands
                 the same client sending the commands deadbolt sends for a Mutex (the add, a
                 read of its CAS and the fence drawn, pipelined; a delete by that CAS): what
                 they cost the server and the client's kernel, apart from the library
  deadbolt       Client::connect("memcached://...")
  add/delete     python3-pymemcache: add(name, token, expire), sleep 10 ms, again; delete
                 (tooz's memcached driver does this, and can delete another's lock)

M1 uncontended latency (one thread), M2 throughput (16 threads on distinct names), M3
contention (8 processes on one name, a read-modify-write inside: handoffs, lost updates), M4
waiting cost (10 processes wait behind a held lock for 10 s: the commands the server ran,
from its `stats`; memcached cannot notify, so deadbolt's waiters look again with capped
jittered backoff). Medians of --reps with min..max. Writes results.json and table.md under
--out.

    bench/mc.py [--out bench/results/mc] [--reps 3] [--smoke]
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaper  # noqa: E402
import stats  # noqa: E402
from etcd import contend_row, cpu_s  # noqa: E402
from run import DRIVER, HERE, Server, free_port, now_ns  # noqa: E402

PEER = ["/usr/bin/python3", os.path.join(HERE, "peers", "mc_poll.py")]
RAW, RAWS, OURS, POLL = "raw", "raw, deadbolt's commands", "deadbolt", "add/delete"
CLI = os.path.join(os.path.dirname(os.path.dirname(DRIVER)), "deadbolt")
# What the server counts as commands: gets, sets, touches, deletes and arithmetic.
COUNTED = ("cmd_get", "cmd_set", "cmd_touch", "delete_hits", "delete_misses", "incr_hits",
           "incr_misses", "decr_hits", "decr_misses")


class Memcached:
    def __init__(self):
        self.port = free_port()
        user = ["-u", "nobody"] if os.getuid() == 0 else []
        self.proc = subprocess.Popen(["memcached", "-p", str(self.port), "-l", "127.0.0.1", "-U", "0", "-M",
                                      "-c", "4096", *user], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.stats()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise SystemExit("bench: memcached did not start")
        self.url = f"memcached://127.0.0.1:{self.port}"

    def stats(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"stats\r\n")
            text = b""
            while not text.endswith(b"END\r\n"):
                text += s.recv(65536)
        return {p[1]: p[2] for p in (line.split() for line in text.decode().splitlines()) if len(p) == 3}

    def commands(self):
        st = self.stats()
        return sum(int(st.get(k, 0)) for k in COUNTED)

    def version(self):
        return self.stats()["version"]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def driver(engine, contender, scenario, opts):
    argv = {RAW: [DRIVER, scenario, "--contender", "raw-mc"],
            RAWS: [DRIVER, scenario, "--contender", "raw-mc", "--statements", "1"],
            OURS: [DRIVER, scenario, "--contender", "deadbolt"], POLL: [*PEER, scenario]}[contender]
    return [*argv, "--url", engine.url, *[str(o) for o in opts]]


def run(engine, contender, scenario, opts, timeout=600):
    r = subprocess.run(driver(engine, contender, scenario, opts), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"bench: {contender} {scenario} failed ({r.returncode}): {r.stderr[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def waiting_cost(engine, key, contender, waiters, seconds):
    """What `waiters` processes cost the server while they wait behind a held lock: commands the
    server ran in the window, and the waiters' CPU."""
    holder = subprocess.Popen([CLI, "run", "--url", engine.url, key, "--", "sleep", str(seconds + 30)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait = {OURS: [CLI, "run", "--url", engine.url, "--wait", "120s", key, "--", "true"],
            POLL: ["/usr/bin/python3", "-c", "import sys\n"
                   f"sys.path.insert(0, {os.path.join(HERE, 'peers')!r})\n"
                   "from mc_poll import Lock\n"
                   "l = Lock(sys.argv[1], sys.argv[2], 0.01); l.acquire(); l.release()",
                   engine.url, key]}[contender]
    procs = []
    try:
        time.sleep(1)  # it holds before anyone waits
        procs = [subprocess.Popen(wait, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(waiters)]
        time.sleep(3)  # past the first looks' short backoff: the steady cost
        before = (engine.commands(), sum(cpu_s(p.pid) for p in procs))
        time.sleep(seconds)
        after = (engine.commands(), sum(cpu_s(p.pid) for p in procs))
        # The renewals of the holder (one per 10 s at the CLI's 30 s TTL) are in the count.
        return {"waiters": waiters, "seconds": seconds, "commands": after[0] - before[0],
                "client_cpu_s": after[1] - before[1]}
    finally:
        reaper.kill_all([holder, *procs])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "mc"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    reps = 1 if a.smoke else a.reps
    cycle_s, contend_s, threads, wait_s = (0.5, 2, 4, 2) if a.smoke else (5, 10, 16, 10)
    if not os.access(DRIVER, os.X_OK):
        raise SystemExit("bench: build first (scripts/setup.sh)")
    results = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "smoke": a.smoke, "reps": reps, "machine": {"cpus": os.cpu_count()}, "versions": {},
               "scenarios": {"M1_latency": {}, "M2_throughput": {}, "M3_contended": {}, "M4_waiting": {}}}
    sc = results["scenarios"]
    srv, engine = Server(), Memcached()
    key = [0]

    def fresh():
        key[0] += 1
        return f"m{key[0]}"
    try:
        results["versions"]["memcached"] = engine.version()
        for _ in range(reps):
            for scenario, n in (("M1_latency", 1), ("M2_throughput", threads)):
                for c in (RAW, RAWS, OURS, POLL):
                    sc[scenario].setdefault(c, []).append(
                        run(engine, c, "cycle", ["--threads", n, "--seconds", cycle_s, "--key", fresh()]))
            for c in (OURS, POLL):
                k = fresh()
                start = now_ns() + 3_000_000_000
                until = start + int(contend_s * 1e9)
                sc["M3_contended"].setdefault(c, []).append(contend_row(
                    [driver(engine, c, "contend", ["--port", srv.port, "--id", i, "--key", k,
                                                   "--start-ns", start, "--until-ns", until])
                     for i in range(8)], srv, k, contend_s))
            for c in (OURS, POLL):
                sc["M4_waiting"].setdefault(c, []).append(waiting_cost(engine, fresh(), c, 10, wait_s))
    finally:
        engine.stop()
        srv.stop()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table(results))
    print(table(results))
    bad = [f"{s}: nothing measured for {c}" for s, by in sc.items() for c, rows in by.items()
           if s != "M4_waiting" and any(r.get("cycles", r.get("acquisitions", 0)) == 0 for r in rows)]
    bad += [f"M3: {c} lost updates" for c, rows in sc["M3_contended"].items()
            if any(r.get("lost_updates") for r in rows)]
    if bad:
        raise SystemExit("bench: " + "; ".join(bad))


def table(results):
    sc = results["scenarios"]
    out = [f"memcached {results['versions'].get('memcached', '?')} (-M), alone on one machine "
           f"({results['machine']['cpus']} CPUs), {results['reps']} reps, medians (min..max)\n"]
    out += stats.cycles_table("M1 uncontended, one thread** (lock + unlock on its own name)",
                              sc["M1_latency"], RAW)
    out += stats.cycles_table("M2 uncontended throughput** (threads in flight, each on its own name)",
                              sc["M2_throughput"], RAW)
    out += stats.contended_table("M3 contended** (8 processes, one name, a read-modify-write inside)",
                                 sc["M3_contended"])
    out += ["\n**M4 waiting cost** (10 processes wait behind a held lock; commands the server ran in the "
            "window; Redis's scenario 4: deadbolt 26, redis-py 100 per waiter per 10 s)\n",
            "| contender | commands/s | per waiter per 10 s | waiters' CPU ms/s |", "|---|---:|---:|---:|"]
    for c, rows in sc["M4_waiting"].items():
        out.append(f"| {c} | {stats.median_rate(rows, 'commands'):.1f} | {stats.median_rate(rows, 'commands') * 10 / rows[0]['waiters']:.1f} | "
                   f"{stats.median_rate(rows, 'client_cpu_s') * 1000:.1f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
