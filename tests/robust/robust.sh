#!/usr/bin/env bash
# robust.sh BSPRUN PROGRAM ENGINE NPROCS CASE: runs robust_prog on an engine
# and checks the exit status and the message (issue 9). Never hangs: every
# run is under `timeout`.
set -u
bsprun=$1 prog=$2 engine=$3 n=$4 case=$5
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail() { echo "FAILED ($case, $engine, n=$n): $*"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"; exit 1; }
run() {   # run MODE [ENV=VALUE ...] (the settings reach every host: bsprun -x)
  local m=$1; shift
  local t0=$SECONDS a xs=()
  for a in "$@"; do xs+=(-x "$a"); done
  env "$@" timeout 120 "$bsprun" --engine "$engine" "${xs[@]}" -n "$n" "$prog" "$m" >"$out" 2>"$err"
  rc=$?
  dt=$((SECONDS - t0))
  echo "$case: exit status $rc after ${dt}s"
}
expect() {   # expect STATUS 'line on stderr'
  [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"
  [ -z "${2:-}" ] || grep -qF -- "$2" "$err" || fail "no line '$2' on stderr"
}
case "$case" in
  exit3)     run exit3; expect 3 "calls exit(3)" ;;
  endedctx)  run endedctx; expect 6 "belongs to an SPMD section that has ended" ;;
  badslot)   run badslot; expect 6 "is not a memory slot of this context" ;;
  tagsize)   run tagsize; expect 6 "tag size 1152921504606846976 bytes is more than this machine's memory" ;;
  sendoom)   run sendoom; expect 6 "could not buffer a message of 1125899906842624 payload bytes" ;;
  putoom)    run putoom; expect 6 "could not buffer a request of 1125899906842624 bytes" ;;
  abort)     run abort; expect 6 "superstep: lpf_abort (process $((1 % n)) of $n)" ;;
  stuckwarn)
    run stuck SUPERSTEP_SYNC_WARN=1 STUCK_S=4
    expect 0 "has waited"
    grep -q "stuck: done" "$out" || fail "the program did not finish"
    [ "$(grep -c "has waited" "$err")" -eq 1 ] || fail "the warning was printed more than once"
    grep -q "not arrived: 1" "$err" || fail "the warning does not name process 1"
    ;;
  stucktimeout)
    run stuckever SUPERSTEP_SYNC_TIMEOUT=2
    expect 6 "gave up after waiting"
    grep -q "not arrived: 1" "$err" || fail "the message does not name process 1"
    [ "$dt" -lt 40 ] || fail "took ${dt}s"
    ;;
  stuckquiet)   # the default: no line within the default 60 s
    run stuck STUCK_S=2
    expect 0
    ! grep -q "has waited" "$err" || fail "a warning before SUPERSTEP_SYNC_WARN's 60 s"
    ;;
  enginecase)
    if [ "$engine" = mpi ]; then
      # straight under mpirun (bsprun would set the name itself)
      env SUPERSTEP_ENGINE=MPI timeout 120 mpirun -n "$n" --oversubscribe --allow-run-as-root \
        -x SUPERSTEP_ENGINE "$prog" hello >"$out" 2>"$err"; rc=$?
    else
      # straight, without bsprun (which sets the name itself and refuses -x for it)
      env SUPERSTEP_ENGINE=PThread LPF_MAX_PROCS="$n" timeout 120 "$prog" hello >"$out" 2>"$err"; rc=$?
    fi
    expect 0
    ! grep -q "not an engine" "$err" || fail "engine name refused"
    [ "$(grep -c "hello from" "$out")" -eq "$n" ] || fail "not every process ran"
    # and through bsprun, the name in upper case
    ename=$(echo "$engine" | tr '[:lower:]' '[:upper:]')
    env SUPERSTEP_ENGINE="$ename" timeout 120 "$bsprun" -n "$n" "$prog" hello >"$out" 2>"$err"; rc=$?
    expect 0
    [ "$(grep -c "hello from" "$out")" -eq "$n" ] || fail "bsprun: not every process ran"
    ;;
  badenv)   # without bsprun: invalid values are warned about once
    LPF_MAX_PROCS=abc timeout 60 "$prog" hello >"$out" 2>"$err"; rc=$?
    expect 0 "LPF_MAX_PROCS=abc is not a number of processes"
    [ "$(grep -c "LPF_MAX_PROCS=abc" "$err")" -eq 1 ] || fail "warned more than once"
    SUPERSTEP_PIN=bogus LPF_MAX_PROCS=2 timeout 60 "$prog" hello >"$out" 2>"$err"; rc=$?
    expect 0 "SUPERSTEP_PIN=bogus is not compact, scatter, none or a list of CPUs"
    [ "$(grep -c "SUPERSTEP_PIN=bogus" "$err")" -eq 1 ] || fail "warned more than once"
    ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
echo "ok"
