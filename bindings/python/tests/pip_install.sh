#!/usr/bin/env bash
# Installs the package as the README says (a venv that sees Debian's packages, pip offline,
# no build isolation), reusing the native module of build-dir, then runs the interop tests
# with the installed package, from outside the source tree.
# Usage: pip_install.sh python build-dir
set -euo pipefail
python=$1
build=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d /tmp/deadbolt-venv.XXXXXX)
trap 'rm -rf "$venv"' EXIT
"$python" -m venv --system-site-packages "$venv"
# A copy of the package's sources (not a build/ an earlier in-tree install left): pip and
# setuptools write build/ and *.egg-info beside setup.py.
mkdir "$venv/src"
cp -r "$here/deadbolt" "$here/setup.py" "$here/pyproject.toml" "$venv/src/"
DEADBOLT_BUILD_DIR="$build" "$venv/bin/pip" install --quiet --no-build-isolation --no-index \
  --no-deps "$venv/src"
cd "$venv"
where=$("$venv/bin/python" -c 'import deadbolt, os; print(os.path.dirname(deadbolt.__file__))')
case "$where" in
  "$venv"/lib/*) ;;
  *) echo "pip_install: deadbolt imported from $where, not the venv" >&2; exit 1 ;;
esac
"$venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$here/tests" \
  "$here/tests/test_interop.py"
