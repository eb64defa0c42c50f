#!/usr/bin/env bash
# launch_fail.sh BSPRUN LONG_RUN ENGINE: a launch that fails says why in one
# line on stderr (program, host, reason) with bsprun's documented status
# (docs/mpi.md): 127 program not found (here, or where the launcher tried
# it), 126 not runnable, 125 launcher missing or not working, 128 + n for a
# launcher killed by signal n (no notice of bash's with bsprun's insides).
set -u
bsprun=$1 long=$2 engine=$3
tmp=$(mktemp -d)
marker="sstep-launch-$$-$RANDOM$RANDOM"
pid=""
. "$(dirname "${BASH_SOURCE[0]}")/../lib/job_pids.sh"
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  local p
  for p in $(job_pids_of SSTEP_LAUNCH_MARKER "$marker"); do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
host=$(uname -n)
fail() { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; echo "FAILED ($engine): $*"; exit 1; }
# expect STATUS LINE bsprun-args...: exactly one line on stderr, this one
expect() {
  local want=$1 line=$2
  shift 2
  (cd "$tmp" && timeout 120 "$bsprun" --engine "$engine" -n 2 "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  echo "bsprun $*: status $rc: $(cat "$tmp/err")"
  [ "$rc" = "$want" ] || fail "bsprun $*: status $rc, expected $want"
  [ "$(cat "$tmp/err")" = "$line" ] || fail "bsprun $*: expected the one line '$line'"
  [ ! -s "$tmp/out" ] || fail "bsprun $*: something on stdout"
}
mkdir "$tmp/dir"
touch "$tmp/plain"
cp "$long" "$tmp/prog"
expect 127 "bsprun: cannot start ./nonexist on host $host: no such file" ./nonexist
expect 127 "bsprun: cannot start prog on host $host: not found in PATH (did you mean ./prog?)" prog
expect 126 "bsprun: cannot start $tmp/dir on host $host: it is a directory" "$tmp/dir"
expect 126 "bsprun: cannot start ./plain on host $host: not executable (no execute permission)" ./plain
if [ "$engine" = pthread ]; then
  # the program killed by a signal under --tag-output (it runs as bsprun's
  # child): one line of bsprun's, 128 + 9, no notice of bash's
  (cd "$tmp" && timeout 60 "$bsprun" -n 2 --tag-output sh -c 'kill -9 $$') >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  echo "program killed: status $rc: $(cat "$tmp/err")"
  [ "$rc" = 137 ] || fail "program killed: status $rc, expected 137"
  grep -qx "bsprun: sh (pid [0-9]*) was killed by signal 9 (KILL)" "$tmp/err" || fail "program killed: no line saying so"
  [ "$(wc -l <"$tmp/err")" = 1 ] || fail "program killed: more than one line"
  echo ok
  exit 0
fi

expect 125 "bsprun: the MPI launcher 'no-such-mpirun' was not found (from --mpirun, SUPERSTEP_MPIRUN or the PATH)" \
  --mpirun no-such-mpirun ./prog
printf '#!/bin/sh\nexit 1\n' >"$tmp/badrun"
chmod +x "$tmp/badrun"
expect 125 "bsprun: the MPI launcher '$tmp/badrun' does not work: '$tmp/badrun --version' ended with status 1" \
  --mpirun "$tmp/badrun" ./prog
# the launcher cannot start the program where it tries (here a launcher
# that swaps the program for a missing one, as on a host without it)
real=$(command -v mpirun) || { echo "no mpirun: the rest skipped"; echo ok; exit 0; }
cat >"$tmp/swaprun" <<EOS
#!/bin/sh
[ "\$1" = --version ] && exec "$real" --version
for a do
  shift
  case "\$a" in */prog) a=$tmp/gone/prog ;; esac
  set -- "\$@" "\$a"
done
exec "$real" "\$@"
EOS
chmod +x "$tmp/swaprun"
(cd "$tmp" && timeout 120 "$bsprun" --engine "$engine" -n 2 --mpirun "$tmp/swaprun" ./prog) >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
echo "missing where launched: status $rc: $(cat "$tmp/err")"
[ "$rc" = 127 ] || fail "missing where launched: status $rc, expected 127"
grep -qx "bsprun: cannot start $tmp/gone/prog on host $host: no such file there, or not an executable file" "$tmp/err" ||
  fail "missing where launched: no line naming the program and the host"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "missing where launched: more than one line"
[ ! -s "$tmp/out" ] || fail "missing where launched: something on stdout"

# the launcher killed: one line of bsprun's, 128 + 9
SSTEP_LAUNCH_MARKER=$marker "$bsprun" --engine "$engine" -n 2 "$long" 60 "$marker" >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
for ((i = 0; i < 300; ++i)); do
  grep -q '^started$' "$tmp/out" && break
  kill -0 "$pid" 2>/dev/null || fail "bsprun ended before the program started"
  sleep 0.1
done
grep -q '^started$' "$tmp/out" || fail "the program did not start within 30 s"
launcher=""
for p in $(pgrep -P "$pid"); do
  case "$(cat "/proc/$p/comm" 2>/dev/null)" in mpirun | mpiexec | orterun | prterun) launcher=$p ;; esac
done
[ -n "$launcher" ] || fail "no launcher below bsprun"
kill -KILL "$launcher"
wait "$pid"
rc=$?
pid=""
echo "launcher killed: status $rc: $(cat "$tmp/err")"
[ "$rc" = 137 ] || fail "launcher killed: status $rc, expected 137"
grep -q "^bsprun: the MPI launcher mpirun (pid $launcher) was killed by signal 9 (KILL)" "$tmp/err" ||
  fail "launcher killed: no line saying so"
grep -q "line [0-9]*:" "$tmp/err" && fail "launcher killed: bash's notice reached the user"
echo ok
