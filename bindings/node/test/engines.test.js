'use strict';
// The binding is engine-neutral: the same calls on the engine DEADBOLT_TEST_ENGINE names
// (file, memory, or a real server of deadbolt-test-server's: etcd, zookeeper, postgres,
// mariadb, memcached).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { deadbolt, startServer, uniqueName, runNode, sleep } = require('./helpers.js');

const engine = process.env.DEADBOLT_TEST_ENGINE || 'memory';
let server;
let dir;
let url;
let client;
let other;

before(async () => {
  if (engine === 'memory') {
    url = 'memory://node-tests';
  } else if (engine === 'file') {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deadbolt-node-file-'));
    url = `file://${dir}`;
  } else {
    server = await startServer(engine);
    url = server.url;
  }
  client = await deadbolt.connect(url);
  other = await deadbolt.connect(url);
});
after(async () => {
  if (server) await server.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test(`${engine}: a lock excludes another client and its fences grow`, async () => {
  const name = uniqueName();
  const a = await client.mutex(name, { ttl: 10000 }).acquire();
  assert.ok(a.fence > 0);
  assert.equal(await other.mutex(name).tryAcquire(), null);
  await assert.rejects(other.mutex(name).acquire({ timeout: 200 }), deadbolt.NotAcquiredError);
  assert.equal((await other.status(name)).held, true);
  await a.release();
  const b = await other.mutex(name).acquire({ timeout: 5000 });
  assert.ok(b.fence > a.fence);
  await b.release();
  assert.equal((await client.status(name)).held, false);
});

test(`${engine}: a waiter gets the lock at the release, and the event loop runs meanwhile`, async () => {
  const name = uniqueName();
  const held = await client.mutex(name, { ttl: 10000 }).acquire();
  const waiting = other.mutex(name, { ttl: 10000 }).acquire({ timeout: 20000 });
  let ticks = 0;
  const ticker = setInterval(() => { ticks += 1; }, 10);
  await sleep(500);
  clearInterval(ticker);
  assert.ok(ticks >= 10, `${ticks} ticks in 0.5 s`);
  await held.release();
  const lease = await waiting;
  assert.ok(lease.fence > held.fence);
  await lease.release();
});

test(`${engine}: an AbortSignal ends a wait`, async () => {
  const name = uniqueName();
  const held = await client.mutex(name).acquire();
  const ac = new AbortController();
  const waiting = other.mutex(name).acquire({ signal: ac.signal });
  await sleep(100);
  ac.abort();
  await assert.rejects(waiting, (e) => e.name === 'AbortError');
  await held.release();
  const again = await other.mutex(name).acquire({ timeout: 5000 });
  await again.release();
});

test(`${engine}: using() in another process waits for this one's holder`, { skip: engine === 'memory' }, async () => {
  const name = uniqueName();
  const held = await client.mutex(name).acquire();
  const child = runNode(`
    const d = require(process.env.DEADBOLT_PACKAGE);
    (async () => {
      const c = await d.connect(process.argv[1]);
      const m = c.mutex(process.argv[2]);
      console.log((await m.tryAcquire()) === null ? 'busy' : 'free');
      await m.using(async () => console.log('got'), { timeout: 20000 });
    })().catch((e) => { console.error(e); process.exit(1); });`, [url, name],
  {}, (line) => { if (line === 'busy') held.release(); });
  const r = await child;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'busy\ngot\n');
  assert.equal(held.held, false);
});

test(`${engine}: a lock force-unlocked by another client is lost to its holder, and said so`, async () => {
  const name = uniqueName();
  const seen = [];
  const lease = await client.mutex(name, { ttl: 10000, onLost: (n) => seen.push(n) }).acquire();
  await other.forceUnlock(name);
  // The engines that watch the key tell at once; the others at the next renewal: ask now.
  await assert.rejects(lease.extend(10000), deadbolt.LockLostError);
  for (let i = 0; i < 100 && !lease.signal.aborted; ++i) await sleep(20);
  assert.ok(lease.lost);
  assert.ok(lease.signal.reason instanceof deadbolt.LockLostError);
  assert.deepEqual(seen, [name]);
  await assert.rejects(lease.release(), deadbolt.LockLostError);
});
