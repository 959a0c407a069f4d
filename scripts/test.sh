#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, integration against real servers that the tests
# start on free ports, conformance, torture short runs). This is what CI runs first. The
# benchmark harnesses' smoke runs (label bench) are a stage of .ci/run of their own: they
# check that the harnesses run, not the library, and keep this command under 12 minutes.
# Four at a time on two cores: the tests mostly wait on their servers (at two at a time they
# used 29% of the CPU); 549 tests took 368 s at -j3 here (520 took 424 s at -j2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j4 --timeout 300 -LE bench
