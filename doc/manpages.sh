#!/bin/sh
# Writes memtap.1 and memtap-COMMAND.1 into OUTDIR with help2man, from the
# same text as `memtap --help` and `memtap COMMAND --help`; each page's
# NAME line is the command's line of `memtap --help`, and help2man adds
# the EXAMPLES and SEE ALSO sections below.
#   doc/manpages.sh MEMTAP OUTDIR VERSION COMMAND...
set -eu
memtap=$1
out=$2
version=$3
shift 3
mkdir -p "$out/wrap"

# The command's description in `memtap --help` (its line and the lines
# that continue it), on one line.
describe() {
    "$memtap" --help | awk -v cmd="$1" '
        $1 == cmd && /^  [a-z]/ { on = 1; sub(/^  [a-z]+ +/, ""); text = $0; next }
        on && /^             [^ ]/ { sub(/^ +/, ""); text = text " " $0; next }
        on { exit }
        END { print text }'
}

# What help2man puts after the options: examples of a few commands, and
# the other pages.
extra() {
    cmd=$1
    case $cmd in
    run) ex='memtap run -o out.mtr -- ./prog ARGS\n.br\nmemtap run --engine fault --from-main -- ./prog' ;;
    show) ex='memtap show out.mtr | less\n.br\nmemtap show --format csv --tid 4242 --seq 1000-2000 out.mtr' ;;
    export) ex='memtap export --format sqlite -o out.db out.mtr\n.br\nmemtap export --format dinero --line 64 out.mtr | dineroIV -informat D' ;;
    report) ex='memtap report out.mtr\n.br\nmemtap report --html out.html --json out.json out.mtr' ;;
    cachesim) ex='memtap cachesim --D1 32K,8,64 --LL 8M,16,64 out.mtr' ;;
    analyze) ex='memtap analyze --omega 0.5 /usr/bin/gzip' ;;
    instrument) ex='memtap instrument ./prog -o prog.copy && memtap run -- ./prog.copy' ;;
    symbolize) ex='memtap symbolize out.mtr 0x55d0c0a4f010' ;;
    heat|share|uninit) ex="memtap $cmd -- ./prog ARGS" ;;
    *) ex="memtap $cmd --help" ;;
    esac
    printf '[EXAMPLES]\n%b\n\n[SEE ALSO]\n.BR memtap (1)' "$ex"
    for other in "$@"; do
        [ "$other" = "$cmd" ] || printf ',\n.BR memtap-%s (1)' "$other"
    done
    printf '\n'
}

{
    printf '[EXAMPLES]\nmemtap run -o out.mtr -- ./prog\n.br\nmemtap report out.mtr\n\n[SEE ALSO]\n'
    first=1
    for cmd in "$@"; do
        [ $first = 1 ] || printf ',\n'
        printf '.BR memtap-%s (1)' "$cmd"
        first=0
    done
    printf '\n'
} >"$out/wrap/memtap.h2m"
help2man -N --no-discard-stderr --version-string="$version" \
    -n "trace and profile the memory accesses of Linux x86-64 programs" \
    -i "$out/wrap/memtap.h2m" -o "$out/memtap.1" "$memtap"
for cmd in "$@"; do
    # help2man names a page after the program it runs: memtap-COMMAND
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$memtap" "$cmd" >"$out/wrap/memtap-$cmd"
    chmod +x "$out/wrap/memtap-$cmd"
    extra "$cmd" "$@" >"$out/wrap/memtap-$cmd.h2m"
    help2man -N --no-discard-stderr --version-string="$version" \
        -n "$(describe "$cmd")" -i "$out/wrap/memtap-$cmd.h2m" \
        -o "$out/memtap-$cmd.1" "$out/wrap/memtap-$cmd"
done
