"""Fixtures: a real redis-server (Debian's) on a free port, started per test module."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """redis-server on a free port in a temporary directory, without persistence."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="deadbolt-py-redis-")
        for _ in range(20):
            self.port = free_port()
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", self.dir],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._ready():
                return
            self.proc.kill()
            self.proc.wait()
        raise RuntimeError("redis-server did not start on any free port")

    def _ready(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False  # the port was taken meanwhile
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            except OSError:
                time.sleep(0.02)
        return False

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def redis_server():
    srv = RedisServer()
    yield srv
    srv.stop()


@pytest.fixture
def redis_py(redis_server):
    """redis-py (Debian's python3-redis) on the same server."""
    import redis
    r = redis.Redis(port=redis_server.port)
    yield r
    r.close()


@pytest.fixture
def client(redis_server):
    import deadbolt
    return deadbolt.connect(redis_server.url)


@pytest.fixture
def name(request):
    """A lock name of this test's own."""
    return "py:" + request.node.name + ":" + os.urandom(4).hex()


def ctrl_c_ends_the_wait(setup, wait):
    """Runs setup, then the call `wait`, in a child process and sends it SIGINT while it
    waits: the wait must end with KeyboardInterrupt, and the child exit cleanly."""
    code = (setup + "\ntry:\n    print('waiting', flush=True)\n    " + wait +
            "\n    print('returned', flush=True)\nexcept KeyboardInterrupt:\n"
            "    print('interrupted', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "waiting"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    assert child.stdout.readline().strip() == "interrupted"
    assert child.wait(timeout=10) == 0
