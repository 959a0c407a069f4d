"""deadbolt and redis-py's Lock on the same name, both ways (the same key, the same token
check)."""

import threading
import time

import pytest

import deadbolt


def test_redis_py_cannot_take_a_name_deadbolt_holds(client, redis_py, name):
    with client.mutex(name):
        assert not redis_py.lock(name, timeout=5).acquire(blocking=False)
    assert redis_py.lock(name, timeout=5).acquire(blocking=False)


def test_deadbolt_waits_for_a_redis_py_holder(client, redis_py, name):
    assert redis_py.lock(name, timeout=1).acquire(blocking=False)  # held for 1 s, its TTL
    with pytest.raises(deadbolt.NotAcquired):
        client.mutex(name).acquire(blocking=False)
    started = time.monotonic()
    lease = client.mutex(name).acquire(timeout=5)
    assert time.monotonic() - started >= 0.5 and lease.valid


def test_a_redis_py_waiter_gets_the_lock_after_deadbolt_releases(client, redis_py, name):
    m = client.mutex(name)
    m.acquire()
    got = []
    t = threading.Thread(target=lambda: got.append(
        redis_py.lock(name, timeout=5, sleep=0.01).acquire(blocking_timeout=10)))
    t.start()
    time.sleep(0.3)
    assert not got
    m.release()
    t.join(timeout=15)
    assert got == [True]


def test_status_names_a_redis_py_holder(client, redis_py, name):
    assert redis_py.lock(name, timeout=5).acquire(blocking=False)
    s = client.status(name)
    assert s["held"] and s["held_by"][0]["client"]
