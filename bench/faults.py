#!/usr/bin/python3
"""bench/faults.py: what a fault costs on every engine, with the CLI a user runs (issue 30):

  L  loss: `deadbolt run --ttl T NAME -- sleep` holds; `deadbolt force-unlock NAME` frees it
     from another process. Time from starting force-unlock to the holder's run exiting 70
     (it includes one CLI start, the 'spawn' row, and the command's SIGTERM). TTL 3 s and 30 s.
  H  herd: N `deadbolt run --wait` waiters behind one holder; after the holder releases, the
     server work to drain them all, per waiter (Redis: scripts from INFO commandstats, and all
     commands; etcd: gRPC calls handled; ZooKeeper: packets received; PostgreSQL: statements,
     pg_stat_statements; MariaDB: Questions).
  C  connect: how long `deadbolt status` takes to fail against a port nobody listens on, and a
     redis:// URL against another engine's port.

Medians of --reps with min..max. Writes results.json and table.md under --out. The CLI under
test is build/deadbolt, or $DEADBOLT_CLI (to measure another build the same way).

    bench/faults.py [--out bench/results/faults] [--reps 3] [--waiters 200] [--only L,H,C]
                    [--engines redis,etcd,zk,pg,mariadb] [--smoke]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402
from db import MariaDb, Postgres  # noqa: E402
from etcd import Etcd  # noqa: E402
from run import DRIVER, HERE, Server, free_port  # noqa: E402
from zk import Ensemble  # noqa: E402

CLI = os.environ.get("DEADBOLT_CLI", os.path.join(os.path.dirname(os.path.dirname(DRIVER)), "deadbolt"))


class Engine:
    """One engine's server, its URL, and the count of work it did so far."""

    def __init__(self, name, clients):
        self.name = name
        if name == "redis":
            self.srv = Server()
            self.url = f"redis://127.0.0.1:{self.srv.port}"
        elif name == "etcd":
            self.srv = Etcd()
            self.url = "etcd://" + self.srv.endpoints
        elif name == "zk":
            self.srv = Ensemble()
            self.url = "zk://" + self.srv.hosts
        elif name == "pg":
            self.srv = Postgres(max_connections=clients)
            self.url = self.srv.url
        else:
            self.srv = MariaDb(max_connections=clients)
            self.url = self.srv.url

    def work(self):
        """(what is counted, how many so far)."""
        if self.name == "redis":
            stats_ = self.srv.cli("INFO", "commandstats")
            scripts = sum(int(line.split("calls=")[1].split(",")[0]) for line in stats_.splitlines()
                          if line.startswith(("cmdstat_evalsha:", "cmdstat_eval:")))
            return {"scripts": scripts, "commands": self.srv.commands()}
        if self.name == "etcd":
            return {"grpc calls": int(self.srv.metric("grpc_server_started_total", "grpc_type=\"unary\""))}
        if self.name == "zk":
            return {"packets": self.srv.received()}
        return {"statements": self.srv.statements()}

    def port(self):
        """The client port of the engine's first server."""
        return self.url.split("://", 1)[1].split("@")[-1].split(",")[0].split("/")[0].split(":")[1]

    def stop(self):
        self.srv.stop()


def cli(url, *args, **kw):
    return subprocess.Popen([CLI, *args], env={**os.environ, "DEADBOLT_URL": url}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, **kw)


def until_held(url, name, limit=30):
    for _ in range(limit * 20):
        if cli(url, "status", "-q", name).wait() == 0:
            return
        time.sleep(0.05)
    raise SystemExit(f"bench: '{name}' was never held on {url}")


def loss_ms(e, name, ttl):
    holder = cli(e.url, "run", "--ttl", ttl, name, "--", "sleep", "300")
    until_held(e.url, name)
    t0 = time.monotonic()
    cli(e.url, "force-unlock", name).wait()
    try:
        rc = holder.wait(timeout=120)
    except subprocess.TimeoutExpired:
        holder.kill()
        raise SystemExit(f"bench: the holder on {e.name} never noticed the force-unlock")
    if rc != 70:
        raise SystemExit(f"bench: the holder on {e.name} exited {rc}, not 70")
    return (time.monotonic() - t0) * 1000


def spawn_ms(e):
    """One CLI start and round trip: what the loss rows include beside the notice itself."""
    t0 = time.monotonic()
    cli(e.url, "status", "-q", "nothing-here").wait()
    return (time.monotonic() - t0) * 1000


def herd(e, name, waiters, tmp, settle_s=120):
    """Server work per waiter to drain `waiters` waiters after the holder releases; the waiters
    are given up to settle_s to stop making work (engines with keep-alives never quite do)."""
    go = os.path.join(tmp, f"{e.name}-{name}-go")
    holder = cli(e.url, "run", name, "--", "sh", "-c", f"while [ ! -f {go} ]; do sleep 0.02; done")
    until_held(e.url, name)
    before = e.work()
    procs = [cli(e.url, "run", "--wait", "10m", name, "--", "true") for _ in range(waiters)]
    # Waiting: every waiter has made its first attempt (at least one unit of work each), and the
    # count has stopped moving.
    first = list(before.values())[0]
    last, still = -1, 0
    for _ in range(settle_s * 10):
        now = list(e.work().values())[0]
        still = still + 1 if now == last and now - first >= waiters else 0
        if still >= 10:
            break
        last = now
        time.sleep(0.1)
    start = e.work()
    t0 = time.monotonic()
    open(go, "w").close()
    holder.wait()
    for p in procs:
        if p.wait(timeout=600) != 0:
            raise SystemExit(f"bench: a waiter on {e.name} exited {p.returncode}")
    drained = time.monotonic() - t0
    end = e.work()
    return {"per_waiter": {k: (end[k] - start[k]) / waiters for k in end},
            "waiting_per_waiter": {k: (start[k] - before[k]) / waiters for k in end},
            "drain_s": drained}


