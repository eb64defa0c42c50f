#!/usr/bin/env bash
# ompi_server.sh LPFRUN TCP_AFTER_INIT: two jobs, each started by an lpfrun
# (an mpirun) of its own, that call MPI_Init and then meet over TCP
# (tests/install/lpf/tcp_after_init.c). Without a shared ompi-server Open MPI
# cannot connect them: the error names the fix, -mpirun,--ompi-server. With
# one given to both mpiruns that way, they meet.
set -u
lpfrun=$1 prog=$2
command -v ompi-server >/dev/null || { echo "no ompi-server (Open MPI 4): skipped"; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in ${pids[@]+"${pids[@]}"}; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
export SUPERSTEP_TCP_SECRET="ompi_server.sh $$ $RANDOM"
port() { echo $(( 20000 + (RANDOM % 30000) )); }
fail() { for f in "$tmp"/o*; do echo "--- $f"; cat "$f"; done; echo "FAILED: $*"; exit 1; }

# without a server: the first to fail says how to give one
p=$(port)
timeout 60 "$lpfrun" -engine mpimsg -np 1 "$prog" "$p" 0 2 >"$tmp/o0" 2>&1 &
pids+=($!)
timeout 60 "$lpfrun" -engine mpimsg -np 1 "$prog" "$p" 1 2 >"$tmp/o1" 2>&1
rc1=$?
[ "$rc1" != 0 ] || fail "the jobs met without a shared ompi-server (Open MPI 4 should refuse)"
kill -TERM "${pids[0]}" 2>/dev/null
wait "${pids[0]}" 2>/dev/null
grep -q -e "-mpirun,--ompi-server -mpirun,file:FILE" "$tmp/o0" "$tmp/o1" ||
  fail "the connection error does not name -mpirun,--ompi-server"
echo "without a server: the error names -mpirun,--ompi-server: ok"

# with one, given as the error says
ompi-server --no-daemonize -r "$tmp/uri" >"$tmp/oserver" 2>&1 </dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/uri" ] && break; sleep 0.1; done
[ -s "$tmp/uri" ] || fail "ompi-server did not start"
p=$(port)
timeout 60 "$lpfrun" -engine mpimsg -np 1 -mpirun,--ompi-server -mpirun,"file:$tmp/uri" \
  "$prog" "$p" 0 2 >"$tmp/o2" 2>&1 &
pids+=($!)
timeout 60 "$lpfrun" -engine mpimsg -np 1 -mpirun,--ompi-server -mpirun,"file:$tmp/uri" \
  "$prog" "$p" 1 2 >"$tmp/o3" 2>&1 || fail "process 1 with the server: status $?"
wait "${pids[2]}" || fail "process 0 with the server: status $?"
grep -q "tcp_after_init 0: ok" "$tmp/o2" && grep -q "tcp_after_init 1: ok" "$tmp/o3" ||
  fail "with the server: the ring did not run"
echo "with -mpirun,--ompi-server: ok"
echo ok
