#!/usr/bin/env bash
# tag_output.sh BSPRUN TAG_PROG ENGINE N [T]: with --tag-output every line
# a process prints through stdio starts with its own BSP pid ("[3] "), on
# every engine (threads of one process, hybrid ranks' threads, MPI ranks,
# wherever they run: through bsprun's own pipes or, from other hosts,
# through the launcher); each process's unterminated last line stays a line
# of its own, tagged or not. What a process writes past stdio (write(2) on
# descriptor 1) carries the pids of its OS process: "[0-2] " on threads,
# "[2-3] " for a hybrid rank of two threads.
set -u
bsprun=$1 prog=$2 engine=$3 n=$4 t=${5:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hyb=()
[ "$engine" = hybrid ] && hyb=(-t "$t")
fail() { echo "--- stdout"; cat "$tmp/out"; echo "--- stderr"; cat "$tmp/err"; echo "FAILED ($engine, n=$n): $*"; exit 1; }
# the tag of the OS process of BSP process s
rawtag() {
  local lo hi
  case "$engine" in
    hybrid) lo=$(( s / t * t )) hi=$(( s / t * t + t - 1 )) ;;
    pthread) lo=0 hi=$((n - 1)) ;;
    *) lo=$s hi=$s ;;
  esac
  [ "$hi" -gt $((n - 1)) ] && hi=$((n - 1))
  [ "$hi" -gt "$lo" ] && { echo "[$lo-$hi] "; return; }
  echo "[$lo] "
}
for tagged in 1 0; do
  opt=()
  [ "$tagged" = 1 ] && opt=(--tag-output)
  timeout 120 "$bsprun" --engine "$engine" -n "$n" "${hyb[@]}" "${opt[@]}" "$prog" >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  [ "$rc" = 0 ] || fail "exit status $rc"
  for ((s = 0; s < n; ++s)); do
    tg="" rt=""
    [ "$tagged" = 1 ] && tg="[$s] " rt=$(rawtag)
    grep -qxF "${tg}line from $s" "$tmp/out" || fail "no line '${tg}line from $s'"
    if [ "$engine" != mpi ] && [ "$tagged" = 0 ]; then
      # untagged, threads that share an OS process share its output as
      # they wrote it: their unterminated last lines may join each other
      # (never another rank's)
      alt=$(rawtag | tr -d '[] ')
      alt=$(seq -s '|' "${alt%-*}" "${alt#*-}")
      grep -qE "^(last from ($alt))*last from $s(last from ($alt))*\$" "$tmp/out" ||
        fail "no line of its OS process's own with 'last from $s'"
    else
      grep -qxF "${tg}last from $s" "$tmp/out" || fail "no line of its own '${tg}last from $s'"
    fi
    grep -qxF "${tg}err from $s" "$tmp/err" || fail "no line '${tg}err from $s' on stderr"
    grep -qxF "${rt}raw from $s" "$tmp/out" || fail "no line '${rt}raw from $s'"
  done
  # every line once, and with no pid but its own
  for w in line raw; do
    [ "$(grep -c "$w from" "$tmp/out")" = "$n" ] || fail "not $n lines with '$w from'"
  done
  if [ "$tagged" = 1 ]; then
    bad=$(grep -E '(line|last) from' "$tmp/out" | grep -vxE '\[([0-9]+)\] (line|last) from \1')
    [ -z "$bad" ] && bad=$(grep -vxE '\[([0-9]+)\] err from \1' "$tmp/err")
    [ -z "$bad" ] || fail "lines with another process's pid, or more than one: $bad"
  fi
  if [ "$engine" = mpi ] || [ "$tagged" = 1 ]; then
    [ "$(grep -c "" "$tmp/out")" = $((3 * n)) ] || fail "more on stdout than the program's lines"
  fi
  [ "$(wc -l <"$tmp/err")" = "$n" ] || fail "more on stderr than the program's lines"
  echo "tagged=$tagged: ok"
done
echo ok
