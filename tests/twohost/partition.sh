#!/usr/bin/env bash
# partition.sh TWOHOST DIR PROGRAM TIMEOUT bsprun-options...: cut the link
# between the two hosts of DIR (twohost.sh link down: packets are lost,
# nothing is refused) while PROGRAM (tests/mpi/long_run) syncs across them.
# SUPERSTEP_SYNC_TIMEOUT=TIMEOUT (0: unset) lets the engine give up first;
# either way Open MPI's daemons, with the keepalive bsprun sets
# (SUPERSTEP_HOST_TIMEOUT, default 12 s), notice the silent host: bsprun must
# end with a non-zero status within 60 s of the cut, name host b in one
# line, and nothing of the job may be left on host b (its daemon ends its
# ranks) within 30 s more. The link is restored at the end.
set -u
th=$1 dir=$2 prog=$3 sto=$4
shift 4
limit=60
marker="sstep-partition-$$-$RANDOM"
out=$(mktemp) err=$(mktemp)
pid=""
cleanup() {
  "$th" link "$dir" up
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -f "$out" "$err"
}
trap cleanup EXIT
fail() {
  echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
  echo "FAILED: $*"
  exit 1
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
daemons_b() { for p in $("$th" pids "$dir" b); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" = orted ] && echo "$p"; done; }
ranks_b() { for p in $("$th" pids "$dir" b); do grep -q -a -F -e "$marker" "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done; }

[ -z "$(daemons_b)" ] || fail "an Open MPI daemon is running on host b before the test"
if [ "$sto" != 0 ]; then export SUPERSTEP_SYNC_TIMEOUT=$sto; else unset SUPERSTEP_SYNC_TIMEOUT; fi
"$dir/bsprun" "$@" "$prog" 300 "$marker" >"$out" 2>"$err" </dev/null &
pid=$!
t0=$(now)
until grep -q '^started$' "$out"; do
  kill -0 "$pid" 2>/dev/null || fail "bsprun ended before the program started"
  [ "$(awk -v e="$(elapsed "$t0")" 'BEGIN { print (e > 30) }')" = 0 ] || fail "the program did not start within 30 s"
  sleep 0.1
done
[ -n "$(daemons_b)" ] || fail "no Open MPI daemon on host b"
echo "job started after $(elapsed "$t0") s; cutting the link"
t1=$(now)
"$th" link "$dir" down || fail "could not cut the link"
for _ in $(seq $((limit * 10))); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
  ps -e -o pid,ppid,stat,etime,args --forest | grep -v -e ' ps -e ' -e 'grep -v'
  fail "bsprun did not end within $limit s of the cut"
fi
wait "$pid"
rc=$?
pid=""
echo "bsprun ended $(elapsed "$t1") s after the cut, exit status $rc"
[ "$rc" -ne 0 ] || fail "exit status 0"
grep -q -e "^bsprun: lost host hostb" -e "^bsprun: a process failed .*other hosts of the job: hostb)" "$err" ||
  fail "no line naming host b"
t2=$(now)
left=""
for _ in $(seq 300); do
  left="$(daemons_b) $(ranks_b)"
  [ -z "${left// /}" ] && break
  sleep 0.1
done
if [ -n "${left// /}" ]; then
  ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')"
  for p in $left; do kill -KILL "$p" 2>/dev/null; done
  fail "left on host b 30 s after bsprun ended: $(echo $left)"
fi
echo "host b empty $(elapsed "$t2") s after bsprun ended"
echo "--- stderr"; cat "$err"
echo ok
