"""deadbolt: distributed locks with fencing tokens on Redis, etcd, ZooKeeper, PostgreSQL,
MariaDB and more, for Python.

    import deadbolt
    client = deadbolt.connect("redis://localhost:6379")
    with client.mutex("orders:42", ttl=30) as lease:
        write(order, fence=lease.fence)       # the fence is enforced by the resource

    async with client.mutex("orders:42") as lease:   # asyncio: the loop is never blocked
        ...

Waiting never polls the server (a release or expiry wakes the waiter), the GIL is released
while deadbolt waits or talks to the engine, and a lease is renewed in the background until
it is released. A lost lease is never silent: ``lease.lost`` turns true, ``on_lost`` is
called, and leaving a ``with`` block whose lease was lost raises ``LockLost``.

Times are seconds (floats). ``Lease.valid_until`` is on the ``time.monotonic()`` clock.
"""

import asyncio
import atexit
import contextlib
import contextvars
import weakref

from . import _deadbolt as _native
from .errors import (Cancelled, ConnectionError, Error, LockError, LockLost, NotAcquired,
                     ServerError, UsageError)

__all__ = ["connect", "url_forms", "Client", "Lock", "RWLock", "Election", "Semaphore",
           "ReentrantMutex", "Lease", "Error",
           "UsageError", "ConnectionError", "ServerError", "LockError", "NotAcquired",
           "LockLost", "Cancelled"]

Lease = _native.Lease
atexit.register(_native._shutdown)


def connect(url, **options):
    """Connects now to the engine url's scheme names (a wrong password or a dead server is
    reported here). Options: connect_timeout, command_timeout (seconds), key_prefix,
    username, password, keepalive, tls_ca_file, tls_cert_file, tls_key_file, tls_sni,
    tls_verify. Raises UsageError for a bad URL or option, ConnectionError, ServerError."""
    return Client(_native.Client.connect(url, options))


def url_forms():
    """How the URLs of the engines in this build look, one entry per engine."""
    return _native.Client.url_forms()


class Client:
    """A connection to one engine and the factory of its locks. Thread-safe; share one per
    process."""

    def __init__(self, native):
        self._c = native

    def mutex(self, name, **options):
        """An exclusive lock on name (str or bytes). Options: ttl (30 s), auto_renew,
        renew_every, max_hold, lock_delay, wait_jitter, handoff_grace, waiter_ttl, on_lost
        (called as on_lost(name, error) once a lease is lost; on the asyncio loop for a
        lease taken with ``async with``, else on deadbolt's callback thread)."""
        return Lock(self._c, name, "exclusive", options)

    def fair_mutex(self, name, **options):
        """A lock granted in the order its waiters asked, across processes."""
        return Lock(self._c, name, "fair", options)

    def rwlock(self, name, **options):
        """A readers-writer lock: ``.read()`` and ``.write()`` are its two Locks."""
        return RWLock(self._c, name, options)

    def multi_lock(self, names, **options):
        """One lock over several names, taken all together or not at all; the lease has one
        fence per name (``lease.fences``)."""
        return Lock(self._c, list(names), "all", options)

    def semaphore(self, name, permits, **options):
        """At most permits holders of name at once, across processes; each permit is a Lease
        (renewed while held; its token is the permit's id, which any process may release)."""
        return Semaphore(_native.semaphore(self._c, name, permits, options))

    def reentrant_mutex(self, name, owner="", **options):
        """A lock its owner may take again (owner: this client and the calling thread unless
        given); it is free once released as often as taken."""
        return ReentrantMutex(_native.reentrant_mutex(self._c, name, options, owner))

    def latch(self, name):
        """A countdown latch: try_set_count(n), count_down(), count(), wait(timeout)."""
        return _native.latch(self._c, name)

    def rate_limiter(self, name, rate, per=1.0, burst=None):
        """A token bucket of rate tokens every per seconds (burst at most at once; default
        rate): try_acquire(n) -> (allowed, retry_in seconds), acquire(n, timeout) -> bool,
        available()."""
        return _native.rate_limiter(self._c, name, rate, per, rate if burst is None else burst)

    def election(self, name, **options):
        """A leader election under name; a term is a lease (its fence is the term)."""
        return Election(self._c, name, options)

    def status(self, name):
        """The lock's state on the server now, as a dict (held, kind, ttl, holders, ...)."""
        return self._c.status(name)

    def list(self, pattern="*", include_foreign=False):
        """The held locks whose names match the glob, as (name, status) pairs."""
        return self._c.list(pattern, include_foreign)

    def force_unlock(self, name):
        """Frees name whatever holds it (an operator's tool); its holder learns of the loss.
        Returns what held it ("mutex", "readers", ...) or "free"."""
        return self._c.force_unlock(name)

    def fenced_set(self, key, value, fence):
        """Writes value only if fence >= the highest fence key has seen. Returns
        (accepted, highest, version, stale_fence)."""
        return self._c.fenced_set(key, value, fence)

    def fenced_get(self, key):
        """(value as bytes or None, version), for fenced_cas."""
        return self._c.fenced_get(key)

    def fenced_cas(self, key, value, fence, version):
        """fenced_set that also requires no fenced write since the read of version."""
        return self._c.fenced_cas(key, value, fence, version)

    def ping(self):
        """One round trip; raises ConnectionError when the server does not answer."""
        self._c.ping()

    def lock_key(self, name):
        """The key name is kept under (prefix + name), for other tools."""
        return self._c.lock_key(name)

    @property
    def warnings(self):
        """What connect() found legal but weak."""
        return self._c.warnings


