#!/bin/sh
# Builds memtap into DIR (default: build) with warnings as errors.
# Extra arguments go to cmake, e.g. -DMEMTAP_SANITIZE=ON.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build}
[ $# -gt 0 ] && shift
cmake -S . -B "$dir" -DMEMTAP_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j "$(nproc)" >/dev/null
