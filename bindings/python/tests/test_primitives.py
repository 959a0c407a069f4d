"""Semaphores, the latch, the rate limiter and the reentrant mutex from Python."""

import threading

import pytest
from conftest import ctrl_c_ends_the_wait

import deadbolt


def test_a_semaphore_lets_its_permits_in_and_no_more(client, redis_server, name):
    sem = client.semaphore(name, 2)
    with sem as p1:
        p2 = sem.acquire(timeout=5)
        assert p1.token != p2.token and p1.held and p2.held
        other = deadbolt.connect(redis_server.url).semaphore(name, 2)
        assert other.try_acquire() is None
        with pytest.raises(deadbolt.NotAcquired):
            other.acquire(timeout=0.2)
        assert sem.available() == 0
        # Any process may release a permit by its id.
        assert other.release_id(p2.token)
        assert other.try_acquire() is not None
    assert not p1.held


def test_a_latch_opens_when_counted_down_to_zero(client, name):
    latch = client.latch(name)
    assert latch.try_set_count(2)
    assert not latch.try_set_count(5)
    opened = []
    t = threading.Thread(target=lambda: opened.append(latch.wait(timeout=10)))
    t.start()
    assert not latch.wait(timeout=0.1)
    latch.count_down()
    assert latch.count() == 1
    latch.count_down()
    t.join(timeout=10)
    assert opened == [True] and latch.count() == 0


def test_a_rate_limiter_allows_its_burst_then_says_when_to_retry(client, name):
    limiter = client.rate_limiter(name, 2, per=10)
    assert limiter.try_acquire()[0] and limiter.try_acquire()[0]
    allowed, retry_in = limiter.try_acquire()
    assert not allowed and 0 < retry_in <= 10
    assert not limiter.acquire(1, timeout=0.1)


def test_a_reentrant_mutex_is_taken_again_by_its_thread_only(client, redis_server, name):
    rm = client.reentrant_mutex(name)
    with rm:
        with rm:
            assert rm.hold_count == 2 and rm.fence > 0
            other = deadbolt.connect(redis_server.url).reentrant_mutex(name)
            with pytest.raises(deadbolt.NotAcquired):
                other.acquire(timeout=0.2)
        assert rm.hold_count == 1
    assert rm.hold_count == 0
    assert not client.status(name)["held"]


def test_ctrl_c_stops_a_latch_wait(redis_server, name):
    ctrl_c_ends_the_wait(f"import deadbolt\nlatch = deadbolt.connect({redis_server.url!r}).latch({name!r})\n"
                         "latch.try_set_count(1)", "latch.wait()")
