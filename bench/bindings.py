"""bench/bindings.py python|node: a language binding of deadbolt against its language's best
known peers (redis-py's Lock; node-redlock) and the C++ library it wraps, on one redis-server,
side by side in one run (issue 35's rows).

P1 uncontended cycle p50, one thread; P2 16 concurrent cycles/s (16 threads, or 16 in flight
on one event loop); P3 8 processes on one name: handoffs/s and wait p99. Medians of --reps
repetitions with min..max; results in bench/results/<language>/.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402
from run import DRIVER, HERE, NODE, Server, now_ns  # noqa: E402

PYTHON = "/usr/bin/python3"
BINDING = [PYTHON, os.path.join(HERE, "peers", "deadbolt_py.py")]
REDIS_PY = [PYTHON, os.path.join(HERE, "peers", "redis_py_lock.py")]
NODE_BINDING = ["node", os.path.join(HERE, "peers", "deadbolt_node.mjs")]


class Language:
    """One binding's contenders: `binding` is the one the ratios are of, `peers` the names
    starting with `peer`; `contend` those run in P3; `also` one more ratio row of P2."""

    def __init__(self, title, contenders, contend, binding, peer, also=None):
        self.title, self.contenders, self.contend = title, contenders, contend
        self.binding, self.peer, self.also = binding, peer, also


LANGUAGES = {
    "python": Language("Python binding", {
        "deadbolt C++": [DRIVER, "--contender", "deadbolt"],
        "deadbolt Python": BINDING,
        "deadbolt Python asyncio": [*BINDING, "--asyncio"],
        # Without the event loop's spin after work (loop_spin=0): eight processes share one
        # CPU in P3, where one's spin delays the others.
        "deadbolt Python loop_spin=0": [*BINDING, "--loop-spin-us", "0"],
        "redis-py sleep=0.1": [*REDIS_PY, "--sleep", "0.1"],
        "redis-py sleep=0.001": [*REDIS_PY, "--sleep", "0.001"],
    }, ["deadbolt C++", "deadbolt Python", "deadbolt Python loop_spin=0", "redis-py sleep=0.1",
        "redis-py sleep=0.001"], "deadbolt Python", "redis-py", also="deadbolt Python asyncio"),
    "node": Language("Node.js binding", {
        "deadbolt C++": [DRIVER, "--contender", "deadbolt"],
        "deadbolt C++ async": [DRIVER, "--contender", "deadbolt-async"],
        "deadbolt Node": NODE_BINDING,
        "deadbolt Node loopSpin=0": [*NODE_BINDING, "--loop-spin-us", "0"],
        "node-redlock default": NODE,
        "node-redlock busy": [*NODE, "--retry", "busy"],
    }, ["deadbolt C++", "deadbolt Node", "deadbolt Node loopSpin=0", "node-redlock default",
        "node-redlock busy"], "deadbolt Node", "node-redlock"),
}
LANG = LANGUAGES["python"]


def argv(c, scenario, opts):
    prefix = LANG.contenders[c]
    # The driver and the peers take their options after the scenario (the interpreter and the
    # script before it).
    if prefix[0] == DRIVER:
        return ["taskset", "-c", "1", DRIVER, scenario, *prefix[1:], *map(str, opts)]
    return ["taskset", "-c", "1", *prefix[:2], scenario, *prefix[2:], *map(str, opts)]


def run(c, scenario, opts):
    r = subprocess.run(argv(c, scenario, opts), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"bench: {c} {scenario} failed: {r.stderr[-800:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def contend(srv, c, key, seconds):
    start = now_ns() + 3_000_000_000
    until = start + int(seconds * 1e9)
    procs = [subprocess.Popen(argv(c, "contend", ["--port", srv.port, "--id", i, "--key", key,
                                                   "--start-ns", start, "--until-ns", until]),
                              stdout=subprocess.PIPE, text=True) for i in range(8)]
    outs = [json.loads(p.communicate(timeout=seconds + 120)[0].strip().splitlines()[-1]) for p in procs]
    row = stats.contended([o["events"] for o in outs], int(srv.cli("GET", f"{key}:counter") or 0))
    row["wait_p99_ms"] = row["wait_ms"]["p99"]
    row["cpu_s"] = sum(o["cpu_s"] for o in outs)
    del row["wait_ms_sample"]
    return row


def med(rows, field):
    v = sorted(r[field] for r in rows)
    return v[len(v) // 2], v[0], v[-1]


def main():
    global LANG
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("language", choices=sorted(LANGUAGES))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--out", help="default: bench/results/<language>")
    ap.add_argument("--smoke", action="store_true", help="one short repetition (CI)")
    a = ap.parse_args()
    LANG = LANGUAGES[a.language]
    CONTENDERS, CONTEND = LANG.contenders, LANG.contend
    a.out = a.out or os.path.join(HERE, "results", a.language)
    if a.language == "node" and not os.path.isdir(os.path.join(HERE, "peers", "node_modules")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--silent"],
                       cwd=os.path.join(HERE, "peers"), check=True)
    if a.smoke:
        a.reps, a.seconds = 1, 0.3
    os.makedirs(a.out, exist_ok=True)
    res = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "reps": a.reps,
           "p1": {c: [] for c in CONTENDERS}, "p2": {c: [] for c in CONTENDERS},
           "p3": {c: [] for c in CONTEND}}
    srv = Server()
    try:
        for rep in range(a.reps):
            for c in CONTENDERS:
                res["p1"][c].append(run(c, "cycle", ["--port", srv.port, "--threads", 1,
                                                     "--seconds", a.seconds, "--key", f"p1:{rep}"]))
                res["p2"][c].append(run(c, "cycle", ["--port", srv.port, "--threads", 16,
                                                     "--seconds", a.seconds, "--key", f"p2:{rep}"]))
                srv.cli("FLUSHALL")
            for c in CONTEND:
                res["p3"][c].append(contend(srv, c, f"p3:{rep}:{c.replace(' ', '_')}", 3 * a.seconds))
    finally:
        srv.proc.kill()
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    lines = [f"# {LANG.title}, {res['started']} ({a.reps} reps, median [min..max])", "",
             "| contender | P1 cycle p50 µs | P2 16 concurrent cycles/s | P3 handoffs/s | P3 wait p99 ms | P3 lost updates |",
             "|---|---:|---:|---:|---:|---:|"]
    fmt = lambda t: f"{t[0]:,.1f} [{t[1]:,.1f}..{t[2]:,.1f}]"
    for c in CONTENDERS:
        p3 = res["p3"].get(c)
        lines.append(f"| {c} | {fmt(med(res['p1'][c], 'p50_us'))} | {fmt(med(res['p2'][c], 'cycles_per_s'))} | "
                     + (f"{fmt(med(p3, 'handoffs_per_s'))} | {fmt(med(p3, 'wait_p99_ms'))} | "
                        f"{max(r['lost_updates'] for r in p3)} |" if p3 else "– | – | – |"))
    p = lambda s, c, f: med(res[s][c], f)[0]
    b = LANG.binding
    best_p2 = max(p("p2", c, "cycles_per_s") for c in CONTENDERS if c.startswith(LANG.peer))
    best_p3 = max(p("p3", c, "handoffs_per_s") for c in CONTEND if c.startswith(LANG.peer))
    also = (f" ({LANG.also.removeprefix(b).strip()} {p('p2', LANG.also, 'cycles_per_s') / best_p2:.2f}x)"
            if LANG.also else "")
    lines += ["", "Ratios (medians): "
              f"P2 binding / best {LANG.peer} {p('p2', b, 'cycles_per_s') / best_p2:.2f}x{also}; "
              f"P3 handoffs binding / best {LANG.peer} {p('p3', b, 'handoffs_per_s') / best_p3:.2f}x; "
              f"P1 cycle time binding / C++ {p('p1', b, 'p50_us') / p('p1', 'deadbolt C++', 'p50_us'):.2f}x; "
              f"P2 throughput binding / C++ {p('p2', b, 'cycles_per_s') / p('p2', 'deadbolt C++', 'cycles_per_s'):.2f}x."]
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
