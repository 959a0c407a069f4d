#!/usr/bin/python3
"""bench/db.py: deadbolt's Mutex on PostgreSQL and MariaDB against each engine's own lock
calls and the polling loop users write, in one run on servers it starts (Debian's
postgresql and mariadb-server, durability on as shipped):

  raw            the engine's try-lock and unlock over its C client, one round trip each
                 (pg_try_advisory_lock/pg_advisory_unlock; GET_LOCK(n, 0)/RELEASE_LOCK)
  raw, deadbolt's statements
                 the same client sending the statements deadbolt sends for a fenced Mutex
                 (the try, its fence and its holder's label or row in one round trip; the
                 release): what those statements cost the server, apart from the library
  deadbolt       Client::connect("postgresql://..." / "mysql://...")
  polling loop   python3-psycopg2 / python3-pymysql: try the same lock, sleep 10 ms, again

D1 uncontended latency (one thread), D2 throughput (16 threads on distinct names), D3
contention (8 processes on one name, a read-modify-write inside: handoffs, lost updates),
D4 waiting cost (10 processes wait behind a held lock for 10 s: statements the server ran,
from pg_stat_statements / the Questions counter). Medians of --reps with min..max.
Writes results.json and table.md under --out.

    bench/db.py [--out bench/results/db] [--reps 3] [--smoke]
"""
import argparse
import datetime
import glob
import json
import os
import pwd
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reaper  # noqa: E402
import stats  # noqa: E402
from etcd import contend_row, cpu_s  # noqa: E402
from run import DRIVER, HERE, Server, free_port, now_ns  # noqa: E402

PEER = ["/usr/bin/python3", os.path.join(HERE, "peers", "sql_poll.py")]
RAW, RAWS, OURS, POLL = "raw", "raw, deadbolt's statements", "deadbolt", "polling loop"
CLI = os.path.join(os.path.dirname(os.path.dirname(DRIVER)), "deadbolt")


def as_user(user):
    """preexec_fn: run as user when we are root (initdb, postgres and mariadbd refuse root)."""
    if os.getuid() != 0:
        return None
    pw = pwd.getpwnam(user)

    def drop():
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    return drop