def connect_ms(url):
    t0 = time.monotonic()
    rc = cli(url, "status", "x").wait()
    return (time.monotonic() - t0) * 1000, rc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "faults"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--herd-reps", type=int, default=1, help="herds are slow to drain without a fix")
    ap.add_argument("--waiters", type=int, default=200)
    ap.add_argument("--only", default="L,H,C")
    ap.add_argument("--engines", default="redis,etcd,zk,pg,mariadb")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    reps = 1 if a.smoke else a.reps
    waiters = 5 if a.smoke else a.waiters
    ttls = {"short": "3s"} if a.smoke else {"short": "3s", "long": "30s"}
    only = set(a.only.split(","))
    if not os.access(CLI, os.X_OK):
        raise SystemExit("bench: build first (scripts/setup.sh)")
    results = {"started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "smoke": a.smoke, "reps": reps, "waiters": waiters, "cli": CLI, "engines": {}}
    os.makedirs(a.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="deadbolt-faults-")  # the holders' go files: fresh each run
    ports = {}
    for name in a.engines.split(","):
        # Every waiter holds a session on a database: room for them and the harness.
        e = Engine(name, clients=waiters + 50)
        row = results["engines"][name] = {}
        try:
            ports[name] = e.port()
            if "L" in only:
                row["spawn_ms"] = stats.spread([spawn_ms(e) for _ in range(max(reps, 3))])
                for kind, ttl in ttls.items():
                    # ZooKeeper's shortest session is 2 ticks (4 s here): a shorter TTL is refused.
                    ttl = "4s" if name == "zk" and kind == "short" else ttl
                    row[f"loss_ms_{kind}"] = stats.spread([loss_ms(e, f"loss-{kind}-{i}", ttl)
                                                           for i in range(reps)])
            if "H" in only:
                runs = [herd(e, f"herd-{i}", waiters, tmp, 5 if a.smoke else 120)
                        for i in range(1 if a.smoke else a.herd_reps)]
                row["herd"] = {
                    "per_waiter": {k: stats.spread([r["per_waiter"][k] for r in runs]) for k in runs[0]["per_waiter"]},
                    "waiting_per_waiter": {k: stats.spread([r["waiting_per_waiter"][k] for r in runs])
                                           for k in runs[0]["waiting_per_waiter"]},
                    "drain_s": stats.spread([r["drain_s"] for r in runs])}
            if "C" in only:
                # Every server of the URL swapped for one address nobody listens on.
                scheme, rest = e.url.split("://", 1)
                user = rest.split("@")[0] + "@" if "@" in rest.split("/")[0] else ""
                hosts = rest[len(user):]
                tail = hosts[len(hosts.split("/")[0].split("?")[0]):]
                refused = f"{scheme}://{user}127.0.0.1:{free_port()}{tail}"
                row["refused_ms"] = stats.spread([connect_ms(refused)[0] for _ in range(max(reps, 3))])
                if name != "redis":
                    row["redis_url_at_its_port_ms"] = stats.spread(
                        [connect_ms(f"redis://127.0.0.1:{e.port()}")[0] for _ in range(max(reps, 3))])
        except (SystemExit, Exception) as ex:  # the other engines' rows still count
            row["error"] = str(ex)
            print(f"bench: {name}: {ex}", file=sys.stderr)
        finally:
            e.stop()
        with open(os.path.join(a.out, "results.json"), "w") as f:  # after each engine
            json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table(results))
    print(table(results))
    if any("error" in row for row in results["engines"].values()):
        sys.exit(1)


def table(r):
    out = [f"# Faults on every engine ({r['started']}, {r['reps']} reps, medians with min..max; "
           f"{'smoke' if r['smoke'] else 'full'})", "",
           "`bench/faults.py`: the CLI as users run it. Loss: force-unlock from another process until "
           "the holder's `run` exits 70 (one CLI start, the spawn column, included). Herd: after the "
           f"holder releases, server work per waiter to drain {r['waiters']} waiters. Connect: "
           "`deadbolt status` against a refused port, and a redis:// URL against the engine's port.", "",
           "| engine | spawn | loss, TTL 3 s (ZooKeeper 4 s) | loss, TTL 30 s | herd: work per waiter | herd: drain | "
           "refused port | redis:// at its port |", "|---|---:|---:|---:|---|---:|---:|---:|"]

    def ms(v):
        return "" if not v else f"{v['median']:.0f} ms ({v['min']:.0f}..{v['max']:.0f})"
    for name, row in r["engines"].items():
        if "error" in row:
            out.append(f"| {name} | failed: {row['error']} |")
            continue
        herd_ = row.get("herd", {})
        work = ", ".join(f"{v['median']:.1f} {k}" for k, v in herd_.get("per_waiter", {}).items())
        drain = f"{herd_['drain_s']['median']:.1f} s" if herd_ else ""
        out.append(f"| {name} | {ms(row.get('spawn_ms'))} | {ms(row.get('loss_ms_short'))} | "
                   f"{ms(row.get('loss_ms_long'))} | {work} | {drain} | {ms(row.get('refused_ms'))} | "
                   f"{ms(row.get('redis_url_at_its_port_ms'))} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
