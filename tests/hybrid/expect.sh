#!/usr/bin/env bash
# expect.sh STATUS REGEX LIMIT command...: the command (a whole job) must end
# within LIMIT seconds with exit status STATUS ("nonzero": any but 0) and
# print a line matching REGEX (extended, on stdout or stderr; "-": none
# required); no process of the job may be left behind.
set -u
want=$1 regex=$2 limit=$3
shift 3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
t0=$(date +%s.%N)
timeout 120 "$@" >"$out" 2>&1
rc=$?
dt=$(echo "$(date +%s.%N) - $t0" | bc)
echo "exit status $rc after $dt s: $*"
cat "$out"
fail() { echo "FAILED: $*"; exit 1; }
[ "$rc" -ne 124 ] || fail "the job hung"
[ "$(echo "$dt < $limit" | bc)" = 1 ] || fail "took $dt s (more than $limit)"
if [ "$want" = nonzero ]; then
  [ "$rc" -ne 0 ] || fail "exit status 0"
else
  [ "$rc" -eq "$want" ] || fail "exit status $rc, expected $want"
fi
if [ "$regex" != "-" ]; then
  grep -Eq -- "$regex" "$out" || fail "no line matches: $regex"
fi
sleep 0.5
# the job's processes run "PROGRAM MODE" (the last two words)
n=$#
if [ "$n" -ge 2 ]; then
  pat="$(eval echo "\${$((n - 1))}") $(eval echo "\${$n}")"
  left=$(pgrep -f -x "$(printf '%s' "$pat" | sed 's/[][().*^$+?{}|\\]/./g')" || true)
  [ -z "$left" ] || fail "processes left behind: $left"
fi
echo "ok"