class Lock:
    """A lock on a name (or names). ``with lock as lease`` and ``async with lock as lease``
    hold it for the block; ``acquire()`` / ``release()`` do it by hand. One holding per
    thread or asyncio task at a time: the lease is kept in the caller's context, so threads
    and tasks may share one Lock object and each waits its turn."""

    def __init__(self, native, name, mode, options, value=""):
        self._c = native
        self.name = name
        self._mode = mode
        self._options = options
        self._value = value
        self._request = native.request(name, mode, options, value)  # refuses bad options now
        self._held = contextvars.ContextVar("deadbolt.Lock", default=None)

    def _check_free(self):
        if self._held.get() is not None:
            raise UsageError(f"{self.name!r} is already held in this thread or task "
                             "(deadbolt's Lock is not reentrant)", "invalid_argument")

    def _take(self, lease):
        self._held.set(lease)
        return lease

    def _give_back(self, required):
        """This context's lease, which it no longer holds; None when it held none, unless
        required (release() without a holding is a UsageError)."""
        lease = self._held.get()
        if lease is None and required:
            raise UsageError(f"{self.name!r} is not held in this thread or task",
                             "invalid_argument")
        self._held.set(None)
        return lease

    def acquire(self, timeout=None, blocking=True):
        """Waits until the lock is ours (no polling) and returns the Lease; at most timeout
        seconds (None: as long as it takes); blocking=False tries once. Raises NotAcquired
        when the time is up, ConnectionError / ServerError when the engine cannot be used."""
        self._check_free()
        if not blocking:
            timeout = 0
        return self._take(self._request.acquire(timeout))

    def try_acquire(self):
        """One attempt: the Lease, or None when someone else holds the lock."""
        try:
            return self.acquire(blocking=False)
        except NotAcquired:
            return None

    def release(self):
        """Releases this context's holding. Raises LockLost when the lease was no longer ours
        (expired, deleted, taken), ConnectionError when the reply was lost, UsageError when
        this context holds nothing."""
        self._give_back(required=True).release()

    @property
    def lease(self):
        """This context's Lease, or None."""
        return self._held.get()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, exc_type, exc, tb):
        lease = self._give_back(required=False)
        if lease is not None:
            with _loss_raised_unless(exc_type):
                lease.release()

    async def acquire_async(self, timeout=None):
        """acquire() for asyncio: waits on deadbolt's event loop, never blocking this one.
        Cancelling the task cancels the wait (a lease got meanwhile is released)."""
        self._check_free()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        request = self._request
        on_lost = self._options.get("on_lost")
        if on_lost is not None:  # called on this loop
            request = self._c.request(self.name, self._mode,
                                      dict(self._options, on_lost=_on_loop(loop, on_lost)),
                                      self._value)
        q = _completions(loop)
        pending = request.start(timeout, q, fut)
        _flush_soon(loop, q)
        try:
            lease = await fut
        except asyncio.CancelledError:
            pending.cancel()
            raise
        return self._take(lease)

    async def release_async(self):
        """release() for asyncio; raises as release() does."""
        await _release_async(self._give_back(required=True))

    async def __aenter__(self):
        return await self.acquire_async()

    async def __aexit__(self, exc_type, exc, tb):
        lease = self._give_back(required=False)
        if lease is not None:
            with _loss_raised_unless(exc_type):
                await _release_async(lease)


