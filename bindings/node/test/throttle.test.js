'use strict';
// The throttle and the rate limiter: a cluster of workers processes each duplicated
// submission once; a limiter's wait sleeps the time the engine names (no polling) and can be
// aborted.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { deadbolt, packagePath, redisFixture, uniqueName, calls, sleep } = require('./helpers.js');

let server;
let client;
let redis;
let fixture;

before(async () => {
  fixture = await redisFixture();
  ({ server, client, redis } = fixture);
});
after(() => fixture.stop());

test('a cluster of 4 workers given the same 25 submissions processes each once', async () => {
  const child = spawn(process.execPath, [path.join(__dirname, 'submissions.js'), server.url, '4', '25'],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, DEADBOLT_PACKAGE: packagePath } });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  const processed = JSON.parse(out);
  assert.equal(Object.keys(processed).length, 25);
  for (const [key, times] of Object.entries(processed)) assert.equal(times, 1, key);
});

test('throttle allows a burst, then says how long to wait', async () => {
  const key = uniqueName('throttle');
  const allowed = [];
  for (let i = 0; i < 4; ++i) allowed.push((await client.throttle(key, { window: 10000, burst: 3 })).allowed);
  assert.deepEqual(allowed, [true, true, true, false]);
  const r = await client.throttle(key, { window: 10000, burst: 3 });
  assert.ok(r.retryIn > 0 && r.retryIn <= 10000);
  await assert.rejects(client.throttle(key, { window: -1 }), (e) =>
    e instanceof deadbolt.UsageError && /window/.test(e.message));
});

test("a limiter's wait sleeps until the tokens refill, without polling, and can be aborted", async () => {
  const name = uniqueName('rate');
  const limiter = client.rateLimiter(name, { rate: 1, per: 1500, burst: 1 });
  assert.equal((await limiter.tryAcquire()).allowed, true);
  const before = await calls(redis, 'evalsha') + await calls(redis, 'eval');
  const started = performance.now();
  assert.equal(await limiter.acquire(1, { timeout: 5000 }), true);
  assert.ok(performance.now() - started >= 1000);
  const sent = await calls(redis, 'evalsha') + await calls(redis, 'eval') - before;
  assert.ok(sent <= 3, `the wait sent ${sent} scripts`);
  assert.equal(await limiter.acquire(1, { timeout: 100 }), false); // cannot refill in time
  const ac = new AbortController();
  const waiting = limiter.acquire(1, { signal: ac.signal });
  await sleep(100);
  ac.abort();
  await assert.rejects(waiting, (e) => e.name === 'AbortError');
  assert.throws(() => client.rateLimiter(name, { rate: 0, per: 1000 }), deadbolt.UsageError);
});
