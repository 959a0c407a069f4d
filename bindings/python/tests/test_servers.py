"""The binding on the engine DEADBOLT_TEST_ENGINE names, a real server that tests/support's
deadbolt-test-server starts (memcached, etcd, zookeeper, postgres, mariadb): exclusion,
fences, a waiter woken at the release, asyncio, and a lock force-unlocked by another client
seen as lost by its holder."""

import asyncio
import os
import subprocess
import threading
import time

import pytest

import deadbolt

ENGINE = os.environ.get("DEADBOLT_TEST_ENGINE", "")


@pytest.fixture(scope="module")
def url():
    server = os.environ.get("DEADBOLT_TEST_SERVER")
    if not server or not ENGINE:
        pytest.skip("DEADBOLT_TEST_SERVER and DEADBOLT_TEST_ENGINE name the server to test")
    proc = subprocess.Popen([server, ENGINE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline().strip()
    assert line, f"deadbolt-test-server {ENGINE} did not start"
    yield line
    proc.stdin.close()
    proc.wait(timeout=60)


def test_a_lock_excludes_another_client_and_its_fences_grow(url, name):
    a, b = deadbolt.connect(url), deadbolt.connect(url)
    with a.mutex(name, ttl=10) as first:
        assert first.fence > 0
        assert b.mutex(name).try_acquire() is None
        with pytest.raises(deadbolt.NotAcquired):
            b.mutex(name).acquire(timeout=0.2)
        assert b.status(name)["held"]
    with b.mutex(name, ttl=10) as second:
        assert second.fence > first.fence
    assert not a.status(name)["held"]


def test_a_waiter_gets_the_lock_at_the_release(url, name):
    a, b = deadbolt.connect(url), deadbolt.connect(url)
    held = a.mutex(name, ttl=10)
    lease = held.acquire()
    got = []
    t = threading.Thread(target=lambda: got.append(b.mutex(name, ttl=10).acquire(timeout=20)))
    t.start()
    time.sleep(0.5)
    assert not got
    held.release()
    t.join(timeout=30)
    assert got and got[0].fence > lease.fence
    got[0].release()


def test_asyncio_tasks_take_turns(url, name):
    client = deadbolt.connect(url)
    inside = []

    async def worker():
        for _ in range(3):
            async with client.mutex(name, ttl=10):
                inside.append(1)
                assert len(inside) == 1
                await asyncio.sleep(0.01)
                inside.pop()

    async def main():
        await asyncio.gather(*(worker() for _ in range(4)))

    asyncio.run(main())


def test_a_force_unlocked_lock_is_lost_to_its_holder(url, name):
    a, b = deadbolt.connect(url), deadbolt.connect(url)
    seen = []
    lease = a.mutex(name, ttl=10, on_lost=lambda n, e: seen.append(n)).acquire()
    b.force_unlock(name)
    deadline = time.monotonic() + 10
    while not lease.lost and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lease.lost
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.02)
    assert seen == [name]