class Semaphore:
    """Permits across processes. ``with sem as permit`` holds one for the block."""

    def __init__(self, native):
        self._s = native
        self._held = contextvars.ContextVar("deadbolt.Semaphore", default=())
        self._blocks = contextvars.ContextVar("deadbolt.Semaphore.with", default=())

    def acquire(self, timeout=None):
        """Waits for a permit (no polling) and returns it (a Lease); NotAcquired when timeout
        seconds pass. Ctrl-C on the main thread ends the wait."""
        permit = self._s.acquire(timeout)
        self._held.set(self._held.get() + (permit,))
        return permit

    def try_acquire(self):
        """A permit, or None when none is free."""
        permit = self._s.try_acquire()
        if permit is not None:
            self._held.set(self._held.get() + (permit,))
        return permit

    def release(self, permit=None):
        """Releases permit (default: the last this thread or task took). Raises LockLost when
        it was no longer held."""
        held = self._held.get()
        if permit is None:
            if not held:
                raise UsageError("this thread or task holds no permit", "invalid_argument")
            permit = held[-1]
        self._held.set(tuple(p for p in held if p is not permit))
        permit.release()

    def release_id(self, permit_id):
        """Releases the permit with this id, whoever holds it; False when none is held."""
        return self._s.release_id(permit_id)

    def available(self):
        """Permits free on the server now."""
        return self._s.available()

    @property
    def permits(self):
        return self._s.permits

    def __enter__(self):
        permit = self.acquire()
        self._blocks.set(self._blocks.get() + (permit,))
        return permit

    def __exit__(self, exc_type, exc, tb):
        blocks = self._blocks.get()
        self._blocks.set(blocks[:-1])
        with _loss_raised_unless(exc_type):
            self.release(blocks[-1])


class ReentrantMutex:
    """A lock its owner may take again; ``with`` works at any depth."""

    def __init__(self, native):
        self._m = native

    def acquire(self, timeout=None):
        """Takes the lock (again, when this owner holds it); NotAcquired when timeout seconds
        pass."""
        if not self._m.acquire(timeout):
            raise NotAcquired(f"the reentrant lock is held by another owner ({timeout} s)",
                              "not_acquired")

    def release(self):
        """Gives one hold back; the lock is free after the last."""
        self._m.release()

    @property
    def hold_count(self):
        return self._m.hold_count

    @property
    def fence(self):
        return self._m.fence

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.release()


class RWLock:
    """A readers-writer lock: many readers or one writer."""

    def __init__(self, native, name, options):
        self.name = name
        self._read = Lock(native, name, "shared", options)
        self._write = Lock(native, name, "write", options)

    def read(self):
        """The shared side (its leases have fence 0)."""
        return self._read

    def write(self):
        """The exclusive side."""
        return self._write


class Election:
    """A leader election: campaign() waits until this client leads; the term is a Lease
    (fence = term number) and releasing it resigns."""

    def __init__(self, native, name, options):
        self._c = native
        self.name = name
        self._options = options

    def campaign(self, value, timeout=None):
        """Waits until this client leads with value; returns the term's Lease."""
        return self._c.request(self.name, "campaign", self._options, value).acquire(timeout)

    async def campaign_async(self, value, timeout=None):
        """campaign() for asyncio."""
        return await Lock(self._c, self.name, "campaign", self._options, value).acquire_async(
            timeout)

    def leader(self):
        """Who leads now: the status dict's value and ttl."""
        s = self._c.status(self.name)
        return {"elected": s["held"], "value": s["value"], "ttl": s["ttl"]}


@contextlib.contextmanager
def _loss_raised_unless(failing):
    """At a with-block's end: a LockLost from giving the lease back is raised, unless the
    block failed already (its own exception is the one to see)."""
    try:
        yield
    except LockLost:
        if not failing:
            raise


# asyncio: each loop gets a queue that deadbolt's event loop fills and that this loop drains
# when its eventfd is readable, so neither loop waits for the other.
_queues = weakref.WeakKeyDictionary()


def _completions(loop):
    q = _queues.get(loop)
    if q is None:
        q = _native.Completions()
        _queues[loop] = q
        loop.add_reader(q.fileno(), _deliver, q)
    return q


_flushing = set()


def _flush_soon(loop, q):
    """Hands this turn's starts to deadbolt's loop together, once this turn's callbacks ran."""
    if q not in _flushing:
        _flushing.add(q)
        loop.call_soon(_flush, q)


def _flush(q):
    _flushing.discard(q)
    q.flush()


def _deliver(q):
    for fut, exc, lease in q.drain():
        if fut.cancelled():
            if lease is not None:
                lease.release_in_background()
        elif exc is not None:
            fut.set_exception(exc)
        else:
            fut.set_result(lease)


async def _release_async(lease):
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    q = _completions(loop)
    lease.start_release(q, fut)
    _flush_soon(loop, q)
    await fut


def _on_loop(loop, callback):
    def call(name, error):
        if not loop.is_closed():
            loop.call_soon_threadsafe(callback, name, error)
    return call
