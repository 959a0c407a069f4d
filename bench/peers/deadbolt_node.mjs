// deadbolt's Node.js binding under the bench driver's scenarios: cycle (--threads async loops
// in flight on one event loop) and contend; one JSON object on stdout, as redlock.mjs. The
// package comes from DEADBOLT_NODE_PACKAGE, its addon from DEADBOLT_NODE_ADDON (default: the
// sources and the build's addon).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import Redis from "ioredis";

const here = path.dirname(fileURLToPath(import.meta.url));
process.env.DEADBOLT_NODE_ADDON ??= path.join(here, "..", "..", "build", "bindings", "node", "deadbolt.node");
const deadbolt = createRequire(import.meta.url)(
  process.env.DEADBOLT_NODE_PACKAGE ?? path.join(here, "..", "..", "bindings", "node", "lib", "index.js"));

const args = Object.fromEntries(
  process.argv.slice(3).reduce((acc, v, i, all) => (i % 2 ? acc : [...acc, [v.replace(/^--/, ""), all[i + 1]]]), [])
);
const scenario = process.argv[2];
const port = Number(args.port ?? 6379);
const threads = Number(args.threads ?? 1);
const id = Number(args.id ?? 0);
const key = args.key ?? "bench";
const until = args["until-ns"] ? BigInt(args["until-ns"]) : process.hrtime.bigint() + BigInt(Math.round(Number(args.seconds ?? 3) * 1e9));
const now = () => process.hrtime.bigint();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : 0; };
const options = args["loop-spin-us"] !== undefined ? { loopSpin: Number(args["loop-spin-us"]) / 1000 } : {};
const client = await deadbolt.connect(`redis://127.0.0.1:${port}`, options);

let out;
if (scenario === "cycle") {
  const lat = [];
  const start = now(), c0 = cpu();
  await Promise.all([...Array(threads).keys()].map(async (t) => {
    const lock = client.mutex(`${key}:${id}:${t}`);
    while (now() < until) {
      const t0 = now();
      const lease = await lock.acquire();
      await lease.release();
      lat.push(Number(now() - t0) / 1000);
    }
  }));
  const el = Number(now() - start) / 1e9;
  out = { cycles: lat.length, cycles_per_s: lat.length / el, p50_us: pct(lat, 0.5), p99_us: pct(lat, 0.99), cpu_s: cpu() - c0 };
} else if (scenario === "contend") {
  const data = new Redis({ port });
  const lock = client.mutex(key);
  const start = args["start-ns"] ? BigInt(args["start-ns"]) : now();
  await new Promise((r) => setTimeout(r, Math.max(0, Number(start - now()) / 1e6)));  // all at once
  const events = [];
  let failures = 0;
  const c0 = cpu();
  while (now() < until) {
    const inv = now();
    let lease;
    try {
      lease = await lock.acquire({ timeout: Math.max(0, Number(until - now()) / 1e6) });
    } catch (e) {
      if (!(e instanceof deadbolt.NotAcquiredError)) throw e;
      failures++;
      continue;
    }
    const got = now();
    await data.set(`${key}:counter`, Number((await data.get(`${key}:counter`)) ?? 0) + 1);
    const rel = now();
    await lease.release();
    events.push([inv.toString(), got.toString(), rel.toString()]);
  }
  data.disconnect();
  out = { id, failures, cpu_s: cpu() - c0, events: "EVENTS" };
  process.stdout.write(JSON.stringify(out).replace('"EVENTS"', "[" + events.map((e) => `[${e.join(",")}]`).join(",") + "]") + "\n",
                       () => process.exit(0));
  await new Promise(() => {});
} else {
  console.error(`deadbolt_node.mjs: no scenario ${scenario}`);
  process.exit(64);
}
process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0));
