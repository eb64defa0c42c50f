#!/usr/bin/env bash
# launch.sh MPIRUN PROG HELLO_BSP CASE: programs started straight by the MPI
# launcher, without bsprun (launch_prog.c; HELLO_BSP is examples/hello_bsp).
#   plain       mpirun -n 4: one run of 4 processes on the MPI engine
#   contradict  SUPERSTEP_ENGINE=pthread under mpirun -n 4: one line, exit
#               status non-zero, nothing run
#   one         mpirun -n 1: the usual run on threads, no line
#   pin         CPU masks under mpirun (no binding, a taskset mask, a
#               binding to cores; MPI and hybrid engines) and on threads
#               under taskset: a section of
#               one process keeps its caller's whole mask, threads stay
#               inside it
set -u
mpirun=$1 prog=$2 hello=$3 case=$4
tmp=$(mktemp -d)
out=$tmp/out err=$tmp/err
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "--- stdout"; head -c 4000 "$out"; echo "--- stderr"; head -c 4000 "$err"
  echo "FAILED ($case): $*"
  exit 1
}
mpiopts=()
if "$mpirun" --version 2>&1 | grep -q "Open MPI\|OpenRTE\|Open RTE"; then
  mpiopts=(--oversubscribe)
  [ "$(id -u)" = 0 ] && mpiopts+=(--allow-run-as-root)
fi
# what the test's own environment says about a launcher must not count
for v in $(env | sed -n 's/^\(\(OMPI_COMM_WORLD\|PMIX_\|PMI_\|SLURM_\|MV2_COMM\)[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done
unset SUPERSTEP_ENGINE SUPERSTEP_PIN LPF_MAX_PROCS SUPERSTEP_IGNORE_LAUNCHER
launch() {   # launch [VAR=VALUE...] -- mpirun arguments
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env ${envs[@]+"${envs[@]}"} timeout 90 "$mpirun" "${mpiopts[@]}" "$@" >"$out" 2>"$err"
  rc=$?
}
count() { grep -c "$1" "$out"; }
ncores=$(getconf _NPROCESSORS_ONLN)

case $case in
plain)
  launch -- -n 4 "$hello"
  [ "$rc" -eq 0 ] || fail "hello_bsp: exit status $rc"
  [ "$(count 'of 4')" -eq 4 ] || fail "hello_bsp: not one run of 4 processes"
  ! grep -q 'of 1' "$out" || fail "hello_bsp: a process ran alone"
  launch -- -n 4 "$prog" hello
  [ "$rc" -eq 0 ] || fail "exit status $rc"
  for s in 0 1 2 3; do
    grep -q "launch: process $s of 4" "$out" || fail "process $s of 4 missing"
  done
  ;;
contradict)
  start=$(date +%s)
  launch SUPERSTEP_ENGINE=pthread -- -n 4 "$prog" hello
  dt=$(( $(date +%s) - start ))
  [ "$rc" -ne 0 ] || fail "exit status 0"
  ! grep -q 'launch: process' "$out" || fail "the program ran"
  [ "$(grep -c '^superstep: ' "$err")" -eq 1 ] || fail "not exactly one line from superstep"
  grep '^superstep: ' "$err" | grep -q 'as 4 processes.*SUPERSTEP_ENGINE=pthread' \
    || fail "the line does not say what is wrong"
  [ "$dt" -lt 60 ] || fail "took ${dt}s"
  # an engine name this build does not have: the same
  launch SUPERSTEP_ENGINE=threads -- -n 2 "$prog" hello
  [ "$rc" -ne 0 ] || fail "SUPERSTEP_ENGINE=threads: exit status 0"
  grep -q '^superstep: .*SUPERSTEP_ENGINE=threads is not an engine' "$err" \
    || fail "SUPERSTEP_ENGINE=threads: no line"
  # mpi asked for in any case of letters: consistent
  launch SUPERSTEP_ENGINE=MPI -- -n 2 "$prog" hello
  [ "$rc" -eq 0 ] || fail "SUPERSTEP_ENGINE=MPI: exit status $rc"
  [ "$(count 'of 2')" -eq 2 ] || fail "SUPERSTEP_ENGINE=MPI: not one run of 2"
  ;;
one)
  launch -- -n 1 "$prog" hello
  [ "$rc" -eq 0 ] || fail "exit status $rc"
  ! grep -q '^superstep: ' "$err" || fail "a line from superstep"
  grep -q 'launch: process 0 of ' "$out" || fail "no output"
  ;;
pin)
  launch -- -n 2 --bind-to none "$prog" pin
  [ "$rc" -eq 0 ] || fail "mpirun, no binding: exit status $rc"
  ! grep -q FAIL "$out" || fail "mpirun, no binding"
  [ "$(count 'pin ok')" -eq 2 ] || fail "mpirun, no binding: not every rank checked"
  grep -q "pin ok 0 $ncores\$" "$out" || fail "mpirun, no binding: rank 0 lost CPUs"
  launch -- -n 2 --bind-to core "$prog" pin
  [ "$rc" -eq 0 ] || fail "mpirun --bind-to core: exit status $rc"
  ! grep -q FAIL "$out" || fail "mpirun --bind-to core"
  [ "$(count 'pin ok')" -eq 2 ] || fail "mpirun --bind-to core: not every rank checked"
  if [ "$ncores" -ge 2 ] && command -v taskset >/dev/null; then
    last=$((ncores - 1))
    launch -- -n 2 --bind-to none taskset -c "$last" "$prog" pin
    [ "$rc" -eq 0 ] || fail "taskset under mpirun: exit status $rc"
    ! grep -q FAIL "$out" || fail "taskset under mpirun"
    [ "$(count 'pin ok . 1$')" -eq 2 ] || fail "taskset under mpirun: not every rank kept its one CPU"
    # the hybrid engine: 2 ranks of 2 threads, each thread inside its rank's mask
    launch SUPERSTEP_ENGINE=hybrid SUPERSTEP_HYBRID_THREADS=2 -- -n 2 --bind-to none \
      taskset -c "$last" "$prog" pin
    [ "$rc" -eq 0 ] || fail "hybrid, taskset: exit status $rc"
    ! grep -q FAIL "$out" || fail "hybrid, taskset"
    [ "$(count 'pin ok . 1$')" -eq 4 ] || fail "hybrid, taskset: not every thread kept the one CPU"
    # threads, no launcher: a mask narrower than the machine, and the whole machine
    LPF_MAX_PROCS=2 timeout 60 taskset -c "$last" "$prog" pin >"$out" 2>"$err"; rc=$?
    [ "$rc" -eq 0 ] || fail "taskset, threads: exit status $rc"
    ! grep -q FAIL "$out" || fail "taskset, threads"
    [ "$(count 'pin ok . 1$')" -eq 2 ] || fail "taskset, threads: not every process checked"
    LPF_MAX_PROCS=2 timeout 60 "$prog" pin >"$out" 2>"$err"; rc=$?
    [ "$rc" -eq 0 ] || fail "threads: exit status $rc"
    ! grep -q FAIL "$out" || fail "threads"
    [ "$(count 'pin ok')" -eq 2 ] || fail "threads: not every process checked"
  fi
  ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "ok"
