// node-redlock (npm redlock@5.0.0-beta.2 with ioredis, pinned in package-lock.json) under the
// bench driver's scenarios and options: cycle, contend, wait; one JSON object on stdout.
// --retry default | busy  (busy = retryCount -1, retryDelay 1, retryJitter 0)
import { readFileSync } from "node:fs";
import Redis from "ioredis";
import Redlock from "redlock";

const args = Object.fromEntries(
  process.argv.slice(3).reduce((acc, v, i, all) => (i % 2 ? acc : [...acc, [v.replace(/^--/, ""), all[i + 1]]]), [])
);
const scenario = process.argv[2];
const port = Number(args.port ?? 6379);
const threads = Number(args.threads ?? 1);
const clients = Number(args.clients ?? 1);
const id = Number(args.id ?? 0);
const key = args.key ?? "bench";
const until = args["until-ns"] ? BigInt(args["until-ns"]) : process.hrtime.bigint() + BigInt(Math.round(Number(args.seconds ?? 3) * 1e9));
const busy = args.retry === "busy";
const settings = busy ? { retryCount: -1, retryDelay: 1, retryJitter: 0 } : {};
const now = () => process.hrtime.bigint();
const remainingMs = () => Number(until - now()) / 1e6;
// Redlock retries a fixed number of times; to honour the run's deadline, cap that count.
const retriesLeft = () => Math.max(0, Math.floor(remainingMs() / (busy ? 1.2 : 300)));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : 0; };
const version = (pkg) => JSON.parse(readFileSync(new URL(`./node_modules/${pkg}/package.json`, import.meta.url))).version;

let out;
if (scenario === "cycle") {
  // --ports p1,p2,p3: Redlock over those independent nodes (as deadbolt's redlock://).
  const nodes = (args.ports ? args.ports.split(",").map(Number) : [port]).map((p) => new Redis({ port: p }));
  const redis = { disconnect: () => nodes.forEach((n) => n.disconnect()) };
  const redlock = new Redlock(nodes, settings);
  const lat = [];
  const start = now(), c0 = cpu();
  await Promise.all([...Array(threads).keys()].map(async (t) => {
    while (now() < until) {
      const t0 = now();
      const lock = await redlock.acquire([`${key}:${id}:${t}`], 30000);
      await lock.release();
      lat.push(Number(now() - t0) / 1000);
    }
  }));
  const el = Number(now() - start) / 1e9;
  out = { cycles: lat.length, cycles_per_s: lat.length / el, p50_us: pct(lat, 0.5), p99_us: pct(lat, 0.99), cpu_s: cpu() - c0 };
  redis.disconnect();
} else if (scenario === "contend") {
  const redis = new Redis({ port });
  const data = new Redis({ port });
  const redlock = new Redlock([redis], settings);
  const start = args["start-ns"] ? BigInt(args["start-ns"]) : now();
  await new Promise((r) => setTimeout(r, Math.max(0, Number(start - now()) / 1e6)));  // all at once
  const events = [];
  let failures = 0;
  const c0 = cpu();
  while (now() < until) {
    const inv = now();
    let lock;
    try {
      lock = await redlock.acquire([key], 30000, busy ? { retryCount: Math.max(1, Math.floor(remainingMs() / 1.2)) } : {});
    } catch (e) {
      failures++;
      continue;
    }
    const got = now();
    await data.set(`${key}:counter`, Number((await data.get(`${key}:counter`)) ?? 0) + 1);
    const rel = now();
    await lock.release();
    events.push([inv.toString(), got.toString(), rel.toString()]);
  }
  out = { id, failures, cpu_s: cpu() - c0, events: "EVENTS" };
  const text = JSON.stringify({ ...out, version: version("redlock"), ioredis: version("ioredis") });
  redis.disconnect();
  data.disconnect();
  // Exit only once the pipe took it all: a pipe write is asynchronous in Node.
  process.stdout.write(text.replace('"EVENTS"', "[" + events.map((e) => `[${e.join(",")}]`).join(",") + "]") + "\n",
                       () => process.exit(0));
  await new Promise(() => {});
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
  out = { clients, acquired, cpu_s: cpu() - c0 };
  conns.forEach((c) => c.disconnect());
} else {
  console.error(`redlock.mjs: no scenario ${scenario}`);
  process.exit(64);
}
process.stdout.write(JSON.stringify({ ...out, version: version("redlock"), ioredis: version("ioredis") }) + "\n",
                     () => process.exit(0));
