#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, integration against real servers that the tests
# start on free ports, conformance, torture short runs). This is what CI runs first. The
# benchmark harnesses' smoke runs (label bench) are a stage of .ci/run of their own: they
# check that the harnesses run, not the library, and keep this command under 20 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j2 --timeout 300 -LE bench
