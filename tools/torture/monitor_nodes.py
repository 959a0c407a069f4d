#!/usr/bin/env python3
"""Records what every lock node executed during torture runs, for tracing a violation.

    python3 tools/torture/monitor_nodes.py DIR &   # then run deadbolt-torture; kill it after

The checker sees only the workers' histories: which worker believed it held, and when. When it
finds an overlap, the question is which request put or took the key on which node. This
watcher attaches MONITOR to every redis-server that keeps an AOF (the lock nodes of a
restart-aof or mixed run; the fenced data server has none), again after each restart, and
writes each server process's stream to DIR/PORT-PID.log: every command with the server's wall
time, the client's address, and the commands scripts ran ("[0 lua]"). DIR/clock.txt pairs the
wall clock with the monotonic clock the histories use. MONITOR slows a server down, and the
few milliseconds between a restart and the attach are not recorded.
"""
import os
import socket
import sys
import threading
import time


def follow(out, pid, port):
    """Copies one server's MONITOR stream to out/PORT-PID.log until the server goes."""
    for _ in range(400):  # the server may not listen yet
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            break
        except OSError:
            time.sleep(0.005)
    else:
        return
    s.settimeout(None)
    s.sendall(b"MONITOR\r\n")
    with open(os.path.join(out, f"{port}-{pid}.log"), "wb") as f:
        f.write(f"attached {time.time()}\n".encode())
        while True:
            try:
                b = s.recv(65536)
            except OSError:
                break
            if not b:
                break
            f.write(b)


def keeps_aof(args):
    return any(args[i] == b"--appendonly" and args[i + 1] == b"yes" for i in range(len(args) - 1))


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "clock.txt"), "w") as f:
        f.write(f"wall {time.time()} monotonic {time.monotonic()}\n")
    seen = set()
    while True:
        for p in os.listdir("/proc"):
            if not p.isdigit() or p in seen:
                continue
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    args = f.read().split(b"\0")
            except OSError:
                continue
            if not args or not args[0].endswith(b"redis-server"):
                continue
            seen.add(p)
            if keeps_aof(args) and b"--port" in args:
                port = int(args[args.index(b"--port") + 1])
                threading.Thread(target=follow, args=(out, p, port), daemon=True).start()
        time.sleep(0.004)


if __name__ == "__main__":
    main()
