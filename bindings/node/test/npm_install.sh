#!/usr/bin/env bash
# Installs the package as the README says (`npm install` of its folder into a project),
# reusing the native addon of build-dir, then runs the interop tests with the installed
# package, from outside the source tree.
# Usage: npm_install.sh build-dir
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
project=$(mktemp -d /tmp/deadbolt-npm.XXXXXX)
trap 'rm -rf "$project"' EXIT
# A copy of the package's files (install.js writes native/ beside them).
mkdir "$project/deadbolt" "$project/app"
cp -r "$here/package.json" "$here/install.js" "$here/lib" "$project/deadbolt/"
cd "$project/app"
echo '{ "name": "app", "private": true }' > package.json
unset DEADBOLT_NODE_ADDON
DEADBOLT_BUILD_DIR="$build" npm install --no-audit --no-fund --loglevel=error ../deadbolt
where=$(node -p 'require.resolve("deadbolt")')
case "$where" in
  "$project"/*) ;;
  *) echo "npm_install: deadbolt resolved to $where, not the project's" >&2; exit 1 ;;
esac
test -f "$project/deadbolt/native/deadbolt.node"
DEADBOLT_PACKAGE="$project/app/node_modules/deadbolt" node --test "$here/test/interop.test.js"
