'use strict';
// The Node.js binding's locks against a real redis-server: exclusion between processes,
// fences, waiting without polling and without blocking the event loop, timeouts, AbortSignal,
// loss seen by the holder, and errors that say what was wrong.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { deadbolt, redisFixture, startRedis, uniqueName, runNode, calls, sleep } = require('./helpers.js');

let server;
let client;
let redis;
let fixture;

before(async () => {
  fixture = await redisFixture();
  ({ server, client, redis } = fixture);
});
after(() => fixture.stop());

test('two processes read-modify-write one counter under the lock and lose nothing', async () => {
  const name = uniqueName();
  const counter = `${name}:counter`;
  const script = `
    const d = require(process.env.DEADBOLT_PACKAGE);
    const Redis = require(${JSON.stringify(require.resolve('ioredis'))});
    (async () => {
      const [url, port, name, counter] = process.argv.slice(1);
      const c = await d.connect(url);
      const r = new Redis(Number(port), '127.0.0.1');
      const lock = c.mutex(name, { ttl: 10000 });
      const fences = [];
      for (let i = 0; i < 60; ++i) {
        await lock.using(async (signal, lease) => {
          const v = Number(await r.get(counter) || 0);
          await r.set(counter, v + 1);
          fences.push([v, lease.fence]);
        });
      }
      r.disconnect();
      console.log(JSON.stringify(fences));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const args = [server.url, String(server.port), name, counter];
  const runs = await Promise.all([runNode(script, args), runNode(script, args)]);
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  assert.equal(Number(await redis.get(counter)), 120);
  // Fences grow in the order the holders held: sorted by the counter value each one read.
  const all = runs.flatMap((r) => JSON.parse(r.stdout)).sort((a, b) => a[0] - b[0]);
  assert.deepEqual(all.map((x) => x[0]), [...Array(120).keys()]);
  for (let i = 1; i < all.length; ++i) assert.ok(all[i][1] > all[i - 1][1]);
});

test('a waiter sends nothing while it waits, keeps the event loop free, and gets the lock at the release', async () => {
  const name = uniqueName();
  const other = await deadbolt.connect(server.url);
  const held = await other.mutex(name).acquire();
  const waiting = client.mutex(name).acquire({ timeout: 20000 });
  await sleep(300); // the waiter has tried once and subscribed
  const before = await calls(redis, 'evalsha') + await calls(redis, 'eval');
  let ticks = 0;
  const ticker = setInterval(() => { ticks += 1; }, 10);
  await sleep(1500);
  clearInterval(ticker);
  const during = await calls(redis, 'evalsha') + await calls(redis, 'eval') - before;
  assert.equal(during, 0, 'the waiter polled the server');
  assert.ok(ticks >= 20, `the event loop ran ${ticks} ticks in 1.5 s of waiting`);
  await held.release();
  const lease = await waiting;
  assert.ok(lease.valid);
  assert.ok(lease.fence > held.fence);
  await lease.release();
});

test('a timeout rejects with NotAcquiredError; tryAcquire resolves null', async () => {
  const name = uniqueName();
  const held = await client.mutex(name).acquire();
  await assert.rejects(client.mutex(name).acquire({ timeout: 200 }), (e) =>
    e instanceof deadbolt.NotAcquiredError && e instanceof deadbolt.LockError &&
    e.code === 'not_acquired');
  assert.equal(await client.mutex(name).tryAcquire(), null);
  await held.release();
  const again = await client.mutex(name).tryAcquire();
  assert.ok(again && again.held);
  await again.release();
  assert.equal(again.held, false);
});

test('an AbortSignal ends a wait with its reason and leaves nothing behind', async () => {
  const name = uniqueName();
  const held = await client.mutex(name).acquire();
  const ac = new AbortController();
  const waiting = client.mutex(name).acquire({ signal: ac.signal });
  await sleep(200);
  ac.abort(new Error('the user went away'));
  await assert.rejects(waiting, /the user went away/);
  await assert.rejects(client.mutex(name).acquire({ signal: AbortSignal.abort() }),
    (e) => e.name === 'AbortError');
  await held.release();
  await sleep(100);
  const s = await client.status(name);
  assert.equal(s.held, false);
  assert.equal(s.waiters, 0);
});

test('a lease deleted on the server aborts its signal, calls onLost, and using() rejects', async () => {
  const name = uniqueName();
  const seen = [];
  const lock = client.mutex(name, { ttl: 30000, onLost: (n, e) => seen.push([n, e]) });
  const result = lock.using(async (signal, lease) => {
    await redis.del(name);
    await lease.extend(30000).catch(() => {}); // the renewal that finds it gone
    while (!signal.aborted) await sleep(20);
    assert.ok(lease.lost);
    assert.ok(signal.reason instanceof deadbolt.LockLostError);
    return 'done';
  });
  await assert.rejects(result, deadbolt.LockLostError);
  assert.equal(seen.length, 1);
  assert.equal(seen[0][0], name);
  assert.ok(seen[0][1] instanceof deadbolt.LockLostError);
});

test('using() releases after the function, also when it throws; asyncDispose releases', async () => {
  const name = uniqueName();
  assert.equal(await client.using(name, { ttl: 5000 }, async (signal, lease) => {
    assert.equal(signal.aborted, false);
    assert.equal((await client.status(name)).held, true);
    return lease.fence > 0;
  }), true);
  assert.equal((await client.status(name)).held, false);
  await assert.rejects(client.using(name, async () => { throw new Error('boom'); }), /boom/);
  await sleep(100);
  assert.equal((await client.status(name)).held, false);
  const lease = await client.mutex(name).acquire();
  await lease[Symbol.asyncDispose || Symbol.for('nodejs.asyncDispose')]();
  assert.equal(lease.held, false);
  assert.equal((await client.status(name)).held, false);
});

test('many concurrent acquisitions of one name in one process never overlap', async () => {
  const name = uniqueName();
  let inside = 0;
  let most = 0;
  const lock = client.mutex(name);
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = 0; i < 10; ++i) {
      await lock.using(async () => {
        inside += 1;
        most = Math.max(most, inside);
        await sleep(1);
        inside -= 1;
      });
    }
  }));
  assert.equal(most, 1);
});

test('readers share, a writer excludes; a multiLock holds every name; an election has one leader', async () => {
  const name = uniqueName();
  const rw = client.rwlock(name);
  const r1 = await rw.read().acquire();
  const r2 = await client.rwlock(name).read().acquire();
  assert.equal(await rw.write().tryAcquire(), null);
  await r1.release();
  await r2.release();
  const w = await rw.write().acquire({ timeout: 5000 });
  assert.ok(w.fence > 0);
  await w.release();

  const names = [uniqueName(), uniqueName()];
  const all = await client.multiLock(names).acquire();
  assert.deepEqual(all.fences.map((f) => f.name), names);
  assert.equal(await client.mutex(names[1]).tryAcquire(), null);
  await all.release();

  const e = uniqueName();
  const term = await client.election(e).campaign('node-a').acquire();
  assert.equal((await client.status(e)).value, 'node-a');
  assert.equal(await client.election(e).campaign('node-b').tryAcquire(), null);
  await term.release();
});

test('fenced writes refuse a stale fence', async () => {
  const key = uniqueName('fenced');
  const name = uniqueName();
  const a = await client.mutex(name).acquire();
  const fa = a.fence;
  await a.release();
  const b = await client.mutex(name).acquire();
  assert.equal((await client.fencedSet(key, 'from b', b.fence)).accepted, true);
  const stale = await client.fencedSet(key, 'from a', fa);
  assert.equal(stale.accepted, false);
  assert.equal(stale.staleFence, true);
  assert.equal((await client.fencedGet(key)).value.toString(), 'from b');
  assert.equal(await b.isCurrent(), true);
  await assert.rejects(b.putIfCurrent(`${key}:plain`, 'v'), /fenced_set/); // not on Redis
  await b.release();
});

test('binary names round-trip as Buffers', async () => {
  const name = Buffer.from([0x6e, 0x00, 0xff, 0xfe]);
  const lease = await client.mutex(name).acquire();
  assert.ok(Buffer.isBuffer(lease.name));
  assert.ok(lease.name.equals(name));
  assert.equal((await client.status(name)).held, true);
  await lease.release();
});

test('bad input is refused with a UsageError that names it', async () => {
  await assert.rejects(client.mutex('').acquire(), (e) =>
    e instanceof deadbolt.UsageError && /empty/.test(e.message));
  await assert.rejects(client.mutex('x'.repeat(1 << 20)).acquire(), deadbolt.UsageError);
  assert.throws(() => client.mutex(42), /name must be a string or a Buffer/);
  assert.throws(() => client.mutex('x', { ttl: -5 }), /ttl must be a number of milliseconds/);
  assert.throws(() => client.mutex('x', { ttl: 'long' }), /ttl must be a number/);
  assert.throws(() => client.mutex('x', { tll: 5 }), /unknown option 'tll'.*ttl/);
  assert.throws(() => client.mutex('x', { autoRenew: 'yes' }), /autoRenew.*true or false/);
  await assert.rejects(client.mutex('x').acquire({ timeout: NaN }), deadbolt.UsageError);
  await assert.rejects(client.mutex('x').acquire({ wait: 5 }), /unknown option 'wait'/);
  await assert.rejects(deadbolt.connect('redis://'), deadbolt.UsageError);
  await assert.rejects(deadbolt.connect('nosuch://x'), (e) =>
    e instanceof deadbolt.UsageError && /redis:\/\//.test(e.message));
  await assert.rejects(deadbolt.connect(server.url, { connectTimeout: -1 }), deadbolt.UsageError);
  await assert.rejects(deadbolt.connect(server.url, { colour: 'red' }), /unknown option 'colour'/);
});

test('a dead server is a retryable ConnectionError that says where', async () => {
  const dead = await startRedis();
  dead.stop();
  await assert.rejects(deadbolt.connect(`redis://127.0.0.1:${dead.port}`), (e) =>
    e instanceof deadbolt.ConnectionError && e.retryable && e.message.includes(String(dead.port)));
});

