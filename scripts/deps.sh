#!/bin/sh
# Installs what memtap builds and tests with, when missing: Debian's
# packages (apt-get), then the npm packages pinned in npm/package-lock.json
# (ECharts for `memtap report --html`; DuckDB's library, parquet-wasm and
# apache-arrow to read `memtap export --format parquet`'s files in the
# tests; playwright-core to drive Chromium in the tests).
# With --bench, also the programs and test suites the benchmarks under
# bench/ run (bench/suites.py, bench/agree.py).
set -eu
cd "$(dirname "$0")/.."
PACKAGES="cmake make gcc g++ libc6-dev binutils pkg-config python3 \
libelf-dev libdw-dev libbz2-dev libzstd-dev libzydis-dev libsqlite3-dev valgrind clang \
help2man chromium fzf shellcheck heaptrack"
[ "${1:-}" = "--bench" ] && PACKAGES="$PACKAGES lua5.4 perl jq sqlite3 xz-utils bzip2 zstd \
gzip libpython3.11-testsuite"
command -v npm >/dev/null 2>&1 || PACKAGES="$PACKAGES nodejs npm"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if [ -n "$missing" ]; then
    echo "memtap: installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# npm ci again only when the lock file changed since the last install
stamp=npm/node_modules/.memtap-lock
if ! cmp -s npm/package-lock.json "$stamp" 2>/dev/null; then
    echo "memtap: installing the npm packages of npm/package-lock.json" >&2
    (cd npm && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp npm/package-lock.json "$stamp"
fi
