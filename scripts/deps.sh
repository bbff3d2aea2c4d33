#!/bin/sh
# Installs the Debian packages memtap builds and tests with, when missing.
set -eu
PACKAGES="cmake make gcc g++ libc6-dev binutils pkg-config python3 \
libelf-dev libdw-dev libzstd-dev libzydis-dev libsqlite3-dev valgrind clang \
help2man"
missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "memtap: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
