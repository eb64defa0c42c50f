#!/usr/bin/env bash
# tests/rma/suite.sh KIND N PROGRAM ARGS...
# Runs PROGRAM (a suite of bench/rma or a test of tests/rma, built for one
# mapping of <rma.h>) on N processes: KIND pthread, mpi or hybrid through
# bsprun ($BSPRUN), KIND plain through mpirun alone (the plain-MPI
# mapping). Fails unless the program exits with 0 and every "check=" it
# prints says ok.
set -u
kind=$1 n=$2
shift 2
case "$kind" in
  pthread|mpi) cmd=("$BSPRUN" --engine "$kind" -n "$n") ;;
  hybrid) cmd=("$BSPRUN" --engine hybrid -n "$n" -t 2) ;;
  plain)
    cmd=(mpirun -n "$n" --oversubscribe)
    [ "$(id -u)" = 0 ] && cmd+=(--allow-run-as-root)
    ;;
  *) echo "suite.sh: unknown kind '$kind'" >&2; exit 2 ;;
esac
out=$("${cmd[@]}" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then
  echo "suite.sh: exit status $rc: $kind -n $n $*" >&2
  exit 1
fi
if printf '%s\n' "$out" | grep -q "FAILED"; then
  echo "suite.sh: a check failed: $kind -n $n $*" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q "check=ok\|: ok"; then
  echo "suite.sh: no check reported: $kind -n $n $*" >&2
  exit 1
fi
exit 0
