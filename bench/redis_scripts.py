#!/usr/bin/python3
"""What the Redis server spends in the Mutex's scripts per lock+unlock cycle, at several
revisions of this repository, against node-redlock's two scripts.

    bench/redis_scripts.py [--revs e0d87fb,HEAD] [--cycles 20000] [--reps 7]
    bench/redis_scripts.py --pieces    what each piece of a script costs the server

Each revision's acquire and release scripts are read from its sources (`git show REV:...`,
composed as src/backends/redis/lua/mutex.cpp composes them) and run on one redis-server
(CPU 0; this client on CPU 1): `--cycles` pipelined acquire+release pairs on 64 names, for a
single server (fence from the server's clock) and for a Redlock node (a proposal in ARGV).
The figure is EVALSHA's usec in INFO commandstats divided by the cycles: the server's own
time in the scripts, the calls they make included, without the network or the client. The
same for node-redlock v5's scripts (no fence, no line). Medians and minima of --reps rounds.
bench/results/redis_scripts.md keeps a run.

--pieces times each piece inside one script, in a loop of 20,000 (TIME read around it; the
best of 5): a call's cost with no network, no EVALSHA and no reply to the client.
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import redis  # Debian's python3-redis

from run import ROOT, Server

NODE_ACQUIRE = """for _, key in ipairs(KEYS) do
  if redis.call("exists", key) == 1 then return 0 end
end
for _, key in ipairs(KEYS) do
  redis.call("set", key, ARGV[1], "PX", ARGV[2])
end
return #KEYS"""
NODE_RELEASE = """local count = 0
for _, key in ipairs(KEYS) do
  if redis.call("get", key) == ARGV[1] then
    redis.pcall("del", key)
    count = count + 1
  end
end
return count"""


def lua_blocks(rev, path):
    """{name: text} of the R"lua(...)lua" constants in path at rev."""
    src = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:{path}"], capture_output=True, text=True,
                         check=True).stdout
    return {m.group(1): m.group(2)
            for m in re.finditer(r'constexpr std::string_view (\w+) = R"lua\((.*?)\)lua";', src, re.S)}


def mutex_scripts(rev):
    """(acquire, release) as rev's make_script built them: the helpers after the grant where
    the revision puts them there (kLineUp, kWake), before the whole body otherwise."""
    b = lua_blocks(rev, "src/backends/redis/lua/mutex.cpp")
    b.update(lua_blocks(rev, "src/backends/redis/lua/line.cpp"))
    b.update(lua_blocks(rev, "src/backends/redis/scripts.cpp"))
    kinds, line = b["kKinds"], b["kLine"]
    if "kLineUp" in b:
        return ("#!lua\n" + b["kAcquire"] + kinds + line + b["kLineUp"],
                "#!lua\n" + b["kRelease"] + line + b["kWake"])
    return "#!lua\n" + kinds + line + b["kAcquire"], "#!lua\n" + line + b["kRelease"]


def per_cycle(r, cycles, acquire, release, keys, args):
    """EVALSHA usec per acquire+release pair over `cycles` pipelined pairs."""
    sa, sr = r.script_load(acquire), r.script_load(release)
    r.config_resetstat()
    p = r.pipeline(transaction=False)
    for i in range(cycles):
        k = f"s{i % 64}"
        ka, aa = keys(k), args()
        kr, ar = ka[::2], aa[:1] + aa[3:4]  # release: lock, line; token, box
        p.evalsha(sa, len(ka), *ka, *aa)
        p.evalsha(sr, len(kr), *kr, *ar)
        if i % 100 == 99:
            p.execute()
    p.execute()
    return r.info("commandstats")["cmdstat_evalsha"]["usec"] / cycles


