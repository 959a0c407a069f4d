'use strict';
// deadbolt and node-redlock (v5, over ioredis) on the same name, both ways: the same key, and
// each one's holder keeps the other out.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const Redlock = require('redlock').default;
const { deadbolt, redisFixture, uniqueName, sleep } = require('./helpers.js');

let server;
let client;
let redis;
let fixture;
let redlock;

before(async () => {
  fixture = await redisFixture();
  ({ server, client, redis } = fixture);
  redlock = new Redlock([redis], { retryCount: 0 });
});
after(() => fixture.stop());

test('node-redlock cannot take a name deadbolt holds, and can after the release', async () => {
  const name = uniqueName();
  const lease = await client.mutex(name).acquire();
  await assert.rejects(redlock.acquire([name], 5000));
  await lease.release();
  const theirs = await redlock.acquire([name], 5000);
  await theirs.release();
});

test('deadbolt waits out a node-redlock holder', async () => {
  const name = uniqueName();
  const theirs = await redlock.acquire([name], 1000); // held for 1 s, its TTL
  assert.equal(await client.mutex(name).tryAcquire(), null);
  const started = performance.now();
  const lease = await client.mutex(name).acquire({ timeout: 5000 });
  assert.ok(performance.now() - started >= 500);
  assert.ok(lease.valid);
  await lease.release();
  void theirs;
});

test('a node-redlock waiter gets the lock after deadbolt releases', async () => {
  const name = uniqueName();
  const lease = await client.mutex(name).acquire();
  const patient = new Redlock([redis], { retryCount: 1000, retryDelay: 10, retryJitter: 0 });
  let got = false;
  const waiting = patient.acquire([name], 5000).then((l) => { got = true; return l; });
  await sleep(300);
  assert.equal(got, false);
  await lease.release();
  const theirs = await waiting;
  await theirs.release();
});

test('status names a node-redlock holder as a foreign client', async () => {
  const name = uniqueName();
  const theirs = await redlock.acquire([name], 5000);
  const s = await client.status(name);
  assert.equal(s.held, true);
  assert.ok(s.heldBy[0].client.length > 0, JSON.stringify(s));
  await theirs.release();
});
