// Compiled (not run) by node.types: the declarations cover what the README shows, and a
// wrong use is a type error (the @ts-expect-error lines must each find one).
import * as deadbolt from 'deadbolt';

async function main(): Promise<void> {
  const client = await deadbolt.connect('redis://127.0.0.1:6379', { connectTimeout: 2000 });
  const lock = client.mutex('orders:42', { ttl: 30000, onLost: (name, error) => console.error(name, error.code) });
  const lease: deadbolt.Lease = await lock.acquire({ timeout: 5000, signal: AbortSignal.timeout(10000) });
  const fence: number = lease.fence;
  await client.fencedSet('orders:42:data', 'paid', fence);
  lease.signal.addEventListener('abort', () => console.error(lease.signal.reason));
  await lease.release();
  const maybe: deadbolt.Lease | null = await lock.tryAcquire();
  if (maybe) await maybe[Symbol.asyncDispose]();
  const n: number = await client.using('orders:42', { ttl: 30000, timeout: 1000 }, async (signal, l) => {
    if (signal.aborted) throw new Error('lost');
    return l.fence;
  });
  const r = await client.throttle('submit:user-42', { window: 5000 });
  const retry: number = r.retryIn;
  const w = await client.rwlock('x').write().acquire();
  await w.release();
  try {
    await lock.acquire({ timeout: 0 });
  } catch (e) {
    if (e instanceof deadbolt.NotAcquiredError && e.retryable) console.log(e.code);
  }
  // @ts-expect-error ttl is a number of milliseconds
  client.mutex('x', { ttl: '30s' });
  // @ts-expect-error the option is timeout
  await lock.acquire({ wait: 5 });
  // @ts-expect-error throttle needs its window
  await client.throttle('k', {});
  console.log(n, retry);
}
void main();

async function primitives(client: deadbolt.Client): Promise<void> {
  const permit = await client.semaphore('exports', 4, { ttl: 60000 }).acquire({ timeout: 1000 });
  await permit.release();
  const latch = client.latch('start');
  if (await latch.trySetCount(3)) await latch.wait({ timeout: 5000 });
  // @ts-expect-error a latch's count is a number
  await latch.trySetCount('3');
}
void primitives;
