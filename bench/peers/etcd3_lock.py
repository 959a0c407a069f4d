#!/usr/bin/python3
"""python-etcd3's Lock (Debian python3-etcd3) under the bench driver's cycle and contend
scenarios, against --etcd members; the contended counter lives on redis-server --port, as
the driver's. One JSON object on stdout."""
import json
import sys

import etcd3
import redis

from peer import contend, cycles, parser, until_of


def main():
    ap = parser()
    ap.add_argument("--etcd", required=True, help="h:p,h:p,...")
    a = ap.parse_args()
    until = until_of(a)
    host, port = a.etcd.split(",")[0].split(":")  # python-etcd3 takes one endpoint
    client = etcd3.client(host=host, port=int(port))

    if a.scenario == "cycle":
        out = cycles(lambda t: client.lock(f"{a.key}:{a.id}:{t}", ttl=30), a.threads, until)
    elif a.scenario == "contend":
        lock = client.lock(a.key, ttl=30)
        try:
            out = {"id": a.id, **contend(lambda timeout: lock.acquire(timeout=timeout), lock.release,
                                         (redis.Redis(port=a.port), f"{a.key}:counter"), a.start_ns, until)}
        except TypeError as e:  # Debian's tenacity 8 breaks its wait: python-etcd3 #2149
            print(json.dumps({"id": a.id, "error": f"acquire raised TypeError: {e} "
                              "(kragniz/python-etcd3#2149)", "version": etcd3.__version__}))
            return
    else:
        sys.exit(f"etcd3_lock.py: no scenario {a.scenario}")
    out["version"] = etcd3.__version__
    print(json.dumps(out))


main()
