#!/usr/bin/python3
"""deadbolt's Python binding under the bench driver's scenarios: cycle (--threads threads, or
with --asyncio that many tasks in flight on one loop) and contend; one JSON object on stdout.
Imports the package from DEADBOLT_PYTHONPATH (default: the build's)."""
import asyncio
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.environ.get("DEADBOLT_PYTHONPATH",
                                  os.path.join(HERE, "..", "..", "build", "bindings", "python")))
import deadbolt  # noqa: E402
import redis  # noqa: E402

from peer import contend, cpu, cycles, parser, pct, until_of  # noqa: E402


async def async_cycles(client, key, tasks, until):
    """tasks tasks on one loop, each taking and giving back its own lock until `until`."""
    lat = [[] for _ in range(tasks)]

    async def loop(t):
        m = client.mutex(f"{key}:{t}")
        while time.monotonic_ns() < until:
            t0 = time.monotonic_ns()
            async with m:
                pass
            lat[t].append((time.monotonic_ns() - t0) / 1000)

    start, c0 = time.monotonic_ns(), cpu()
    await asyncio.gather(*(loop(t) for t in range(tasks)))
    allv = [x for v in lat for x in v]
    el = (time.monotonic_ns() - start) / 1e9
    return {"cycles": len(allv), "cycles_per_s": len(allv) / el, "p50_us": pct(allv, 0.5),
            "p99_us": pct(allv, 0.99), "cpu_s": cpu() - c0}


def main():
    ap = parser()
    ap.add_argument("--asyncio", action="store_true")
    ap.add_argument("--loop-spin-us", type=float, default=None)
    a = ap.parse_args()
    until = until_of(a)
    opts = {} if a.loop_spin_us is None else {"loop_spin": a.loop_spin_us / 1e6}
    client = deadbolt.connect(f"redis://127.0.0.1:{a.port}", **opts)
    if a.scenario == "cycle":
        key = f"{a.key}:{a.id}"
        if a.asyncio:
            out = asyncio.run(async_cycles(client, key, a.threads, until))
        else:
            out = cycles(lambda t: client.mutex(f"{key}:{t}"), a.threads, until)
    elif a.scenario == "contend":
        r = redis.Redis(port=a.port)
        m = client.mutex(a.key)

        def take(timeout):
            try:
                m.acquire(timeout=timeout)
                return True
            except deadbolt.NotAcquired:
                return False
        out = {"id": a.id, **contend(take, m.release, (r, f"{a.key}:counter"), a.start_ns, until)}
    else:
        sys.exit(f"deadbolt_py.py: no scenario {a.scenario}")
    print(json.dumps(out))


main()
