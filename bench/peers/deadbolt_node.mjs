// deadbolt's Node.js binding under the bench driver's scenarios: cycle (--threads async loops
// in flight on one event loop) and contend; one JSON object on stdout, as redlock.mjs. The
// package comes from DEADBOLT_NODE_PACKAGE, its addon from DEADBOLT_NODE_ADDON (default: the
// sources and the build's addon).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { args, contend, cycles, finish, id, key, port, remainingMs, scenario } from "./driver.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
process.env.DEADBOLT_NODE_ADDON ??= path.join(here, "..", "..", "build", "bindings", "node", "deadbolt.node");
const deadbolt = createRequire(import.meta.url)(
  process.env.DEADBOLT_NODE_PACKAGE ?? path.join(here, "..", "..", "bindings", "node", "lib", "index.js"));

const options = args["loop-spin-us"] !== undefined ? { loopSpin: Number(args["loop-spin-us"]) / 1000 } : {};
const client = await deadbolt.connect(`redis://127.0.0.1:${port}`, options);

if (scenario === "cycle") {
  const locks = new Map();
  const lockOf = (t) => locks.get(t) ?? locks.set(t, client.mutex(`${key}:${id}:${t}`)).get(t);
  finish(await cycles(async (t) => {
    const lease = await lockOf(t).acquire();
    await lease.release();
  }));
} else if (scenario === "contend") {
  const lock = client.mutex(key);
  finish(await contend(async () => {
    try {
      return await lock.acquire({ timeout: Math.max(0, remainingMs()) });
    } catch (e) {
      if (e instanceof deadbolt.NotAcquiredError) return null;
      throw e;
    }
  }, (lease) => lease.release()));
} else {
  console.error(`deadbolt_node.mjs: no scenario ${scenario}`);
  process.exit(64);
}
