"""The asyncio API: async with, cancellation by task cancel, a loop that is never blocked."""

import asyncio
import threading
import time

import pytest

import deadbolt


def run(coro):
    return asyncio.run(coro)


def test_async_with_holds_the_lock_and_releases_it(client, name):
    async def main():
        async with client.mutex(name) as lease:
            assert lease.held and lease.fence > 0
            assert client.status(name)["held"]
        assert not lease.held
    run(main())
    assert not client.status(name)["held"]


def test_tasks_of_one_loop_never_hold_the_lock_together(client, name):
    async def main():
        m = client.mutex(name)
        state = {"n": 0, "inside": 0, "most": 0}

        async def work():
            for _ in range(10):
                async with m:
                    state["inside"] += 1
                    state["most"] = max(state["most"], state["inside"])
                    n = state["n"]
                    await asyncio.sleep(0)
                    state["n"] = n + 1
                    state["inside"] -= 1
        await asyncio.gather(*(work() for _ in range(8)))
        return state
    state = run(main())
    assert state["n"] == 80 and state["most"] == 1


def test_cancelling_a_waiting_task_ends_its_wait_and_leaves_nothing(client, name):
    holder = client.mutex(name)
    holder.acquire()

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)
        t = asyncio.create_task(ticker())
        waiter = asyncio.create_task(client.mutex(name).acquire_async())
        await asyncio.sleep(0.5)
        assert not waiter.done()
        assert ticks > 3  # the loop kept running while the task waited (~50 ticks unloaded)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        t.cancel()
    run(main())
    holder.release()
    time.sleep(0.5)
    assert not client.status(name)["held"]


def test_wait_for_times_out_and_a_timeout_raises_not_acquired(client, name):
    holder = client.mutex(name)
    holder.acquire()

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(client.mutex(name).acquire_async(), 0.3)
        with pytest.raises(deadbolt.NotAcquired):
            await client.mutex(name).acquire_async(timeout=0.2)
    run(main())
    holder.release()
    time.sleep(0.3)
    assert not client.status(name)["held"]


def test_on_lost_runs_on_the_loop_and_the_block_raises_lock_lost(client, redis_py, name):
    async def main():
        seen = asyncio.Event()
        where = []

        def on_lost(n, e):
            where.append((threading.get_ident(), n, type(e)))
            seen.set()
        with pytest.raises(deadbolt.LockLost):
            async with client.mutex(name, ttl=1, on_lost=on_lost) as lease:
                redis_py.delete(client.lock_key(name))
                await asyncio.wait_for(seen.wait(), 10)
                assert lease.lost
        return where
    where = run(main())
    assert where == [(threading.get_ident(), name, deadbolt.LockLost)]
