'use strict';
// Loads the native addon: DEADBOLT_NODE_ADDON (the tests point it at the build's), else the
// copy `npm install` made beside the package (native/deadbolt.node).
const path = require('node:path');

const file = process.env.DEADBOLT_NODE_ADDON ||
  path.join(__dirname, '..', 'native', 'deadbolt.node');
let native;
try {
  native = require(file);
} catch (e) {
  e.message = `deadbolt: cannot load its native addon ${file} (${e.message}); ` +
    'reinstall the package (npm install ./bindings/node builds it)';
  throw e;
}
module.exports = native;
