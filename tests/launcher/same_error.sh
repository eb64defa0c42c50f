#!/usr/bin/env bash
# same_error.sh BSPRUN PROG ENGINE N [bsprun options]: every process makes
# the same mistake: one line naming the call, then one line naming the
# other processes that said the same; with BSPRUN_ALL_LINES=1 every line.
set -u
bsprun=$1 prog=$2 engine=$3 n=$4; shift 4
err=$(mktemp); trap 'rm -f "$err"' EXIT
fail() { echo "FAILED: $*"; echo "--- stderr"; cat "$err"; exit 1; }
timeout 120 "$bsprun" --engine "$engine" -n "$n" "$@" "$prog" >/dev/null 2>"$err"; rc=$?
[ "$rc" -eq 6 ] || fail "exit status $rc, expected 6"
full=$(grep -c '^superstep: bsp_put (process [0-9]* of '"$n"'): pid '"$n"' is out of range' "$err")
[ "$full" -ge 1 ] || fail "no line of bsp_put's"
grep -q 'called at .*same_error.c:[0-9]* in spmd\|called from spmd' "$err" || fail "the call site is not named"
# the other processes' identical lines: named in one line, or (when they
# were killed before printing) not there at all; never repeated in full
[ "$full" -eq 1 ] || fail "$full copies of the same line"
if grep -q '^superstep: bsp_put: the same at process' "$err"; then
  others=$(grep '^superstep: bsp_put: the same at process' "$err" | grep -o '[0-9][0-9]*' | wc -l)
  [ "$others" -le $((n - 1)) ] || fail "more processes named than there are"
fi
echo "ok ($engine, n=$n)"
