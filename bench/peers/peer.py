"""What every Python peer of the bench driver shares: CPU time, percentiles, and the cycle
and contend loops around a peer's own lock (each prints one JSON object)."""
import argparse
import resource
import threading
import time


def parser():
    """The driver's options every peer takes (the scenario, the counter's --port, threads,
    process id, the run's span and key); a peer adds where its engine is."""
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario")
    ap.add_argument("--port", type=int, default=6379)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--id", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--until-ns", type=int, default=0)
    ap.add_argument("--start-ns", type=int, default=0)
    ap.add_argument("--key", default="bench")
    return ap


def until_of(a):
    """The end of the run: --until-ns, else --seconds from now (CLOCK_MONOTONIC ns)."""
    return a.until_ns or time.monotonic_ns() + int(a.seconds * 1e9)


def cpu():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] if v else 0


def cycles(lock_for, threads, until):
    """Each of `threads` threads takes and gives back its own lock (lock_for(t)) until
    `until` (CLOCK_MONOTONIC ns): cycles/s, latency percentiles (µs), CPU."""
    lat = [[] for _ in range(threads)]

    def loop(t):
        lock = lock_for(t)
        while time.monotonic_ns() < until:
            t0 = time.monotonic_ns()
            lock.acquire()
            lock.release()
            lat[t].append((time.monotonic_ns() - t0) / 1000)

    start, c0 = time.monotonic_ns(), cpu()
    ts = [threading.Thread(target=loop, args=(t,)) for t in range(threads)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    allv = [x for v in lat for x in v]
    el = (time.monotonic_ns() - start) / 1e9
    return {"cycles": len(allv), "cycles_per_s": len(allv) / el, "p50_us": pct(allv, 0.5),
            "p99_us": pct(allv, 0.99), "cpu_s": cpu() - c0}


def contend(try_acquire, release, counter, start_ns, until):
    """From start_ns (every process at once) until `until`: take the lock (try_acquire(timeout
    s) -> bool), increment the Redis counter by read-modify-write, give it back. The
    [invoked, got, released] events, failures and CPU."""
    remaining = lambda: (until - time.monotonic_ns()) / 1e9
    r, key = counter
    time.sleep(max(0, (start_ns - time.monotonic_ns()) / 1e9))
    events, failures, c0 = [], 0, cpu()
    while remaining() > 0:
        inv = time.monotonic_ns()
        if not try_acquire(max(remaining(), 0.001)):
            failures += 1
            continue
        got = time.monotonic_ns()
        r.set(key, int(r.get(key) or 0) + 1)
        rel = time.monotonic_ns()
        release()
        events.append([inv, got, rel])
    return {"failures": failures, "cpu_s": cpu() - c0, "events": events}


def serve(name, make_lock):
    """The main of a peer that polls a try-lock (sql_poll.py, mc_poll.py): make_lock(url, key,
    poll_s) gives a lock with acquire() and release(); --url names its server, --poll-ms the
    sleep between tries. Prints the scenario's JSON object."""
    import json

    import redis
    ap = parser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--poll-ms", type=float, default=10)
    a = ap.parse_args()
    until = until_of(a)
    poll_s = a.poll_ms / 1000
    if a.scenario == "cycle":
        out = cycles(lambda t: make_lock(a.url, f"{a.key}:{a.id}:{t}", poll_s), a.threads, until)
    elif a.scenario == "contend":
        lock = make_lock(a.url, a.key, poll_s)
        out = {"id": a.id, **contend(lock.acquire, lock.release,
                                     (redis.Redis(port=a.port), f"{a.key}:counter"), a.start_ns, until)}
    else:
        raise SystemExit(f"{name}: no scenario {a.scenario}")
    print(json.dumps(out))
