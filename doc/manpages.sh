#!/bin/sh
# Writes memtap.1 and memtap-COMMAND.1 into OUTDIR with help2man, from the
# same text as `memtap --help` and `memtap COMMAND --help`.
#   doc/manpages.sh MEMTAP OUTDIR VERSION COMMAND...
set -eu
memtap=$1
out=$2
version=$3
shift 3
mkdir -p "$out/wrap"
help2man -N --no-discard-stderr --version-string="$version" \
    -n "trace and profile the memory accesses of Linux x86-64 programs" \
    -o "$out/memtap.1" "$memtap"
for cmd in "$@"; do
    # help2man names a page after the program it runs: memtap-COMMAND
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$memtap" "$cmd" >"$out/wrap/memtap-$cmd"
    chmod +x "$out/wrap/memtap-$cmd"
    help2man -N --no-discard-stderr --version-string="$version" \
        -n "memtap $cmd (see memtap(1))" \
        -o "$out/memtap-$cmd.1" "$out/wrap/memtap-$cmd"
done
