#!/bin/sh
# Builds memtap twice and runs the whole test suite on both builds: the
# normal build, and the build whose non-injected code (the memtap command,
# its libraries, the unit tests) runs under AddressSanitizer and
# UndefinedBehaviorSanitizer.  The preload library is never sanitized.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
scripts/build.sh build-asan -DMEMTAP_SANITIZE=ON
jobs=$(nproc)
(cd build && ctest -j "$jobs" --output-on-failure)
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest -j "$jobs" --output-on-failure)
