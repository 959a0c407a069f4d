'use strict';
// What happens to a holding or a wait when the JS that owns it goes away: a Lease collected
// while a call of its own still runs, a worker thread terminated while it waits.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const { once } = require('node:events');
const v8 = require('node:v8');
const vm = require('node:vm');
const { redisFixture, packagePath, uniqueName, sleep } = require('./helpers.js');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

let fixture;
let client;
let redis;

before(async () => {
  fixture = await redisFixture();
  ({ client, redis } = fixture);
});
after(() => fixture.stop());

test('a Lease collected while its extend() runs is released after it, not beside it', async () => {
  for (let i = 0; i < 100; ++i) {
    const name = uniqueName();
    const lock = client.mutex(name, { ttl: 10000 });
    let lost = 0;
    lock.onLost = () => { lost += 1; };
    // Nothing keeps the lease but the call: collected as the extension goes out.
    const extended = (await lock.acquire()).extend(20000);
    // A WeakRef's target lives to the end of the job that made it: collect in the next one,
    // and let the finalizers run, while the extension's thread is still starting.
    await new Promise(setImmediate);
    gc();
    await new Promise(setImmediate);
    await extended; // a release that overtook it would reject this with LockLostError
    await sleep(1);
    gc();
    assert.equal(lost, 0, `round ${i}: a loss was reported for a lease nobody lost`);
    // Released once the extension was done: the lock is free again.
    let next = null;
    for (let k = 0; k < 200 && !next; ++k) {
      next = await lock.tryAcquire();
      if (!next) { gc(); await sleep(10); }
    }
    assert.ok(next, `round ${i}: the collected lease was never released`);
    await next.release();
  }
});

test('a worker terminated while it waits leaves no wait running behind it', async () => {
  const name = uniqueName();
  const held = await client.mutex(name).acquire();
  const connections = async () => (await redis.client('LIST')).split('\n').filter(Boolean).length;
  await sleep(100);
  const before = await connections();
  const worker = new Worker(`
    const { parentPort, workerData } = require('node:worker_threads');
    const d = require(workerData.pkg);
    (async () => {
      const c = await d.connect(workerData.url);
      const waiting = c.mutex(workerData.name).acquire();
      parentPort.postMessage('waiting');
      await waiting;
      parentPort.postMessage('granted');
    })();`, { eval: true, workerData: { pkg: packagePath, url: fixture.server.url, name } });
  const [said] = await once(worker, 'message');
  assert.equal(said, 'waiting');
  await sleep(300); // it has tried once and waits in line
  assert.ok(await connections() > before, "the worker's client is not connected");
  await worker.terminate();
  // Its wait is cancelled with its thread, and its client closes: a wait that went on would
  // keep the client, and its connections, for as long as it waits (here: for ever).
  let closed = false;
  for (let k = 0; k < 250 && !closed; ++k) {
    closed = (await connections()) === before;
    if (!closed) await sleep(20);
  }
  assert.ok(closed, "the terminated worker's wait went on after the worker was gone");
  // ...and it left the line as it went, rather than stay there until its waiter_ttl.
  assert.equal(await redis.zcard(`{${name}}:waiters`), 0, "the terminated worker's wait is still in line");
  await held.release();
  const next = await client.mutex(name).acquire({ timeout: 5000 });
  await next.release();
});
