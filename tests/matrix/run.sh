#!/usr/bin/env bash
# run.sh MODE DIR command...: the `matrix` label's check of one program on
# one engine layout. The command runs plain (it must exit 0); with MODE
# "check" it runs again under SUPERSTEP_CHECK=1 (exit 0, no line from
# checked mode on stderr, the same output), with MODE "profile" under
# SUPERSTEP_PROFILE=DIR/profile (exit 0, the same output, the report
# written). "The same output": stdout with times (a number followed by s,
# ms or us) masked and lines sorted (processes print in any order).
set -u
mode=$1 dir=$2
shift 2
mkdir -p "$dir"
norm() { sed -E 's/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)? ?(ms|us|s)\b/T/g' "$1" | LC_ALL=C sort; }
fail() { echo "FAILED ($mode): $*"; exit 1; }
run() {   # run NAME [VAR=VALUE...]: the command with those settings
  local name=$1
  shift
  env -u SUPERSTEP_CHECK -u SUPERSTEP_PROFILE "$@" "${cmd[@]}" >"$dir/$name.out" 2>"$dir/$name.err"
  local rc=$?
  echo "---- $name: exit status $rc"
  cat "$dir/$name.out" "$dir/$name.err"
  return $rc
}
cmd=("$@")
echo "command: ${cmd[*]}"
run plain || fail "the plain run failed"
case $mode in
plain) ;;
check)
  run check SUPERSTEP_CHECK=1 || fail "the checked run failed"
  if grep -q '^superstep: ' "$dir/check.err"; then fail "checked mode reported something"; fi
  [ "$(norm "$dir/plain.out")" = "$(norm "$dir/check.out")" ] || fail "output differs in checked mode"
  ;;
profile)
  rm -rf "$dir/profile"
  run profile "SUPERSTEP_PROFILE=$dir/profile" || fail "the profiled run failed"
  grep -q 'profile written to' "$dir/profile.err" || fail "no 'profile written to' line"
  [ -s "$dir/profile/report.html" ] || fail "no report in $dir/profile"
  [ "$(norm "$dir/plain.out")" = "$(norm "$dir/profile.out")" ] || fail "output differs when profiled"
  ;;
*) fail "unknown mode" ;;
esac
echo "ok"
