// node-redlock (npm redlock@5.0.0-beta.2 with ioredis, pinned in package-lock.json) under the
// bench driver's scenarios and options: cycle, contend, wait; one JSON object on stdout.
// --retry default | busy  (busy = retryCount -1, retryDelay 1, retryJitter 0)
import { readFileSync } from "node:fs";
import Redis from "ioredis";
import Redlock from "redlock";
import { args, contend, cpu, cycles, finish, key, now, port, remainingMs, scenario, until, id } from "./driver.mjs";

const clients = Number(args.clients ?? 1);
const busy = args.retry === "busy";
const settings = busy ? { retryCount: -1, retryDelay: 1, retryJitter: 0 } : {};
// Redlock retries a fixed number of times; to honour the run's deadline, cap that count.
const retriesLeft = () => Math.max(0, Math.floor(remainingMs() / (busy ? 1.2 : 300)));
const version = (pkg) => JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url))).version;
const versions = { version: version("redlock"), ioredis: version("ioredis") };

if (scenario === "cycle") {
  // --ports p1,p2,p3: Redlock over those independent nodes (as deadbolt's redlock://).
  const nodes = (args.ports ? args.ports.split(",").map(Number) : [port]).map((p) => new Redis({ port: p }));
  const redlock = new Redlock(nodes, settings);
  const out = await cycles(async (t) => {
    const lock = await redlock.acquire([`${key}:${id}:${t}`], 30000);
    await lock.release();
  });
  nodes.forEach((n) => n.disconnect());
  finish({ ...out, ...versions });
} else if (scenario === "contend") {
  const redis = new Redis({ port });
  const redlock = new Redlock([redis], settings);
  const out = await contend(async () => {
    try {
      return await redlock.acquire([key], 30000, busy ? { retryCount: Math.max(1, Math.floor(remainingMs() / 1.2)) } : {});
    } catch (e) {
      return null;
    }
  }, (lock) => lock.release());
  redis.disconnect();
  finish({ ...out, ...versions });
} else if (scenario === "wait") {
  const conns = [...Array(clients).keys()].map(() => new Redis({ port }));
  let acquired = 0;
  const c0 = cpu();
  await Promise.all(conns.map(async (redis) => {
    const redlock = new Redlock([redis], settings);
    while (now() < until) {
      try {
        const lock = await redlock.acquire([key], 30000, { retryCount: retriesLeft() });
        acquired++;
        await lock.release();
        return;
      } catch (e) { /* the user's loop: try again until the deadline */ }
    }
  }));
  conns.forEach((c) => c.disconnect());
  finish({ clients, acquired, cpu_s: cpu() - c0, ...versions });
} else {
  console.error(`redlock.mjs: no scenario ${scenario}`);
  process.exit(64);
}
