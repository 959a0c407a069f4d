'use strict';
// deadbolt for Node.js: distributed locks with fencing tokens over the C++ library. Every call
// that talks to the engine returns a promise; waiting happens on deadbolt's own threads, never
// on the event loop, and never polls the engine. Times are milliseconds.
const native = require('./native.js');
const errors = require('./errors.js');

const { UsageError, LockLostError, NotAcquiredError, CancelledError } = errors;
const asyncDispose = Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose');

// The locks whose leases may be lost, by request id; weak, so a lock nobody holds can go.
const locks = new Map();
const forgetLock = new FinalizationRegistry((id) => locks.delete(id));
let lastRequest = 0;
let lastWait = 0;

native.setup({
  makeError: errors.makeError,
  lost(id, name, error) {
    locks.get(id)?.deref()?._lost(name, error);
  },
});

// The native acquisitions and releases of one turn go to deadbolt's event loop together, at
// its end (a microtask): one wake of that thread for all of them.
let flushing = false;
function flushSoon() {
  if (flushing) return;
  flushing = true;
  queueMicrotask(() => {
    flushing = false;
    native.flush();
  });
}

// Runs start(waitId) with signal's abort cancelling the wait it started; a cancelled wait
// rejects with signal.reason, as Node's own APIs do. Every wait has an id, signal or not: the
// environment's end (a worker terminated) cancels them all.
async function cancellable(signal, start, cancel) {
  if (signal && !(signal instanceof AbortSignal)) {
    throw new UsageError('signal must be an AbortSignal');
  }
  if (signal) signal.throwIfAborted();
  lastWait = lastWait >= 0xfffffffe ? 1 : lastWait + 1; // a native uint32, never 0
  const id = lastWait;
  if (!signal) return start(id);
  const onAbort = () => cancel(id);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await start(id);
  } catch (e) {
    throw e instanceof CancelledError && signal.aborted ? signal.reason : e;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function waitOptions(options, what) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object') throw new UsageError(`${what}'s options must be an object`);
  for (const key of Object.keys(options)) {
    if (key !== 'timeout' && key !== 'signal') {
      throw new UsageError(`unknown option '${key}' of ${what} (the options are: timeout, signal)`);
    }
  }
  return options;
}

/** One holding of a lock. Release it (or let `using` do it); if it is lost meanwhile,
 *  `lost` turns true and `signal` aborts with a LockLostError. */
class Lease {
  #native;
  #lock;
  #controller = null; // made when signal is first asked for (most leases never are)
  #reason; // the loss, once known

  constructor(nativeLease, lock) {
    this.#native = nativeLease;
    this.#lock = lock;
  }

  /** The lock's name (a Buffer when it is not valid UTF-8). */
  get name() { return this.#native.name; }
  /** The owner token stored on the engine. */
  get token() { return this.#native.token; }
  /** The fencing token: greater than every earlier holding's of this name. */
  get fence() { return this.#native.fence; }
  /** Every name this lease holds with its fence (a multiLock's, in the order given). */
  get fences() { return this.#native.fences; }
  /** Until then (on performance.now()'s clock) this process may trust it holds the lock. */
  get validUntil() { return performance.now() + this.#native.remaining; }
  /** Held and within its validity. */
  get valid() { return this.#native.valid; }
  /** The engine told us (or a renewal found) that it is no longer ours. */
  get lost() { return this.#native.lost; }
  /** Not released and not lost. */
  get held() { return this.#native.held; }
  /** Aborts (with a LockLostError as its reason) when this lease is lost. */
  get signal() {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Releases the lock. Rejects with LockLostError when it was no longer ours, with
   *  ConnectionError when the reply was lost (it is then released in the background). */
  async release() {
    try {
      const p = this.#native.release();
      flushSoon();
      await p;
    } finally {
      this.#lock._forget(this);
    }
  }

  /** Sets the lease's time to live to ttl ms from now. Rejects with LockLostError when it is
   *  no longer ours. */
  extend(ttl) { return this.#native.extend(ttl); }
  /** Asks the engine whether this lease still holds the lock. */
  isCurrent() { return this.#native.isCurrent(); }
  /** Writes key = value only while this lease holds the lock (one atomic step on the
   *  engine); resolves whether it wrote. */
  putIfCurrent(key, value) { return this.#native.putIfCurrent(key, value); }
  /** `await using lease = await lock.acquire()` releases at the end of the block. */
  [asyncDispose]() { return this.held ? this.release() : Promise.resolve(); }

  _isLost(error) {
    if (!this.#native.lost) return false;
    if (this.#reason === undefined) {
      this.#reason = error;
      this.#controller?.abort(error);
    }
    return true;
  }

  // The loss's reason, aborting the signal now if the engine's word has not arrived yet (the
  // native lease turns lost before the notice reaches the event loop).
  _lostReason() {
    this._isLost(new LockLostError(`the lease on '${this.name}' was lost`, 'not_owner', false));
    return this.#reason;
  }
}

/** A lock of one kind on one name (or names): acquire() as often as needed. */
class Lock {
  #native;
  #onLost;
  #leases = new Set(); // WeakRefs of the leases it handed out and that are not released

  // open(options, requestId) makes the native side: a request, or a semaphore (both acquire
  // and cancel alike).
  constructor(name, options, open) {
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw new UsageError('options must be an object');
    }
    const id = ++lastRequest;
    this.name = name;
    this.#onLost = options?.onLost;
    this.#native = open(options ?? {}, id);
    locks.set(id, new WeakRef(this));
    forgetLock.register(this, id);
  }

  get _native() { return this.#native; }

  /** Waits for the lock (at most `timeout` ms; until `signal` aborts) and resolves with its
   *  Lease. Rejects with NotAcquiredError at the timeout, signal.reason when aborted, and
   *  ConnectionError, ServerError or UsageError as the engine's answer says. */
  async acquire(options) {
    const { timeout, signal } = waitOptions(options, 'acquire');
    const n = await cancellable(signal, (id) => {
      const p = this.#native.acquire(timeout, id);
      flushSoon();
      return p;
    }, (id) => this.#native.cancel(id));
    if (signal?.aborted) { // granted as the abort came: the caller has given up on it
      n.release().catch(() => {});
      flushSoon();
      throw signal.reason;
    }
    const lease = new Lease(n, this);
    if (n.lost) lease._lostReason(); // lost before it reached us: its signal says so at once
    if (this.#leases.size > 64) for (const r of this.#leases) if (!r.deref()) this.#leases.delete(r);
    this.#leases.add(new WeakRef(lease));
    return lease;
  }

  /** One attempt: the Lease, or null when someone else holds the lock. */
  async tryAcquire() {
    try {
      return await this.acquire({ timeout: 0 });
    } catch (e) {
      if (e instanceof NotAcquiredError) return null;
      throw e;
    }
  }

  /** Runs fn(signal, lease) holding the lock and releases it after, however fn ends. If the
   *  lease was lost meanwhile (signal aborts then) and fn did not throw, rejects with
   *  LockLostError after fn ends. */
  async using(fn, options) {
    const lease = await this.acquire(options);
    let result;
    try {
      result = await fn(lease.signal, lease);
    } catch (e) {
      lease.release().catch(() => {});
      throw e;
    }
    if (lease.lost) {
      lease.release().catch(() => {});
      throw lease._lostReason();
    }
    await lease.release();
    return result;
  }

  _forget(lease) {
    for (const r of this.#leases) if (r.deref() === lease || !r.deref()) this.#leases.delete(r);
  }

  _lost(name, error) {
    for (const r of this.#leases) {
      const lease = r.deref();
      if (!lease || lease._isLost(error)) this.#leases.delete(r);
    }
    if (this.#onLost) {
      try {
        this.#onLost(name, error);
      } catch (e) {
        process.nextTick(() => { throw e; });
      }
    }
  }
}

// A Lock over client's request for name in mode.
function requestLock(client, name, mode, options, value) {
  return new Lock(name, options, (o, id) => client._native.request(name, mode, o, id, value));
}

/** Permits across processes: at most `permits` holders of name at once, each holding a Lease
 *  (acquire / tryAcquire / using as a Lock's). */
class Semaphore extends Lock {
  constructor(client, name, permits, options) {
    super(name, options, (o, id) => new native.NativeSemaphore(client._native, name, permits, o, id));
  }
  /** How many the semaphore allows at once. */
  get permits() { return this._native.permits; }
  /** Permits free now (a snapshot). */
  available() { return this._native.available(); }
}

/** A count that processes wait to reach zero. */
class Latch {
  #native;
  constructor(client, name) {
    this.name = name;
    this.#native = new native.NativeLatch(client._native, name);
  }
  /** Sets the count if none is set (resolves whether this call did); it lives `ttl` ms. */
  trySetCount(count, ttl) { return this.#native.trySetCount(count, ttl); }
  /** One down: resolves whether that reached zero. */
  countDown() { return this.#native.countDown(); }
  count() { return this.#native.count(); }
  /** Waits for zero (at most `timeout` ms; until `signal` aborts): resolves whether it came. */
  async wait(options) {
    const { timeout, signal } = waitOptions(options, 'wait');
    const zero = await cancellable(signal, (id) => this.#native.wait(timeout, id),
      (id) => this.#native.cancel(id));
    if (!zero && signal?.aborted) throw signal.reason; // the C++ wait ends with false
    return zero;
  }
}

/** A readers-writer lock: any number of readers, or one writer. */
class RWLock {
  constructor(client, name, options) {
    this.name = name;
    this.reader = requestLock(client, name, 'shared', options);
    this.writer = requestLock(client, name, 'write', options);
  }
  read() { return this.reader; }
  write() { return this.writer; }
}

/** A leader election: campaign(value) is a Lock whose lease is the term. */
class Election {
  #client;
  #options;
  constructor(client, name, options) {
    this.#client = client;
    this.#options = options;
    this.name = name;
  }
  campaign(value) { return requestLock(this.#client, this.name, 'campaign', this.#options, value); }
}

/** A token bucket shared by every client of its name: `rate` tokens every `per` ms, at most
 *  `burst` at once. */
class RateLimiter {
  #native;
  constructor(client, name, { rate = 1, per, burst = 1 } = {}) {
    this.name = name;
    this.#native = new native.NativeRateLimiter(client._native, name, rate, per, burst);
  }
  /** Takes n tokens if the bucket has them: resolves {allowed, retryIn, remaining}. */
  tryAcquire(n = 1) { return this.#native.tryAcquire(n); }
  /** Waits until n tokens are taken (sleeping the time the engine says, no polling);
   *  resolves false when `timeout` cannot be met. */
  acquire(n = 1, options) {
    const { timeout, signal } = waitOptions(options, 'acquire');
    return cancellable(signal, (id) => this.#native.acquire(n, timeout, id),
      (id) => this.#native.cancel(id));
  }
  /** Whole tokens in the bucket now. */
  available() { return this.#native.available(); }
}

/** A connection to one engine, chosen by the URL's scheme. */
class Client {
  constructor(nativeClient) {
    this._native = nativeClient;
  }

  /** The URL forms of the engines this build has. */
  static urlForms() { return native.NativeClient.urlForms(); }

  mutex(name, options) { return requestLock(this, name, 'exclusive', options); }
  fairMutex(name, options) { return requestLock(this, name, 'fair', options); }
  rwlock(name, options) { return new RWLock(this, name, options); }
  multiLock(names, options) { return requestLock(this, names, 'all', options); }
  semaphore(name, permits, options) { return new Semaphore(this, name, permits, options); }
  latch(name) { return new Latch(this, name); }
  election(name, options) { return new Election(this, name, options); }
  rateLimiter(name, limit) { return new RateLimiter(this, name, limit); }

  /** Allows one use of key per `window` ms (up to `burst` after a quiet spell), across every
   *  process: resolves {allowed, retryIn, remaining}. */
  async throttle(key, { window, burst = 1 } = {}) {
    if (typeof window !== 'number' || !(window >= 1)) {
      throw new UsageError('throttle needs { window }: the milliseconds one use blocks the ' +
        `next (e.g. { window: 5000 }), not ${window}`);
    }
    return this.rateLimiter(key, { rate: 1, per: window, burst }).tryAcquire();
  }

  /** Runs fn(signal, lease) holding the mutex `name`, as node-redlock's using():
   *  lock options (ttl, ...) and wait options (timeout, signal) in one object. */
  using(name, options, fn) {
    if (typeof options === 'function') [options, fn] = [{}, options];
    const { timeout, signal, ...lockOptions } = options ?? {};
    return this.mutex(name, lockOptions).using(fn, { timeout, signal });
  }

  status(name) { return this._native.status(name); }
  list(pattern = '*', { foreign = false } = {}) { return this._native.list(pattern, foreign); }
  forceUnlock(name) { return this._native.forceUnlock(name); }
  fencedSet(key, value, fence) { return this._native.fencedSet(key, value, fence); }
  fencedCas(key, value, fence, version) { return this._native.fencedCas(key, value, fence, version); }
  fencedGet(key) { return this._native.fencedGet(key); }
  ping() { return this._native.ping(); }
  lockKey(name) { return this._native.lockKey(name); }
  get warnings() { return this._native.warnings(); }
}

/** Connects to the engine url names (redis://, etcd://, zk://, postgresql://, mysql://,
 *  file://, memory://, ... as urlForms() lists). Rejects with UsageError for a bad URL or
 *  option, ConnectionError when the engine cannot be reached. */
async function connect(url, options) {
  return new Client(await native.NativeClient.connect(url, options ?? {}));
}

module.exports = {
  connect, Client, Lock, Lease, RWLock, Election, RateLimiter, Semaphore, Latch,
  urlForms: Client.urlForms,
  ...errors,
};
delete module.exports.makeError;
