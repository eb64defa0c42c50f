#!/usr/bin/env bash
# stdin_closed.sh BSPRUN STDIN_FDS ENGINE N [bsprun options]: with bsprun's
# standard input closed, process 0 reads end of file -- never MPI's traffic
# -- after the processes have talked (with Open MPI's TCP transport, or
# across hosts, MPI opens its sockets then), and no descriptor 0, 1 or 2 of
# any process is a socket. Then with data and with /dev/null on stdin.
set -u
bsprun=$1 prog=$2 engine=$3 n=$4
shift 4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
run() {   # run EXPECTED [stdin redirection made by the caller]
  local want=$1 rc
  timeout 120 "$bsprun" --engine "$engine" -n "$n" "${opts[@]}" "$prog" >"$out" 2>&1
  rc=$?
  cat "$out"
  [ "$rc" = 0 ] || { echo "FAILED: exit status $rc"; exit 1; }
  grep -qx "$want" "$out" || { echo "FAILED: expected '$want'"; exit 1; }
}
opts=("$@")
run "stdin: EOF" <&-
echo "closed: ok"
run "stdin: data 'hello there'" < <(echo "hello there")
echo "data: ok"
run "stdin: EOF" </dev/null
echo "ok"
