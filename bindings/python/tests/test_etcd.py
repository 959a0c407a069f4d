"""The binding on a real etcd (Debian's etcd-server), one member: the same Lock, and a key
deleted with etcdctl is a loss the with-block sees."""

import os
import shutil
import subprocess
import tempfile
import time

import pytest
from conftest import free_port

import deadbolt

pytestmark = pytest.mark.skipif(shutil.which("etcd") is None, reason="etcd-server not installed")


@pytest.fixture(scope="module")
def etcd():
    data = tempfile.mkdtemp(prefix="deadbolt-py-etcd-")
    client, peer = free_port(), free_port()
    proc = subprocess.Popen(
        ["etcd", "--name", "py", "--data-dir", data,
         "--listen-client-urls", f"http://127.0.0.1:{client}",
         "--advertise-client-urls", f"http://127.0.0.1:{client}",
         "--listen-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"py=http://127.0.0.1:{peer}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"127.0.0.1:{client}"
    deadline = time.monotonic() + 30
    while subprocess.run(["etcdctl", "--endpoints", endpoint, "endpoint", "health"],
                         capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "etcd did not start"
        time.sleep(0.1)
    yield endpoint
    proc.kill()
    proc.wait()
    shutil.rmtree(data, ignore_errors=True)


def test_a_lock_on_etcd_excludes_another_client_and_fences(etcd):
    a = deadbolt.connect(f"etcd://{etcd}")
    b = deadbolt.connect(f"etcd://{etcd}")
    with a.mutex("py-job", ttl=5) as lease:
        assert lease.fence > 0
        with pytest.raises(deadbolt.NotAcquired):
            b.mutex("py-job").acquire(timeout=0.3)
        first = lease.fence
    with b.mutex("py-job") as lease:
        assert lease.fence > first


def test_a_key_deleted_with_etcdctl_is_a_loss_the_block_sees(etcd):
    client = deadbolt.connect(f"etcd://{etcd}")
    with pytest.raises(deadbolt.LockLost):
        with client.mutex("py-lost", ttl=30) as lease:
            env = dict(os.environ, ETCDCTL_API="3")
            subprocess.run(["etcdctl", "--endpoints", etcd, "del", "--prefix",
                            client.lock_key("py-lost")], check=True, capture_output=True, env=env)
            deadline = time.monotonic() + 10
            while not lease.lost and time.monotonic() < deadline:
                time.sleep(0.02)
            assert lease.lost  # through the watch on its key, long before the 30 s TTL
