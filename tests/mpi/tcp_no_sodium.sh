#!/usr/bin/env bash
# tcp_no_sodium.sh PROGRAM: in a build without libsodium the TCP meeting
# (lpf_mpi_initialize_over_tcp) refuses at once, before listening or
# connecting, with LPF_ERR_FATAL and one line that says why. PROGRAM is
# tcp_test; process 0 and process 1 of 2 are tried (nobody else comes).
set -u
prog=$1
unset SUPERSTEP_ENGINE OMPI_COMM_WORLD_SIZE PMIX_RANK
export SUPERSTEP_TCP_SECRET="tcp_no_sodium.sh $$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; for f in "$tmp"/*; do echo "--- ${f##*/}"; cat "$f"; done; exit 1; }
want="lpf_mpi_initialize_over_tcp.*process %s: this Superstep was built without libsodium"
for pid in 0 1; do
  # expect-reject: LPF_ERR_FATAL well before the 20 s timeout
  timeout 60 "$prog" 127.0.0.1 1 20000 "$pid" 2 expect-reject >"$tmp/out.$pid" 2>"$tmp/err.$pid"
  rc=$?
  [ "$rc" -eq 0 ] || fail "process $pid: exit status $rc"
  grep -q ": ok" "$tmp/out.$pid" || fail "process $pid did not report ok"
  # shellcheck disable=SC2059
  grep -q "$(printf "$want" "$pid")" "$tmp/err.$pid" || fail "process $pid: no line saying why"
  n=$(grep -c . "$tmp/err.$pid")
  [ "$n" -eq 1 ] || fail "process $pid: $n lines on stderr, not one"
  cat "$tmp/err.$pid"
done
echo "the TCP meeting refused with one line, as a build without libsodium must"
