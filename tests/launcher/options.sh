#!/usr/bin/env bash
# options.sh BSPRUN LPFRUN: bsprun's and lpfrun's options and variables.
# -x settings are for the program only (-x PATH= leaves bsprun working;
# -x LD_PRELOAD reaches the program's processes and nothing of bsprun's or
# the launcher's); absurd numbers and settings are refused with one line and
# status 2; --help names the launcher --dry-run uses.
set -u
bsprun=$1 lpfrun=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; echo "FAILED: $*"; exit 1; }
mpi=0
command -v mpirun >/dev/null && mpi=1
[ "${SSTEP_OPTIONS_MPI:-1}" = 0 ] && mpi=0
engines=(pthread)
[ "$mpi" = 1 ] && engines+=(mpi)

for e in "${engines[@]}"; do
  # -x PATH=: bsprun's own commands still found; the program sees it
  timeout 120 "$bsprun" --engine "$e" -n 2 -x PATH= sh -c 'echo "path=[$PATH]"' >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 0 ] || fail "$e: -x PATH=: status $rc"
  grep -qx 'path=\[\]' "$tmp/out" || fail "$e: -x PATH=: the program did not see it"
  # -x LD_PRELOAD: the dynamic loader complains once per process started
  # with it: the program's processes only
  timeout 120 "$bsprun" --engine "$e" -n 2 -x LD_PRELOAD="$tmp/no-such-preload.so" true >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 0 ] || fail "$e: -x LD_PRELOAD: status $rc"
  want=1
  [ "$e" = mpi ] && want=2
  got=$(grep -c "no-such-preload.so" "$tmp/err")
  [ "$got" = "$want" ] || fail "$e: -x LD_PRELOAD reached $got processes, not the program's $want"
  echo "$e: -x for the program only: ok"
done

# expect STATUS LINE command...: status, and exactly that one line on stderr
expect() {
  local want=$1 line=$2
  shift 2
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$?
  [ "$rc" = "$want" ] || fail "$*: status $rc, expected $want"
  [ "$(cat "$tmp/err")" = "$line" ] || fail "$*: expected the one line '$line'"
  echo "$*: $line"
}
expect 2 "lpfrun: -np takes a number of processes, 1 to 1048576, not '99999999999999999999'" \
  "$lpfrun" -np 99999999999999999999 true
expect 2 "lpfrun: -np takes a number of processes, 1 to 1048576, not '0'" "$lpfrun" -np 0 true
expect 2 "lpfrun: LPF_MAX_PROCS=1e9 is not a number of processes (1 to 1048576)" env LPF_MAX_PROCS=1e9 "$lpfrun" true
expect 2 "bsprun: LPF_MAX_PROCS=1e9 is not a number of processes (1 to 1048576)" env LPF_MAX_PROCS=1e9 "$bsprun" true
expect 2 "bsprun: the number of processes must be 1 to 1048576, not '99999999999999999999'" \
  "$bsprun" -n 99999999999999999999 true
expect 2 "bsprun: the number of processes must be 1 to 1048576, not '010'" "$bsprun" -n 010 true
expect 2 "bsprun: -x SUPERSTEP_ENGINE: bsprun sets SUPERSTEP_ENGINE itself (use its options -n, --engine, -t, --tag-output)" \
  "$bsprun" -x SUPERSTEP_ENGINE=mpi true
if [ "$mpi" = 1 ]; then
  expect 2 "bsprun: the threads per rank must be 1 to 4096, not '99999999999'" \
    "$bsprun" --engine hybrid -n 2 -t 99999999999 true
  expect 2 "bsprun: SUPERSTEP_KILL_GRACE=abc is not a number of seconds (0 to 99999)" \
    env SUPERSTEP_KILL_GRACE=abc "$bsprun" --engine mpi -n 2 true
  # --help names the launcher --dry-run takes: the PATH's mpirun first
  "$bsprun" --help | tr -s ' \n' ' ' | grep -q 'default: $SUPERSTEP_MPIRUN, else mpirun or mpiexec as the PATH gives them' ||
    fail "--help does not name the PATH's mpirun first"
  first=$(env -u SUPERSTEP_MPIRUN "$bsprun" --dry-run --engine mpi -n 2 true | cut -d' ' -f1)
  [ "$first" = mpirun ] || fail "--dry-run starts with '$first', not mpirun"
  echo "--help and --dry-run agree on the launcher: ok"
fi
echo "ok"
