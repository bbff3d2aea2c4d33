#!/bin/sh
# Builds memtap and runs its main job on the bundled example: the disparity
# program of examples/ (modelled on the MadT paper's Listing 1) under
# `memtap run`, every access from main() on, shown as MadT symbolic lines.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh build
build/bin/memtap run --from-main -o build/disparity.mtr \
    --text build/disparity.txt -- build/bin/disparity
echo "--- build/disparity.txt: the allocations of the images"
grep -m 4 '^M\$.*MallocHandle' build/disparity.txt
echo "--- the first iterations of findDisparity's loop (MadT Listing 2)"
grep -m 16 'findDisparity+' build/disparity.txt
echo "--- $(wc -l < build/disparity.txt) lines in all"
echo "--- memtap report: the hottest objects and instructions"
build/bin/memtap report -q --top 5 --html build/disparity.html build/disparity.mtr |
    sed -n '1,18p'
echo "--- see also:"
echo "    build/disparity.html (the same report with charts: open it in a browser)"
echo "    build/bin/memtap show --format csv build/disparity.mtr"
echo "    build/bin/memtap info build/disparity.mtr"
