#!/usr/bin/env bash
# lost_host.sh TWOHOST DIR PROGRAM EXPECT bsprun-options...: kill host b's
# Open MPI daemon while PROGRAM (tests/mpi/long_run) syncs across the two
# hosts of DIR (twohost.sh). The job must end within seconds with a
# non-zero status, and bsprun must name the lost host and its BSP processes
# in one line: "bsprun: lost host hostb (BSP processes EXPECT): ...".
set -u
th=$1 dir=$2 prog=$3 expect=$4
shift 4
limit=20   # seconds from the kill to bsprun's exit
marker="sstep-lost-host-$$-$RANDOM"
out=$(mktemp) err=$(mktemp)
pid=""
cleanup() {
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
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# is process $1 below process $2?
below() {
  local p=$1 pp
  while [ "$p" -gt 1 ]; do
    [ "$p" = "$2" ] && return 0
    pp=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) || return 1
    p=${pp:-1}
  done
  return 1
}

"$dir/bsprun" "$@" "$prog" 60 "$marker" >"$out" 2>"$err" </dev/null &
pid=$!
t0=$(now)
until grep -q '^started$' "$out"; do
  kill -0 "$pid" 2>/dev/null || fail "bsprun ended before the program started"
  [ "$(awk -v e="$(elapsed "$t0")" 'BEGIN { print (e > 30) }')" = 0 ] || fail "the program did not start within 30 s"
  sleep 0.1
done
daemon=""
for p in $("$th" pids "$dir" b); do
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = orted ] && below "$p" "$pid" && daemon=$p
done
[ -n "$daemon" ] || fail "no Open MPI daemon of this job on host b"
echo "job started after $(elapsed "$t0") s; killing host b's daemon (pid $daemon)"
t1=$(now)
kill -KILL "$daemon"
for _ in $(seq $((limit * 10))); do
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$pid" 2>/dev/null && fail "bsprun did not end within $limit s of the daemon's death"
wait "$pid"
rc=$?
dt=$(elapsed "$t1")
pid=""
echo "bsprun exit status $rc after $dt s"
[ "$rc" -ne 0 ] || fail "exit status 0"
line="bsprun: lost host hostb (BSP process $expect): "
case "$expect" in *[,-]*) line="bsprun: lost host hostb (BSP processes $expect): " ;; esac
grep -Fq -- "$line" "$err" || fail "no line: $line"
[ "$(grep -c '^bsprun: lost host' "$err")" = 1 ] || fail "more than one line names the lost host"
# the ranks on host b lost their daemon: they must not run on
left=""
for _ in $(seq 50); do
  left=$(for p in $("$th" pids "$dir" b); do grep -q -a -F -e "$marker" "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done)
  [ -z "$left" ] && break
  sleep 0.1
done
if [ -n "$left" ]; then
  ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')"
  for p in $left; do kill -KILL "$p" 2>/dev/null; done
  fail "processes left on host b: $(echo $left)"
fi
echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
echo "ok"
