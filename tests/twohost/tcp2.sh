#!/usr/bin/env bash
# tcp2.sh TWOHOST DIR PROGRAM: the TCP meeting point across two hosts.
# PROGRAM is tests/mpi/tcp_test; process 0 runs on host a and listens on its
# veth address, process 1 runs on host b; both meet (no mpirun: each is an
# MPI singleton) and run a ring put together.
set -u
th=$1 dir=$2 prog=$3
export SUPERSTEP_TCP_SECRET="tcp2.sh secret $$ $RANDOM$RANDOM"
export OMPI_MCA_mpi_yield_when_idle=1   # see twohost.sh
unset SUPERSTEP_ENGINE OMPI_COMM_WORLD_SIZE PMIX_RANK
server=10.213.7.1   # host a (twohost.sh)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$(( 20000 + RANDOM % 20000 ))
"$th" on "$dir" b timeout 60 "$prog" "$server" "$port" 30000 1 2 >"$tmp/out1" 2>"$tmp/err1" &
p1=$!
"$th" on "$dir" a timeout 60 "$prog" "$server" "$port" 30000 0 2 >"$tmp/out0" 2>"$tmp/err0"
rc0=$?
wait "$p1"
rc1=$?
for k in 0 1; do
  echo "--- process $k: stdout"; cat "$tmp/out$k"; echo "--- process $k: stderr"; cat "$tmp/err$k"
done
[ "$rc0" = 0 ] && [ "$rc1" = 0 ] || { echo "FAILED: exit status $rc0 and $rc1"; exit 1; }
grep -q "process 0 of 2 met over TCP.*ok" "$tmp/out0" && grep -q "process 1 of 2 met over TCP.*ok" "$tmp/out1" \
  || { echo "FAILED: not both met"; exit 1; }
echo "ok"
