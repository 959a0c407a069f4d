"""The blocking API: exclusion, fences, waiting without polling, loss, and bad input."""

import subprocess
import sys
import textwrap
import threading
import time

import pytest
from conftest import ctrl_c_ends_the_wait

import deadbolt


def eventually(check, within=10.0):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def test_a_with_block_holds_the_lock_and_each_holding_gets_a_higher_fence(client, redis_py, name):
    with client.mutex(name, ttl=5) as lease:
        assert lease.held and lease.valid and not lease.lost
        assert lease.name == name
        assert lease.valid_until > time.monotonic()
        assert client.status(name)["held"]
        assert not redis_py.lock(name, timeout=5).acquire(blocking=False)
        first = lease.fence
    assert not lease.held
    assert not client.status(name)["held"]
    with client.mutex(name) as lease:
        assert lease.fence > first > 0


def test_two_processes_never_hold_the_lock_together(redis_server, redis_py, name):
    # Each process reads the counter, sleeps, writes it back plus one: without exclusion the
    # processes overwrite each other's increments. Each also records its holding's fence.
    worker = textwrap.dedent(f"""
        import sys, time, deadbolt, redis
        c = deadbolt.connect({redis_server.url!r})
        r = redis.Redis(port={redis_server.port})
        m = c.mutex({name!r})
        for _ in range(40):
            with m as lease:
                n = int(r.get("counter:{name}") or 0)
                time.sleep(0.001)
                r.set("counter:{name}", n + 1)
                r.rpush("fences:{name}", f"{{n}} {{lease.fence}}")
        """)
    procs = [subprocess.Popen([sys.executable, "-c", worker]) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert int(redis_py.get(f"counter:{name}")) == 120
    # In the order the holders wrote the counter, the fences only grow.
    pairs = sorted(tuple(map(int, x.split())) for x in redis_py.lrange(f"fences:{name}", 0, -1))
    fences = [f for _, f in pairs]
    assert fences == sorted(fences) and len(set(fences)) == 120


def test_a_waiter_gets_the_lock_when_the_holder_releases_without_polling(client, redis_py, name):
    holder = client.mutex(name)
    holder.acquire()
    got = []

    def wait():
        m = client.mutex(name)
        m.acquire(timeout=30)
        m.release()
        got.append(True)

    waiter = threading.Thread(target=wait)
    waiter.start()
    assert eventually(lambda: client.status(name)["waiters"] == 1)
    time.sleep(0.3)  # its attempts around subscribing are over
    redis_py.config_resetstat()
    time.sleep(2)
    # Two seconds of waiting sent nothing: no attempt per poll interval.
    stats = redis_py.info("commandstats")
    attempts = sum(v["calls"] for k, v in stats.items() if "eval" in k or "fcall" in k)
    assert attempts == 0, stats
    holder.release()
    waiter.join(timeout=10)
    assert got == [True]


def test_a_timeout_raises_not_acquired_and_try_acquire_returns_none(client, name):
    with client.mutex(name):
        other = client.mutex(name)
        with pytest.raises(deadbolt.NotAcquired) as e:
            other.acquire(timeout=0.2)
        assert isinstance(e.value, TimeoutError) and isinstance(e.value, deadbolt.LockError)
        assert e.value.code == "not_acquired" and e.value.retryable
        assert other.try_acquire() is None
        with pytest.raises(deadbolt.NotAcquired):
            other.acquire(blocking=False)


def test_a_lost_lease_is_seen_in_the_with_body_and_raised_at_its_end(client, redis_py, name):
    lost = []
    with pytest.raises(deadbolt.LockLost):
        with client.mutex(name, ttl=1, on_lost=lambda n, e: lost.append((n, e))) as lease:
            redis_py.delete(client.lock_key(name))
            assert eventually(lambda: lease.lost)
            assert not lease.valid
    assert eventually(lambda: lost)
    assert lost[0][0] == name and isinstance(lost[0][1], deadbolt.LockLost)


def test_threads_sharing_one_lock_object_each_hold_in_turn(client, name):
    m = client.mutex(name)
    inside, most, done = [0], [0], []
    guard = threading.Lock()

    def work():
        for _ in range(10):
            with m as lease:
                with guard:
                    inside[0] += 1
                    most[0] = max(most[0], inside[0])
                time.sleep(0.001)
                with guard:
                    inside[0] -= 1
                assert m.lease is lease
        done.append(True)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(done) == 4 and most[0] == 1


def test_locking_twice_in_one_thread_is_refused_not_a_deadlock(client, name):
    m = client.mutex(name)
    with m:
        with pytest.raises(deadbolt.UsageError, match="reentrant"):
            m.acquire(timeout=1)
    assert not client.status(name)["held"]


def test_binary_names_are_kept_as_bytes(client):
    name = b"py:\x00\xff binary"
    with client.mutex(name) as lease:
        assert lease.name == name
        assert client.status(name)["held"]


@pytest.mark.parametrize("call, words", [
    (lambda c: c.mutex("").acquire(), "name"),
    (lambda c: c.mutex("x" * 5000).acquire(), "name"),
    (lambda c: c.mutex("n", ttl=-1).acquire(), "ttl"),
    (lambda c: c.mutex("n", ttl=float("nan")).acquire(), "ttl"),
    (lambda c: c.mutex("n", ttl="30").acquire(), "ttl"),
    (lambda c: c.mutex("n", tll=30).acquire(), "unknown option 'tll'"),
    (lambda c: c.mutex("n").acquire(timeout=-1), "timeout"),
])
def test_bad_input_is_a_usage_error_that_names_the_problem(client, call, words):
    with pytest.raises(deadbolt.UsageError, match=words) as e:
        call(client)
    assert isinstance(e.value, ValueError) and not e.value.retryable


def test_bad_urls_and_dead_servers_are_reported_at_connect():
    with pytest.raises(deadbolt.UsageError) as e:
        deadbolt.connect("nosuch://x")
    assert "redis://" in str(e.value)
    with pytest.raises(deadbolt.UsageError):
        deadbolt.connect("redis://127.0.0.1:6379?bogus=1")
    from conftest import free_port
    with pytest.raises(deadbolt.ConnectionError) as e:
        deadbolt.connect(f"redis://127.0.0.1:{free_port()}", connect_timeout=1)
    assert e.value.code == "connect_failed" and e.value.retryable
    assert isinstance(e.value, ConnectionError)


def test_ctrl_c_stops_a_wait_and_leaves_nothing_behind(client, redis_server, name):
    holder = client.mutex(name)
    holder.acquire()
    ctrl_c_ends_the_wait(f"import deadbolt\nm = deadbolt.connect({redis_server.url!r}).mutex({name!r})",
                         "m.acquire()")
    holder.release()
    # The interrupted waiter does not take the lock afterwards.
    time.sleep(0.5)
    assert not client.status(name)["held"]


def test_an_rwlock_lets_readers_share_and_keeps_the_writer_out(client, name):
    rw = client.rwlock(name)
    with rw.read() as r1:
        other = client.rwlock(name)
        r2 = other.read().acquire(timeout=5)
        assert r1.held and r2.held
        other.read().release()
        with pytest.raises(deadbolt.NotAcquired):
            other.write().acquire(timeout=0.2)
    with rw.write() as w:
        assert w.fence > 0


def test_a_multi_lock_holds_every_name_with_a_fence_each(client, name):
    names = [name + ":a", name + ":b"]
    with client.multi_lock(names) as lease:
        assert [n for n, _ in lease.fences] == names
        assert all(f > 0 for _, f in lease.fences)
        assert client.mutex(names[1]).try_acquire() is None


def test_an_election_term_is_a_lease(client, name):
    e = client.election(name)
    term = e.campaign("node-1", timeout=5)
    assert term.fence > 0 and e.leader()["value"] == "node-1"
    term.release()
    assert not e.leader()["elected"]


def test_fenced_writes_refuse_a_stale_fence(client, name):
    key = name + ":data"
    accepted, highest, _, _ = client.fenced_set(key, b"new", 7)
    assert accepted and highest == 7
    accepted, _, _, stale = client.fenced_set(key, b"old", 3)
    assert not accepted and stale
    assert client.fenced_get(key)[0] == b"new"


def test_a_redis_user_loads_redis_alone(redis_server):
    """The module links the core and loads an engine's library at its URL's first connect."""
    code = ("import deadbolt\n"
            f"deadbolt.connect('{redis_server.url}').mutex('x').try_acquire()\n"
            "maps = open('/proc/self/maps').read()\n"
            "print('libdeadbolt_redis' in maps, 'libdeadbolt_etcd' in maps, 'grpc' in maps)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "False", "False"], out.stderr
