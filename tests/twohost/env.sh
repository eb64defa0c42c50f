#!/usr/bin/env bash
# env.sh DIR: what reaches the processes on the other host (DIR/bsprun,
# twohost.sh): SUPERSTEP_* and LPF_* always, a program's own variables only
# with bsprun -x NAME[=VALUE]; without it they reach bsprun's host only.
set -u
dir=$1
fail() { echo "FAILED: $*"; exit 1; }
show='echo "$(hostname): x=${SSTEP_TH_X-unset} y=${SUPERSTEP_TH_Y-unset}"'
run() {
  local out
  out=$("$dir/bsprun" --engine mpi -n 2 "$@" sh -c "$show") || fail "bsprun $*: status $?: $out"
  echo "bsprun $*:" >&2
  printf '%s\n' "$out" | sort >&2
  printf '%s\n' "$out" | sort | tr '\n' ' '
}
export SSTEP_TH_X=outside SUPERSTEP_TH_Y=always
got=$(run)
[ "$got" = "hosta: x=outside y=always hostb: x=unset y=always " ] || fail "without -x: $got"
got=$(run -x SSTEP_TH_X)
[ "$got" = "hosta: x=outside y=always hostb: x=outside y=always " ] || fail "-x NAME: $got"
got=$(run -x SSTEP_TH_X=given)
[ "$got" = "hosta: x=given y=always hostb: x=given y=always " ] || fail "-x NAME=VALUE: $got"
echo "ok"
