#!/usr/bin/env bash
# tag_output.sh BSPRUN TAG_PROG ENGINE N [T]: with --tag-output every line
# of every process starts with that process's BSP pids ("[3] "; "[2-3] " for
# a hybrid rank of two threads), wherever the process runs (through bsprun's
# own pipes or, from other hosts, through the launcher); each process's
# unterminated last line stays a line of its own, tagged or not.
set -u
bsprun=$1 prog=$2 engine=$3 n=$4 t=${5:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hyb=()
[ "$engine" = hybrid ] && hyb=(-t "$t")
fail() { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; echo "FAILED ($engine, n=$n): $*"; exit 1; }
# the tag of process s
tagof() {
  local lo hi
  if [ "$engine" = hybrid ]; then
    lo=$(( s / t * t )) hi=$(( s / t * t + t - 1 ))
    [ "$hi" -gt $((n - 1)) ] && hi=$((n - 1))
    [ "$hi" -gt "$lo" ] && { echo "[$lo-$hi] "; return; }
    echo "[$lo] "
  else
    echo "[$s] "
  fi
}
for tagged in 1 0; do
  opt=()
  [ "$tagged" = 1 ] && opt=(--tag-output)
  timeout 120 "$bsprun" --engine "$engine" -n "$n" "${hyb[@]}" "${opt[@]}" "$prog" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  [ "$rc" = 0 ] || fail "exit status $rc"
  for ((s = 0; s < n; ++s)); do
    tg=""
    [ "$tagged" = 1 ] && tg=$(tagof)
    grep -qxF "${tg}line from $s" "$tmp/out" || fail "no line '${tg}line from $s'"
    if [ "$engine" = hybrid ]; then
      # the threads of one rank share its stdout: their unterminated last
      # lines may join each other, never another rank's
      lo=$(( s / t * t )) hi=$(( s / t * t + t - 1 ))
      alt=$(seq -s '|' "$lo" "$hi")
      grep -qE "^$(printf '%s' "$tg" | sed 's/[][]/\\&/g')(last from ($alt))+\$" "$tmp/out" ||
        fail "no line of rank $((s / t)) of its own with 'last from $s'"
      grep -q "last from $s" "$tmp/out" || fail "no 'last from $s'"
    else
      grep -qxF "${tg}last from $s" "$tmp/out" || fail "no line of its own '${tg}last from $s'"
    fi
    grep -qxF "${tg}err from $s" "$tmp/err" || fail "no line '${tg}err from $s' on stderr"
  done
  [ "$(wc -l <"$tmp/err")" = "$n" ] || fail "more on stderr than the program's lines"
  echo "tagged=$tagged: ok"
done
echo ok
