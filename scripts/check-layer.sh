#!/bin/sh
# check-layer.sh LINKER LAYER MAIN_O LAYER_LIB "LOWER_LIBS" "EXTERNAL_LIBS"
#
# The build's layer rule (docs/ARCHITECTURE.md): link the whole of one
# layer's library with the libraries of the layers under it and the
# outside libraries, nothing else. Any undefined reference is a call to a
# layer above (or beside: the JobManager, the TaskManager and the CLI never
# call each other); the check fails naming each symbol and who calls it.
set -u
linker=$1 layer=$2 main_o=$3 lib=$4 lower=$5 ext=$6
out=$(dirname "$lib")/../layers/$layer.bin
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2086
if log=$($linker -o "$out" "$main_o" -Wl,--whole-archive "$lib" -Wl,--no-whole-archive \
        $lower $ext 2>&1); then
    rm -f "$out"
    exit 0
fi
rm -f "$out"
echo "layer check: layer '$layer' reaches outside the layers under it" \
     "(${lower:-none}):" >&2
# "x.o: in function `f': ... undefined reference to `g'"
printf '%s\n' "$log" | sed -n "s/.*undefined reference to \`\\([^']*\\)'.*/\\1/p" | sort -u |
    while read -r sym; do
        who=$(printf '%s\n' "$log" | grep -B1 "undefined reference to \`$sym'" |
              sed -n 's/.*(\([^)]*\.o\)).*/\1/p; s/^[^:(]*\/\([^/:]*\.o\):.*/\1/p' | sort -u | tr '\n' ' ')
        echo "  $sym  (called from ${who:-?})" >&2
    done
printf '%s\n' "$log" | grep -q "undefined reference" || printf '%s\n' "$log" >&2
exit 1