# name -> the Lua run once per loop turn (tt: a TIME reply read before the loop).
PIECES = {
    "TIME": "local x = redis.call('TIME')",
    "SET NX PX, then DEL": "redis.call('SET', KEYS[1], 'tok', 'NX', 'PX', '2000') redis.call('DEL', KEYS[1])",
    "DEL of a missing key": "redis.call('DEL', KEYS[1])",
    "SET PX of a kept counter": "redis.call('SET', KEYS[2], '1764551234567890', 'PX', '62000')",
    "SET PX GET of a kept counter": "local x = redis.pcall('SET', KEYS[2], '1764551234567890', 'PX', '62000', 'GET')",
    "GET": "local x = redis.call('GET', KEYS[2])",
    "TYPE of a missing key": "local x = redis.call('TYPE', 'nokey')['ok']",
    "EXISTS of a missing key": "local x = redis.call('EXISTS', 'nokey')",
    "string.match of fence_px": "local a, b = string.match('62000', '^(%d+)@(%d+)$')",
    "string.format of the clock": "local f = string.format('%d', tonumber(tt[1]) * 1000000 + tonumber(tt[2]))",
    "the clock joined as text": "local f = tt[1] .. string.sub('00000' .. tt[2], -6)",
    "a table of two": "local x = {1, '1764551234567890'}",
}


def pieces(r, rev):
    """{piece: µs} timed in a server-side loop, the helpers' definitions (rev's) among them."""
    b = lua_blocks(rev, "src/backends/redis/lua/line.cpp")
    b.update(lua_blocks(rev, "src/backends/redis/scripts.cpp"))
    todo = dict(PIECES)
    todo["the kinds' and the line's helpers defined"] = "do " + b["kKinds"] + b["kLine"] + " end"
    out = {}
    for name, body in todo.items():
        script = (f"local tt = redis.call('TIME')\nlocal t0 = redis.call('TIME')\nfor i = 1, 20000 do\n{body}\nend\n"
                  "local t1 = redis.call('TIME')\n"
                  "return tostring(((t1[1] - t0[1]) * 1e6 + (t1[2] - t0[2])) / 20000)")
        out[name] = min(float(r.eval(script, 2, "k", "{k}:fence")) for _ in range(5))
    return out


def cycle_rows(r, scripts, cycles, reps):
    """{row: [µs per cycle, one per round]} for each revision's scripts and node-redlock's."""
    rows = {}
    for _ in range(reps):
        for rev, (acq, rel) in scripts.items():
            for kind, fence_px in (("one server", lambda: "62000"),
                                   ("Redlock node", lambda: f"62000@{int(time.time() * 1e6)}")):
                # KEYS lock, fence, line; ARGV token, px, fence_px, box, member, ticket. The
                # release takes KEYS lock, line and ARGV token, box.
                rows.setdefault(f"{rev} {kind}", []).append(per_cycle(
                    r, cycles, acq, rel, lambda k: [k, "{" + k + "}:fence", "{" + k + "}:line"],
                    lambda fp=fence_px: ["tok", "2000", fp(), "box", "", ""]))
        rows.setdefault("node-redlock", []).append(per_cycle(
            r, cycles, NODE_ACQUIRE, NODE_RELEASE, lambda k: [k], lambda: ["tok", "2000"]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--revs", default="e0d87fb,HEAD")
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--pieces", action="store_true")
    a = ap.parse_args()
    scripts = {} if a.pieces else {rev: mutex_scripts(rev) for rev in a.revs.split(",")}
    os.sched_setaffinity(0, {1})  # the server is on CPU 0
    srv = Server()
    try:
        r = redis.Redis(port=srv.port)
        each = pieces(r, "HEAD") if a.pieces else {}
        rows = {} if a.pieces else cycle_rows(r, scripts, a.cycles, a.reps)
    finally:
        srv.stop()
    if a.pieces:
        print("What each piece costs the server inside a script, µs (a loop of 20,000, best of 5)\n")
        print("| piece | µs |\n|---|---:|")
        for name, us in each.items():
            print(f"| {name} | {us:.3f} |")
        return
    print(f"Server time in the Mutex's scripts per acquire+release cycle, µs (EVALSHA usec in INFO "
          f"commandstats / cycles; {a.cycles} pipelined cycles, {a.reps} rounds)\n")
    print("| scripts | median | min |\n|---|---:|---:|")
    for name, v in rows.items():
        print(f"| {name} | {statistics.median(v):.2f} | {min(v):.2f} |")


if __name__ == "__main__":
    main()
