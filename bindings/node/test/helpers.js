'use strict';
// What the tests share: a real redis-server (Debian's) on a free port, the package under test
// (DEADBOLT_PACKAGE: an installed copy; else the sources with the build's addon), and child
// processes that run a script with the package.
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');

const packagePath = process.env.DEADBOLT_PACKAGE || path.join(__dirname, '..', 'lib', 'index.js');
const deadbolt = require(packagePath);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function pong(port) {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1');
    c.setTimeout(300, () => { c.destroy(); resolve(false); });
    c.once('error', () => resolve(false));
    c.once('connect', () => c.write('PING\r\n'));
    c.once('data', (d) => { c.destroy(); resolve(d.toString().startsWith('+PONG')); });
  });
}

/** redis-server on a free port in a temporary directory, without persistence. */
async function startRedis() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deadbolt-node-redis-'));
  for (let attempt = 0; attempt < 20; ++attempt) {
    const port = await freePort();
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1',
      '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    let exited = false;
    proc.once('exit', () => { exited = true; });
    const until = Date.now() + 10000;
    while (!exited && Date.now() < until) {
      if (await pong(port)) {
        return {
          port,
          url: `redis://127.0.0.1:${port}`,
          stop() { proc.kill('SIGKILL'); fs.rmSync(dir, { recursive: true, force: true }); },
        };
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    proc.kill('SIGKILL'); // the port was taken meanwhile
  }
  throw new Error('redis-server did not start on any free port');
}

/** One server of engine from deadbolt-test-server (DEADBOLT_TEST_SERVER: the C++ tests'
 *  fixtures, e.g. initdb for postgres): {url, stop()}; stop() waits until it is gone. */
function startServer(engine) {
  const proc = spawn(process.env.DEADBOLT_TEST_SERVER, [engine], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.once('exit', (code) => reject(new Error(`deadbolt-test-server ${engine} exited (${code})`)));
    proc.stdout.on('data', (d) => {
      out += d;
      if (!out.includes('\n')) return;
      proc.removeAllListeners('exit');
      resolve({
        url: out.trim(),
        stop: () => new Promise((done) => { proc.once('exit', done); proc.stdin.end(); }),
      });
    });
  });
}

/** A redis-server, a deadbolt client of it and an ioredis connection to it, for one test
 *  file: {server, client, redis, stop()}. */
async function redisFixture() {
  const Redis = require('ioredis');
  const server = await startRedis();
  const client = await deadbolt.connect(server.url);
  const redis = new Redis(server.port, '127.0.0.1');
  return { server, client, redis, stop() { redis.disconnect(); server.stop(); } };
}

/** A lock name no other test uses. */
function uniqueName(prefix = 'node-test') {
  return `${prefix}:${crypto.randomBytes(6).toString('hex')}`;
}

/** Runs node -e script with args; resolves {code, stdout, stderr}; onLine sees each line
 *  of its output as it comes. */
function runNode(script, args = [], env = {}, onLine = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script, '--', ...args], {
      env: { ...process.env, DEADBOLT_PACKAGE: packagePath, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (d) => {
      stdout += d;
      pending += d;
      for (let i = pending.indexOf('\n'); i >= 0; i = pending.indexOf('\n')) {
        onLine(pending.slice(0, i));
        pending = pending.slice(i + 1);
      }
    });
    child.stderr.on('data', (d) => { stderr += d; });
    child.once('exit', (code) => resolve({ code, stdout, stderr, child }));
  });
}

/** The count of calls of a command (lowercase, e.g. 'evalsha') redis-server has served. */
function calls(redis, command) {
  return redis.info('commandstats').then((text) => {
    const m = text.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`));
    return m ? Number(m[1]) : 0;
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = { deadbolt, packagePath, startRedis, startServer, redisFixture, uniqueName, runNode, calls, sleep, execFileSync };