class Postgres:
    def __init__(self, max_connections=200):
        self.dir = tempfile.mkdtemp(prefix="deadbolt-bench-pg-")
        os.chmod(self.dir, 0o777)
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        self.port = free_port()
        subprocess.run([f"{self.bin}/initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth=trust",
                        "-E", "UTF8", "--locale=C"], check=True, stdout=subprocess.DEVNULL,
                       preexec_fn=as_user("postgres"))
        self.proc = subprocess.Popen(
            [f"{self.bin}/postgres", "-D", f"{self.dir}/data", "-p", str(self.port), "-k", self.dir,
             "-c", "listen_addresses=127.0.0.1", "-c", f"max_connections={max_connections}",
             "-c", "shared_preload_libraries=pg_stat_statements"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=as_user("postgres"),
            start_new_session=True)
        for _ in range(300):
            if self.sql("SELECT 1") == "1":
                break
            time.sleep(0.1)
        else:
            raise SystemExit("bench: postgres did not start")
        self.sql("CREATE EXTENSION pg_stat_statements")
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def sql(self, q):
        r = subprocess.run([f"{self.bin}/psql", "-XAtq", "-h", self.dir, "-p", str(self.port), "-U", "postgres",
                            "-d", "postgres", "-c", q], capture_output=True, text=True)
        return r.stdout.strip()

    def statements(self):
        """Statements the server ran so far, this question excluded (pg_stat_statements)."""
        return int(self.sql("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE query NOT LIKE "
                            "'%pg_stat_statements%'") or 0) + 1  # as if counting itself, like Questions

    def waiting(self):
        return int(self.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'") or 0)

    def version(self):
        return self.sql("SHOW server_version")

    def stop(self):
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        subprocess.run(["rm", "-rf", self.dir])


class MariaDb:
    def __init__(self, max_connections=200):
        self.dir = tempfile.mkdtemp(prefix="deadbolt-bench-mariadb-")
        os.chmod(self.dir, 0o777)
        self.port = free_port()
        user = ["--user=mysql"] if os.getuid() == 0 else []
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.dir}/data",
                        "--auth-root-authentication-method=normal", "--skip-test-db", *user],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={self.dir}/data", f"--socket={self.dir}/sock",
             f"--port={self.port}", "--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin",
             f"--max-connections={max_connections}", f"--log-error={self.dir}/err.log", *user],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if self.sql("SELECT 1") == "1":
                break
            time.sleep(0.1)
        else:
            raise SystemExit("bench: mariadbd did not start")
        self.sql("CREATE USER 'bench'@'%' IDENTIFIED BY 'bench'; CREATE DATABASE bench; "
                 "GRANT ALL ON bench.* TO 'bench'@'%'")
        self.url = f"mysql://bench:bench@127.0.0.1:{self.port}/bench"

    def sql(self, q):
        r = subprocess.run(["mariadb", "--no-defaults", "-S", f"{self.dir}/sock", "-u", "root", "-N", "-B", "-e", q],
                           capture_output=True, text=True)
        return r.stdout.strip()

    def statements(self):
        """Statements clients sent so far (Questions, this question included)."""
        return int(self.sql("SHOW GLOBAL STATUS LIKE 'Questions'").split()[-1])

    def waiting(self):
        return int(self.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE = 'User lock'") or 0)

    def version(self):
        return self.sql("SELECT VERSION()")

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        subprocess.run(["rm", "-rf", self.dir])


def driver(engine, contender, scenario, opts):
    raw = "raw-pg" if isinstance(engine, Postgres) else "raw-my"
    argv = {RAW: [DRIVER, scenario, "--contender", raw],
            RAWS: [DRIVER, scenario, "--contender", raw, "--statements", "1"],
            OURS: [DRIVER, scenario, "--contender", "deadbolt"],
            POLL: [*PEER, scenario]}[contender]
    return [*argv, "--url", engine.url, *[str(o) for o in opts]]


def run(engine, contender, scenario, opts, timeout=600):
    r = subprocess.run(driver(engine, contender, scenario, opts), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"bench: {contender} {scenario} failed ({r.returncode}): {r.stderr[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def waiting_cost(engine, key, contender, waiters, seconds):
    """What `waiters` processes cost the server while they wait behind a held lock: statements
    the server ran in the window, and the waiters' CPU."""
    holder = subprocess.Popen([CLI, "run", "--url", engine.url, key, "--", "sleep", str(seconds + 30)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait = {OURS: [CLI, "run", "--url", engine.url, "--wait", "120s", key, "--", "true"],
            POLL: ["/usr/bin/python3", "-c", "import sys; sys.argv = ['x', 'contend'] + sys.argv[1:]\n"
                   f"sys.path.insert(0, {os.path.join(HERE, 'peers')!r})\n"
                   "from sql_poll import Lock\n"
                   "l = Lock(sys.argv[2], sys.argv[3], 0.01); l.acquire(); l.release()",
                   engine.url, key]}[contender]
    procs = []
    try:
        time.sleep(1)  # it holds before anyone waits
        procs = [subprocess.Popen(wait, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(waiters)]
        time.sleep(2)
        if contender == OURS:
            for _ in range(300):
                if engine.waiting() >= waiters:
                    break
                time.sleep(0.1)
            else:
                raise SystemExit(f"bench: {contender}'s waiters did not queue")
        before = (engine.statements(), sum(cpu_s(p.pid) for p in procs))
        time.sleep(seconds)
        after = (engine.statements(), sum(cpu_s(p.pid) for p in procs))
        # The first count's own question is in the second count.
        return {"waiters": waiters, "seconds": seconds, "statements": after[0] - before[0] - 1,
                "client_cpu_s": after[1] - before[1]}
    finally:
        reaper.kill_all([holder, *procs])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "db"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    reps = 1 if a.smoke else a.reps
    cycle_s, contend_s, threads, wait_s = (0.5, 2, 4, 2) if a.smoke else (5, 10, 16, 10)
    if not os.access(DRIVER, os.X_OK):
        raise SystemExit("bench: build first (scripts/setup.sh)")
    results = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "smoke": a.smoke, "reps": reps, "machine": {"cpus": os.cpu_count()}, "versions": {},
               "engines": {}}
    srv = Server()
    key = [0]

    def fresh():
        key[0] += 1
        return f"d{key[0]}"
    try:
        for name, make in (("postgresql", Postgres), ("mariadb", MariaDb)):
            engine = make()
            try:
                results["versions"][name] = engine.version()
                sc = results["engines"][name] = {"D1_latency": {}, "D2_throughput": {}, "D3_contended": {},
                                                 "D4_waiting": {}}
                for _ in range(reps):
                    for scenario, n in (("D1_latency", 1), ("D2_throughput", threads)):
                        for c in (RAW, RAWS, OURS, POLL):
                            sc[scenario].setdefault(c, []).append(
                                run(engine, c, "cycle", ["--threads", n, "--seconds", cycle_s, "--key", fresh()]))
                    for c in (OURS, POLL):
                        k = fresh()
                        start = now_ns() + 3_000_000_000
                        until = start + int(contend_s * 1e9)
                        sc["D3_contended"].setdefault(c, []).append(contend_row(
                            [driver(engine, c, "contend", ["--port", srv.port, "--id", i, "--key", k,
                                                           "--start-ns", start, "--until-ns", until])
                             for i in range(8)], srv, k, contend_s))
                    for c in (OURS, POLL):
                        sc["D4_waiting"].setdefault(c, []).append(waiting_cost(engine, fresh(), c, 10, wait_s))
            finally:
                engine.stop()
    finally:
        srv.stop()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table(results))
    print(table(results))
    bad = []
    for name, sc in results["engines"].items():
        bad += [f"{name} {s}: nothing measured for {c}" for s, by in sc.items() for c, rows in by.items()
                if s != "D4_waiting" and any(r.get("cycles", r.get("acquisitions", 0)) == 0 for r in rows)]
        bad += [f"{name} D3: {c} lost updates" for c, rows in sc["D3_contended"].items()
                if any(r.get("lost_updates") for r in rows)]
    if bad:
        raise SystemExit("bench: " + "; ".join(bad))


def table(results):
    out = [f"PostgreSQL {results['versions'].get('postgresql', '?')} and MariaDB "
           f"{results['versions'].get('mariadb', '?')}, each alone on one machine "
           f"({results['machine']['cpus']} CPUs), {results['reps']} reps, medians (min..max)\n"]
    for name, sc in results["engines"].items():
        out.append(f"\n## {name}\n")
        out += stats.uncontended_tables("D", sc, RAW, RAWS, OURS, "statements")
        out += stats.contended_table("D3 contended** (8 processes, one name, a read-modify-write inside)",
                                     sc["D3_contended"])
        out += ["\n**D4 waiting cost** (10 processes wait behind a held lock; statements the server ran in "
                "the window, per second)\n",
                "| contender | statements/s | per waiter per s | waiters' CPU ms/s |", "|---|---:|---:|---:|"]
        for c, rows in sc["D4_waiting"].items():
            out.append(f"| {c} | {stats.median_rate(rows, 'statements'):.1f} | {stats.median_rate(rows, 'statements') / 10:.2f} | "
                       f"{stats.median_rate(rows, 'client_cpu_s') * 1000:.1f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
