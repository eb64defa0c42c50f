#!/usr/bin/env bash
# globals.sh BSPRUN PROG ENGINE CASE: checked mode and the globals main sets
# (globals_prog.c). ENGINE: pthread (4 threads), mpi (4 ranks), hybrid
# (2 ranks x 2 threads).
#   global, pointer, lpf  on mpi/hybrid under --check: exit status 6, one
#                    line naming the global, no answer printed; on pthread:
#                    right
#   sent, lpfsent    the correct programs: right answers, status 0, no line
#   crash            the pointer program without checked mode: on mpi/hybrid
#                    rank 1 crashes and says why it may have (the globals
#                    rule); on pthread: right
set -u
bsprun=$1 prog=$2 engine=$3 case=$4
tmp=$(mktemp -d)
out=$tmp/out err=$tmp/err
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "--- stdout"; head -c 4000 "$out"; echo "--- stderr"; head -c 4000 "$err"
  echo "FAILED ($case, $engine): $*"
  exit 1
}
opts=(--engine "$engine" -n 4)
[ "$engine" = hybrid ] && opts+=(-t 2)
check=(--check)
mode=$case
[ "$case" = crash ] && check=() mode=pointer
timeout 120 "$bsprun" "${opts[@]}" ${check[@]+"${check[@]}"} "$prog" "$mode" 1000 >"$out" 2>"$err"
rc=$?
right() {
  [ "$rc" -eq 0 ] || fail "exit status $rc"
  ! grep -q '^superstep: ' "$err" || fail "a line from superstep"
  [ "$(grep -c 'globals: process .* of 4: 0 wrong of 1000$' "$out")" -eq 4 ] \
    || fail "not every process right"
}
case $case in
global|pointer|lpf)
  name=n_elems
  [ "$case" = pointer ] && name=table
  [ "$case" = lpf ] && name=elems_lpf
  if [ "$engine" = pthread ]; then
    right
  else
    [ "$rc" -eq 6 ] || fail "exit status $rc, expected 6"
    ! grep -q 'globals: process' "$out" || fail "the program ran"
    grep -q "^superstep: checked mode: global $name (8 bytes, in globals_prog.c) holds another value on \([0-9]\) of the \1 other MPI ranks (first: rank 1) than on rank 0" "$err" \
      || fail "no line naming $name"
    [ "$(grep -c '^superstep: checked mode: global' "$err")" -eq 1 ] \
      || fail "not exactly one global named"
  fi
  ;;
sent|lpfsent) right ;;
crash)
  if [ "$engine" = pthread ]; then
    right
  else
    [ "$rc" -ne 0 ] || fail "exit status 0"
    grep -q '^superstep: rank [1-3] of [24]: crashed (a bad memory access) in an SPMD function; main ran on rank 0 only' "$err" \
      || fail "no line with the globals rule"
  fi
  ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "ok"
