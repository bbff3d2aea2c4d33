#!/bin/sh
# Cost of the heap tracker: alloc_churn natively and under
# `memtap run --heap-only`, side by side in one run, median wall time of
# RUNS runs each.
#   bench/heap_tracker.sh [N_PER_THREAD] [THREADS] [RUNS]
set -eu
cd "$(dirname "$0")/.."
N=${1:-2000000}
T=${2:-1}
RUNS=${3:-5}
B=build/bin
[ -x $B/alloc_churn ] || scripts/build.sh build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

seconds() { # command... -> wall seconds
    s=$(date +%s.%N)
    "$@" >/dev/null
    e=$(date +%s.%N)
    echo "$e - $s" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: >"$tmp/native"
: >"$tmp/memtap"
for i in $(seq "$RUNS"); do
    seconds $B/alloc_churn "$N" "$T" >>"$tmp/native"
    rm -f "$tmp/t.mtr" # a new trace each run (no .old kept)
    seconds $B/memtap run --heap-only --keep-going -o "$tmp/t.mtr" -- $B/alloc_churn "$N" "$T" >>"$tmp/memtap"
done
native=$(median <"$tmp/native")
traced=$(median <"$tmp/memtap")
events=$((2 * N * T))
size=$(stat -c %s "$tmp/t.mtr")
echo "alloc_churn N=$N threads=$T runs=$RUNS (median wall seconds)"
printf "native        %8.3f s\n" "$native"
printf "memtap run    %8.3f s   (%.1fx native)\n" "$traced" "$(echo "$traced / $native" | bc -l)"
printf "per event     %8.1f ns  (%d malloc+free events)\n" \
    "$(echo "($traced - $native) * 1000000000 / $events" | bc -l)" "$events"
printf "trace         %8.1f MB  (%.2f bytes per event)\n" \
    "$(echo "$size / 1000000" | bc -l)" "$(echo "$size / $events" | bc -l)"