test('a Redis user loads Redis alone: no gRPC, no other engine', async () => {
  const r = await runNode(`
    const d = require(process.env.DEADBOLT_PACKAGE);
    (async () => {
      const c = await d.connect(process.argv[1]);
      await (await c.mutex('x').acquire()).release();
      const maps = require('node:fs').readFileSync('/proc/self/maps', 'utf8');
      console.log([maps.includes('libdeadbolt_redis'), maps.includes('libdeadbolt_etcd'), maps.includes('grpc')].join(' '));
    })().catch((e) => { console.error(e); process.exit(1); });`, [server.url]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'true false false');
});

test('a semaphore lets `permits` holders in at once; a waiter gets the next freed permit', async () => {
  const name = uniqueName('sem');
  const sem = client.semaphore(name, 2, { ttl: 10000 });
  assert.equal(sem.permits, 2);
  const a = await sem.acquire();
  const b = await client.semaphore(name, 2).acquire();
  assert.equal(await sem.tryAcquire(), null);
  assert.equal(await sem.available(), 0);
  const waiting = sem.acquire({ timeout: 10000 });
  await sleep(200);
  await a.release();
  const c = await waiting;
  assert.ok(c.held);
  const ac = new AbortController();
  const aborted = sem.acquire({ signal: ac.signal });
  await sleep(100);
  ac.abort();
  await assert.rejects(aborted, (e) => e.name === 'AbortError');
  await b.release();
  await c.release();
  assert.equal(await sem.available(), 2);
  assert.throws(() => client.semaphore(name, 0), deadbolt.UsageError);
});

test('a latch releases its waiters when counted down to zero', async () => {
  const name = uniqueName('latch');
  const latch = client.latch(name);
  assert.equal(await latch.trySetCount(2), true);
  assert.equal(await client.latch(name).trySetCount(5), false); // counting already
  assert.equal(await latch.wait({ timeout: 100 }), false);
  const waiting = client.latch(name).wait({ timeout: 10000 });
  assert.equal(await latch.countDown(), false);
  assert.equal(await latch.count(), 1);
  assert.equal(await latch.countDown(), true);
  assert.equal(await waiting, true);
  const other = uniqueName('latch');
  await client.latch(other).trySetCount(1);
  const ac = new AbortController();
  const aborted = client.latch(other).wait({ signal: ac.signal });
  await sleep(100);
  ac.abort();
  await assert.rejects(aborted, (e) => e.name === 'AbortError');
});
