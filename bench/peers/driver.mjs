// What the Node.js peers of the bench driver share (redlock.mjs, deadbolt_node.mjs): the
// driver's options, clocks, and the cycle and contend loops around a peer's own lock, which
// print one JSON object as the driver's contenders do.
import Redis from "ioredis";

export const args = Object.fromEntries(
  process.argv.slice(3).reduce((acc, v, i, all) => (i % 2 ? acc : [...acc, [v.replace(/^--/, ""), all[i + 1]]]), [])
);
export const scenario = process.argv[2];
export const port = Number(args.port ?? 6379);
export const threads = Number(args.threads ?? 1);
export const id = Number(args.id ?? 0);
export const key = args.key ?? "bench";
export const now = () => process.hrtime.bigint();
export const until = args["until-ns"] ? BigInt(args["until-ns"]) : now() + BigInt(Math.round(Number(args.seconds ?? 3) * 1e9));
export const remainingMs = () => Number(until - now()) / 1e6;
export const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
export const pct = (v, p) => { const s = [...v].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : 0; };

// `threads` loops in flight, each running cycle(t) (take and give back its own lock) until
// the end of the run.
export async function cycles(cycle) {
  const lat = [];
  const start = now(), c0 = cpu();
  await Promise.all([...Array(threads).keys()].map(async (t) => {
    while (now() < until) {
      const t0 = now();
      await cycle(t);
      lat.push(Number(now() - t0) / 1000);
    }
  }));
  const el = Number(now() - start) / 1e9;
  return { cycles: lat.length, cycles_per_s: lat.length / el, p50_us: pct(lat, 0.5), p99_us: pct(lat, 0.99), cpu_s: cpu() - c0 };
}

// From --start-ns (all processes at once) until the end: take() the lock (a holder, or null
// when not acquired), read-modify-write the shared counter, release(holder); each holding's
// (invoked, got, released) times go out as the driver's events.
export async function contend(take, release) {
  const data = new Redis({ port });
  const start = args["start-ns"] ? BigInt(args["start-ns"]) : now();
  await new Promise((r) => setTimeout(r, Math.max(0, Number(start - now()) / 1e6)));
  const events = [];
  let failures = 0;
  const c0 = cpu();
  while (now() < until) {
    const inv = now();
    const holder = await take();
    if (holder === null) {
      failures++;
      continue;
    }
    const got = now();
    await data.set(`${key}:counter`, Number((await data.get(`${key}:counter`)) ?? 0) + 1);
    const rel = now();
    await release(holder);
    events.push([inv.toString(), got.toString(), rel.toString()]);
  }
  data.disconnect();
  return { id, failures, cpu_s: cpu() - c0, events };
}

// Prints out (its events as the driver's arrays) and exits once the pipe took it all (a
// pipe write is asynchronous in Node).
export function finish(out) {
  const { events, ...rest } = out;
  let text = JSON.stringify(events ? { ...rest, events: "EVENTS" } : rest);
  if (events) text = text.replace('"EVENTS"', "[" + events.map((e) => `[${e.join(",")}]`).join(",") + "]");
  process.stdout.write(text + "\n", () => process.exit(0));
}
