#!/usr/bin/env bash
# lines_on_time.sh BSPRUN PROGRESS ENGINE N [bsprun options]: every line the
# program prints reaches bsprun's stdout and stderr as soon as its newline
# is written, with mawk as the awk on the PATH (it reads a pipe in blocks).
# PROGRESS (progress.c) prints its first lines, then waits until this
# script has seen process 0's at the terminal: held-back lines fail the
# test (the program gives up after 60 s), no timing is measured. With
# --tag-output the lines must carry process 0's own tag ("[0] ", on threads
# too), and the stdout line is not flushed by the program (the library
# writes each tagged line as soon as its newline is written). A shell
# program whose ranks print straight through the MPI launcher (its output
# not forwarded by the library) checks the launcher's path the same way.
set -u
bsprun=$1 prog=$2 engine=$3 n=$4
shift 4
command -v mawk >/dev/null || { echo "no mawk (scripts/setup.sh installs it)"; exit 77; }
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
# awk on the PATH is mawk
mkdir "$tmp/bin"
ln -s "$(command -v mawk)" "$tmp/bin/awk"
export PATH="$tmp/bin:$PATH"
fail() {
  echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"
  echo "FAILED ($engine, n=$n, $*): $why"
  exit 1
}
# one run: wait for lines matching $1 (stderr) and $2 (stdout), then make
# the go file; the job must end with status 0
check() {
  local want_err=$1 want_out=$2 i
  shift 2
  rm -f "$tmp/go" "$tmp/out" "$tmp/err"
  "$bsprun" --engine "$engine" -n "$n" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
  pid=$!
  for ((i = 0; i < 900; ++i)); do
    grep -q -- "$want_err" "$tmp/err" && grep -q -- "$want_out" "$tmp/out" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  touch "$tmp/go"
  wait "$pid"
  rc=$?
  pid=""
  why="the first lines did not arrive while the program waited"
  grep -q -- "$want_err" "$tmp/err" && grep -q -- "$want_out" "$tmp/out" || fail "$*"
  why="exit status $rc"
  [ "$rc" = 0 ] || fail "$*"
  grep -q "progress 2 from 0" "$tmp/err" || { why="no second line"; fail "$*"; }
}
tagged=0
for o in "$@"; do [ "$o" = --tag-output ] && tagged=1; done
if [ "$tagged" = 1 ]; then
  PROGRESS_NO_FLUSH=1 check "^\[0\] progress 1 from 0\$" "^\[0\] out 1 from 0\$" ${1+"$@"} "$prog" "$tmp/go"
else
  check "progress 1 from 0" "out 1 from 0" ${1+"$@"} "$prog" "$tmp/go"
fi
echo "superstep program: ok"
if [ "$engine" != pthread ]; then
  # every rank prints through the launcher; rank 0 waits for the go file
  sh_prog='r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}; echo "progress 1 from $r" >&2; echo "out 1 from $r"
    if [ "$r" = 0 ]; then i=0; while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
      [ -e "$1" ] || { echo "the first lines did not reach the terminal within 60 s" >&2; exit 3; }; fi
    echo "progress 2 from $r" >&2'
  if [ "$tagged" = 1 ]; then
    check "^\[0\] progress 1 from 0\$" "^\[0\] out 1 from 0\$" ${1+"$@"} sh -c "$sh_prog" sh "$tmp/go"
  else
    check "progress 1 from 0" "out 1 from 0" ${1+"$@"} sh -c "$sh_prog" sh "$tmp/go"
  fi
  echo "launcher path: ok"
fi
echo "ok"
