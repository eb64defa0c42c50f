#!/usr/bin/env bash
# signals.sh BSPRUN PROGRAM ENGINE NPROCS SIGNAL: bsprun, sent SIGNAL (INT,
# TERM or HUP) while PROGRAM (long_run) syncs in a loop, ends within seconds
# with 128 + the signal's number, and leaves no process of the job behind
# (MPI launcher, ranks, bsprun's output filter).
#
# A process that starts with a signal ignored keeps it ignored (a shell
# cannot trap or reset it), and a non-interactive shell starts its
# background jobs with SIGINT ignored; ctest may run us with it ignored too.
# So bsprun is started through python3, which puts the dispositions back to
# the default before it execs bsprun (the job's pid is bsprun's).
set -u
bsprun=$1 prog=$2 engine=$3 n=$4 sig=$5
signum=$(kill -l "$sig") || exit 2
expect=$((128 + signum))
limit=10        # seconds from the signal to bsprun's exit
start_limit=30  # seconds until the program has started
marker="sstep-signals-$$-$RANDOM$RANDOM"
out=$(mktemp) err=$(mktemp)
pid=""

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# the job's processes (tests/lib/job_pids.sh)
. "$(dirname "${BASH_SOURCE[0]}")/../lib/job_pids.sh"
job_pids() { job_pids_of SSTEP_SIGNALS_MARKER "$marker"; }
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  local p
  for p in $(job_pids); do kill -KILL "$p" 2>/dev/null; done
  rm -f "$out" "$err"
}
trap cleanup EXIT
trap 'exit 3' INT TERM HUP
fail() {
  echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
  echo "FAILED: $*"
  exit 1
}

python=$(command -v python3) || { echo "python3 not found: skipped"; exit 77; }
SSTEP_SIGNALS_MARKER=$marker "$python" -c '
import os, signal, sys
for s in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGPIPE", "SIGXFSZ"):
    if hasattr(signal, s):
        signal.signal(getattr(signal, s), signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_SETMASK, [])
os.execvp(sys.argv[1], sys.argv[1:])
' "$bsprun" --engine "$engine" -n "$n" "$prog" 60 "$marker" >"$out" 2>"$err" </dev/null &
pid=$!

t0=$(now)
until grep -q '^started$' "$out"; do
  kill -0 "$pid" 2>/dev/null || fail "bsprun ended before the program started"
  [ "$(awk -v e="$(elapsed "$t0")" -v l=$start_limit 'BEGIN { print (e > l) }')" = 0 ] ||
    fail "the program did not start within $start_limit s"
  sleep 0.1
done
echo "$engine on $n processes started after $(elapsed "$t0") s; sending SIG$sig to bsprun ($pid)"
# a moment inside the loop of supersteps
sleep 0.5

t1=$(now)
kill -s "$sig" "$pid"
# a watchdog ends a bsprun that does not end by itself
( trap 'kill "$s" 2>/dev/null; exit 0' TERM
  sleep $limit & s=$!
  wait "$s" && kill -KILL "$pid" 2>/dev/null ) &
dog=$!
wait "$pid"
rc=$?
dt=$(elapsed "$t1")
kill "$dog" 2>/dev/null
wait "$dog" 2>/dev/null
pid=""
echo "bsprun exit status $rc after $dt s"

# nothing of the job may remain (a process SIGKILLed just now may take a
# moment to go)
left=""
for _ in $(seq 10); do
  left=$(job_pids)
  [ -z "$left" ] && break
  sleep 0.1
done
if [ -n "$left" ]; then
  echo "--- processes left behind"
  # shellcheck disable=SC2086
  ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')"
  fail "processes of the job left behind: $(echo $left)"
fi
[ "$rc" -ne 137 ] || fail "bsprun did not end within $limit s of SIG$sig"
[ "$rc" -eq "$expect" ] || fail "exit status $rc, not 128 + $signum = $expect"
! grep -q '^finished$' "$out" || fail "the program ran to its end"
echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
echo "ok"
