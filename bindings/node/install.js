'use strict';
// `npm install ./bindings/node`: puts the native addon and the deadbolt libraries it loads in
// native/. The addon comes from the project's build (DEADBOLT_BUILD_DIR, default ../../build,
// as scripts/setup.sh makes it); when that has none, CMake builds one into ../../build-node
// first (a few minutes).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const here = __dirname;
const root = path.resolve(here, '..', '..');
const addonIn = (build) => path.join(build, 'bindings', 'node', 'deadbolt.node');

function builtAddon() {
  const build = process.env.DEADBOLT_BUILD_DIR || path.join(root, 'build');
  if (fs.existsSync(addonIn(build))) return build;
  const own = path.join(root, 'build-node');
  console.error(`deadbolt: building the native addon with CMake into ${own}`);
  // `npm install <folder>` links the folder without installing its dependencies.
  if (!fs.existsSync(path.join(here, 'node_modules', 'node-addon-api', 'napi.h'))) {
    execFileSync('npm', ['ci', '--ignore-scripts', '--omit=dev'], { cwd: here, stdio: 'inherit' });
  }
  const run = (args) => execFileSync('cmake', args, { stdio: 'inherit' });
  run(['-S', root, '-B', own, '-DCMAKE_BUILD_TYPE=Release', '-DDEADBOLT_BUILD_TESTS=OFF',
    '-DDEADBOLT_BUILD_BENCH=OFF', '-DDEADBOLT_BUILD_CLI=OFF', '-DDEADBOLT_PYTHON=OFF']);
  run(['--build', own, '--target', 'deadbolt_node', '-j', String(os.cpus().length || 2)]);
  return own;
}

// Each library once, under the name the loader looks for (its soname, lib*.so.N), found in
// the build's library folders; the addon looks beside itself first ($ORIGIN).
function libraries(build) {
  const found = [];
  const walk = (dir, depth) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && depth < 4 && !['bindings', 'tests', 'bench', 'CMakeFiles'].includes(e.name)) walk(p, depth + 1);
      else if (/^libdeadbolt_.*\.so\.\d+$/.test(e.name)) found.push(p);
    }
  };
  walk(build, 0);
  return found;
}

const build = builtAddon();
const target = path.join(here, 'native');
fs.rmSync(target, { recursive: true, force: true });
fs.mkdirSync(target);
const copies = [addonIn(build), ...libraries(build)].map((from) => {
  const to = path.join(target, path.basename(from));
  fs.copyFileSync(fs.realpathSync(from), to);
  return to;
});
// A developer's build keeps debug information (tens of MB); the package does not need it.
try {
  execFileSync('strip', ['--strip-debug', ...copies]);
} catch {
  // no strip: the package is only larger
}
console.error(`deadbolt: native addon and ${copies.length - 1} libraries in ${target}`);
