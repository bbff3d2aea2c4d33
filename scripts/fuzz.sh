#!/bin/sh
# Fuzzes the trace reader with libFuzzer (clang, ASan and UBSan) for
# SECONDS (default 60) on JOBS parallel jobs (default: the cores), starting
# from the seed corpus in tests/fuzz/corpus.  New inputs go to
# build-fuzz/corpus; crashes to build-fuzz/ (crash-*).
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-60}
jobs=${2:-$(nproc)}
mkdir -p build-fuzz/corpus
cp -n tests/fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true
clang -fsanitize=fuzzer,address,undefined -DMEMTAP_LIBFUZZER -O1 -g \
    -Iinclude -Isrc tests/unit/fuzz_reader.c src/trace/reader.c \
    src/trace/writer.c src/trace/chunk.c src/trace/pack.c -lzstd \
    -o build-fuzz/fuzz_reader
cd build-fuzz
./fuzz_reader -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" \
    -artifact_prefix=./ corpus
