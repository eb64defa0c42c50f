#!/usr/bin/env bash
# faults.sh BSPRUN PROGRAM MODE NPROCS: a failing process ends the whole MPI
# job within seconds, with a non-zero exit status and its message.
set -u
bsprun=$1 prog=$2 mode=$3 n=$4
limit=20   # seconds, launcher start-up included
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
t0=$(date +%s.%N)
if [ "$mode" = bsp_abort ]; then
  timeout 120 "$bsprun" --engine mpi -n "$n" "$prog" >"$out" 2>"$err"
else
  timeout 120 "$bsprun" --engine mpi -n "$n" "$prog" "$mode" >"$out" 2>"$err"
fi
rc=$?
dt=$(echo "$(date +%s.%N) - $t0" | bc)
echo "mode $mode on $n processes: exit status $rc after $dt s"
echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
fail() { echo "FAILED: $*"; exit 1; }
[ "$rc" -ne 124 ] || fail "the job hung"
[ "$(echo "$dt < $limit" | bc)" = 1 ] || fail "took $dt s (more than $limit)"
case "$mode" in
  abort)   [ "$rc" -ne 0 ] || fail "exit status 0"
           grep -q "process 1 of $n aborts on purpose" "$err" || fail "message missing" ;;
  bsp_abort) [ "$rc" -ne 0 ] || fail "exit status 0"
           grep -q "process 1 of $n gives up" "$err" || fail "message missing" ;;
  sigkill) [ "$rc" -ne 0 ] || fail "exit status 0" ;;
  exit)    [ "$rc" -ne 0 ] || fail "exit status 0"
           grep -q "exits with status 3" "$err" || fail "message missing" ;;
  segv)    [ "$rc" -ne 0 ] || fail "exit status 0" ;;
  status)  [ "$rc" -eq 5 ] || fail "exit status $rc, not the program's 5" ;;
  exit0)   [ "$rc" -eq 0 ] || fail "exit status $rc"
           [ "$(grep -c 'sync failed' "$out")" -eq $((n - 1)) ] || fail "not every other process saw its sync fail" ;;
  *) fail "unknown mode" ;;
esac
echo "ok"
