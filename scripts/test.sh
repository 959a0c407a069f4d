#!/usr/bin/env bash
# Sets up, builds and runs every test (unit + integration against real redis-servers that the
# tests start on free ports). This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j2 --timeout 300
