'use strict';
// The duplicate-submission throttle of a clustered service: a Node cluster of workers that
// all receive the same submissions, each processed only if client.throttle() allows its key.
// Run as `node submissions.js url workers submissions`; prints {key: times processed}.
const cluster = require('node:cluster');

const [url, workers, submissions] = process.argv.slice(2);

if (cluster.isPrimary) {
  const processed = {};
  let running = Number(workers);
  for (let i = 0; i < running; ++i) {
    cluster.fork().on('message', (key) => { processed[key] = (processed[key] || 0) + 1; });
  }
  cluster.on('exit', (worker, code) => {
    if (code !== 0) process.exitCode = 1;
    if (--running === 0) console.log(JSON.stringify(processed));
  });
} else {
  const deadbolt = require(process.env.DEADBOLT_PACKAGE);
  (async () => {
    const client = await deadbolt.connect(url);
    await Promise.all(Array.from({ length: Number(submissions) }, async (_, i) => {
      const key = `submit:user-${i}`;
      const r = await client.throttle(key, { window: 60000 });
      if (r.allowed) process.send(key);
      else if (!(r.retryIn > 0 && r.retryIn <= 60000)) throw new Error(`retryIn ${r.retryIn}`);
    }));
    process.disconnect();
  })().catch((e) => { console.error(e); process.exit(1); });
}
