#!/usr/bin/env bash
# tcp.sh PROGRAM MODE [NPROCS]: the TCP meeting point of the MPI engine.
#   meet     NPROCS independent processes (no mpirun) meet on loopback and
#            run a ring put together (item 72)
#   timeout0 process 0 waits for a peer that never comes: LPF_ERR_FATAL
#            with a clear message after the timeout (item 73)
#   timeout1 a process whose process 0 never listens: the same
set -u
prog=$1 mode=$2 n=${3:-2}
unset SUPERSTEP_ENGINE OMPI_COMM_WORLD_SIZE PMIX_RANK
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
case "$mode" in
  meet)
    for attempt in 1 2 3 4 5; do
      port=$(( 20000 + (RANDOM % 30000) ))
      pids=()
      for ((k = n - 1; k >= 0; k--)); do
        timeout 120 "$prog" 127.0.0.1 "$port" 60000 "$k" "$n" >"$tmp/out$k" 2>"$tmp/err$k" &
        pids[$k]=$!
      done
      rc0=0
      for ((k = 0; k < n; k++)); do
        wait "${pids[$k]}"; rc=$?
        [ "$rc" -ne 0 ] && rc0=$rc
      done
      cat "$tmp"/out* "$tmp"/err* 2>/dev/null
      if [ "$rc0" -eq 3 ] && grep -q "cannot listen" "$tmp/err0"; then
        echo "port $port is taken, trying another"; continue
      fi
      [ "$rc0" -eq 0 ] || { echo "FAILED: exit status $rc0"; exit 1; }
      [ "$(grep -c ': ok' "$tmp"/out*  | awk -F: '{s+=$2} END {print s}')" -eq "$n" ] || { echo "FAILED: not every process reported ok"; exit 1; }
      echo "all $n processes met and communicated"
      exit 0
    done
    echo "FAILED: no free port"; exit 1 ;;
  timeout0)
    port=$(( 20000 + (RANDOM % 30000) ))
    timeout 60 "$prog" 127.0.0.1 "$port" 1500 0 2 expect-timeout >"$tmp/out" 2>"$tmp/err"; rc=$?
    cat "$tmp/out" "$tmp/err"
    [ $rc -eq 0 ] || { echo "FAILED: exit status $rc"; exit 1; }
    grep -q "only 1 of 2 processes arrived at the meeting point 127.0.0.1:$port within the timeout of 1500 ms" "$tmp/err" \
      || { echo "FAILED: no clear message"; exit 1; } ;;
  timeout1)
    port=$(( 20000 + (RANDOM % 30000) ))
    timeout 60 "$prog" 127.0.0.1 "$port" 1500 1 2 expect-timeout >"$tmp/out" 2>"$tmp/err"; rc=$?
    cat "$tmp/out" "$tmp/err"
    [ $rc -eq 0 ] || { echo "FAILED: exit status $rc"; exit 1; }
    grep -q "could not reach process 0 at the meeting point 127.0.0.1:$port within the timeout of 1500 ms" "$tmp/err" \
      || { echo "FAILED: no clear message"; exit 1; } ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
