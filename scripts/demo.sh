#!/bin/sh
# Builds memtap and runs its main job on the bundled example: the disparity
# program of examples/ under `memtap run`, shown as MadT symbolic lines.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
build/bin/memtap run -o build/disparity.mtr --text build/disparity.txt \
    -- build/bin/disparity
echo "--- build/disparity.txt (first 20 lines) ---"
head -n 20 build/disparity.txt
echo "--- the same trace as CSV: build/bin/memtap show --format csv build/disparity.mtr"
