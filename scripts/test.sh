#!/usr/bin/env bash
# Sets up, builds and runs every test (unit, integration against real servers that the tests
# start on free ports, conformance, the Python and Node.js bindings'). This is what CI runs first. The
# benchmark harnesses' smoke runs (label bench) and the torture tool's short fault-injection
# runs (label torture, soaks of 5-10 s each: ~6 minutes of CPU) are stages of .ci/run of their
# own, which keeps this command under 12 minutes: `cd build && ctest -L torture` runs them.
# Four at a time on two cores: the tests mostly wait on their servers (at two at a time they
# used 29% of the CPU); 549 tests took 368 s at -j3 here (520 took 424 s at -j2).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure -j4 --timeout 300 -LE 'bench|torture'
