#!/usr/bin/env bash
# term.sh BSPRUN PROGRAM ENGINE NPROCS CASE: how bsprun and the engines
# behave around the program as the user's terminal sees them (term_prog.c).
# ENGINE is pthread, mpi or hybrid (2 threads per rank; hybrid:T for T).
# Every run
# is under `timeout`; cases that kill a job check, by a marker on the job's
# command lines and in its environment, that none of its processes is left.
set -u
bsprun=$1 prog=$2 engine=${3%%:*} n=$4 case=$5
tpr=2
case "$3" in *:*) tpr=${3#*:} ;; esac
tmp=$(mktemp -d)
out=$tmp/out err=$tmp/err
marker="sstep-term-$$-$RANDOM$RANDOM"
pid=""
hyb=()
[ "$engine" = hybrid ] && hyb=(-t "$tpr")

# the job's processes (tests/lib/job_pids.sh)
. "$(dirname "${BASH_SOURCE[0]}")/../lib/job_pids.sh"
job_pids() { job_pids_of SSTEP_TERM_MARKER "$marker"; }
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  local p
  for p in $(job_pids); do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "--- stdout"; head -c 4000 "$out"; echo "--- stderr"; head -c 4000 "$err"
  echo "FAILED ($case, $engine, n=$n): $*"
  exit 1
}
run() {   # run [bsprun options] -- program arguments; stdin as given
  SSTEP_TERM_MARKER=$marker timeout 60 "$bsprun" --engine "$engine" -n "$n" "${hyb[@]}" "$@" \
    >"$out" 2>"$err"
  rc=$?
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"; }
nothing_left() {   # wait up to $1 s for the job's processes to go
  local left="" i
  for ((i = 0; i < $1 * 10; ++i)); do
    left=$(job_pids)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  # shellcheck disable=SC2086
  ps -o pid,ppid,stat,args -p "$(echo $left | tr ' ' ',')"
  fail "processes of the job left behind: $(echo $left)"
}

case "$case" in
  sigkill)   # bsprun SIGKILLed: the job notices and ends within 2 s
    SSTEP_TERM_MARKER=$marker setsid "$bsprun" --engine "$engine" -n "$n" "${hyb[@]}" \
      "$prog" loop "$marker" >"$out" 2>"$err" </dev/null &
    pid=$!
    for ((i = 0; i < 300; ++i)); do
      grep -q '^started$' "$out" && break
      kill -0 "$pid" 2>/dev/null || fail "bsprun ended before the program started"
      sleep 0.1
    done
    grep -q '^started$' "$out" || fail "the program did not start within 30 s"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null
    pid=""
    nothing_left 2
    ;;
  stdin)   # process 0 sees bsprun's stdin: data, EOF (also where closed)
    echo "hello there" >"$tmp/in"
    run "$prog" stdin <"$tmp/in"
    expect_rc 0
    grep -qx "stdin: data 'hello there'" "$out" || fail "data: not read"
    run "$prog" stdin </dev/null
    expect_rc 0
    grep -qx "stdin: EOF" "$out" || fail "/dev/null: no EOF"
    # closed: /dev/null instead (nothing else may take descriptor 0)
    run "$prog" stdin <&-
    expect_rc 0
    grep -qx "stdin: EOF" "$out" || fail "closed: no EOF"
    printf 'piped\n' | { run "$prog" stdin; echo "$rc" >"$tmp/rc"; }
    rc=$(cat "$tmp/rc")
    expect_rc 0
    grep -qx "stdin: data 'piped'" "$out" || fail "pipe: not read"
    ;;
  lines)   # whole lines in order per process; --tag-output
    N=3000
    check_lines() {   # check_lines TAGGED
      awk -v P="$n" -v N="$N" -v tagged="$1" '
        {
          line = $0
          if (tagged) {
            if (!match(line, /^\[[0-9]+(-[0-9]+)?\] /)) { print "untagged: " line; bad = 1; next }
            tag = substr(line, 2, RLENGTH - 3); line = substr(line, RLENGTH + 1)
          }
          if (line !~ /^line [0-9]+ [0-9]+ of process [0-9]+: the end$/) { print "bad line: " $0; bad = 1; next }
          split(line, w, " ")
          s = w[2]; i = w[3]
          if (w[6] != s ":") { print "spliced: " $0; bad = 1; next }
          if (i != next_i[s] + 0) { print "out of order: " $0; bad = 1; next }
          next_i[s] = i + 1
          # every process its own pid (threads of one process and of a
          # hybrid rank too: the library tags their lines)
          if (tagged && tag != s "") { print "tag " tag " for process " s; bad = 1 }
        }
        END {
          for (s = 0; s < P; ++s) if (next_i[s] != N) { print "process " s ": " next_i[s] + 0 " lines"; bad = 1 }
          exit bad
        }' "$out" >"$tmp/why" || { head -5 "$tmp/why"; fail "lines not whole or not in order"; }
      local want_err=$(( n * ((N + 96) / 97) ))
      [ "$(grep -c '^\(\[[0-9-]*\] \)\{0,1\}err [0-9]* [0-9]* of process [0-9]*$' "$err")" -eq "$want_err" ] ||
        fail "stderr: not $want_err whole lines"
    }
    run "$prog" lines "$N"
    expect_rc 0
    check_lines 0
    run --tag-output "$prog" lines "$N"
    expect_rc 0
    check_lines 1
    ;;
  crashline)   # a line printed just before a crash is not lost
    run "$prog" crash
    [ "$rc" -ne 0 ] || fail "exit status 0 after a crash"
    grep -qx "process $((1 % n)): the last line before the crash" "$out" ||
      fail "the line printed before the crash is lost"
    ;;
  path)   # the program and launcher from the user's PATH: a venv's python3
    python3 -m venv --without-pip "$tmp/venv" >/dev/null 2>&1 || { echo "no venv: skipped"; exit 77; }
    # (one write per rank: this program does not load the library, so its
    # lines come through the launcher, whole only when written at once)
    PATH="$tmp/venv/bin:$PATH" run python3 -c \
      'import os, sys, shutil; os.write(1, (sys.prefix + " " + shutil.which("python3") + "\n").encode())'
    expect_rc 0
    want="$tmp/venv $tmp/venv/bin/python3"
    [ "$(grep -c -x -F -- "$want" "$out")" -ge 1 ] || fail "not the venv's python3 (want '$want')"
    ! grep -v -x -F -- "$want" "$out" | grep -q . || fail "a rank ran another python3"
    ;;
  fork)   # a forked child that syncs: one line, it ends, the run goes on
    run "$prog" fork
    expect_rc 0
    grep -q "called in a forked child" "$err" || fail "no line about the forked child"
    [ "$(grep -c "forked child" "$err")" -eq 1 ] || fail "not one line"
    grep -qx "fork: the child ended with status 6" "$out" || fail "the child did not end with 6"
    grep -qx "fork: the run went on" "$out" || fail "the run did not go on"
    ! grep -q FAILED "$out" || fail "the child's sync returned"
    nothing_left 2
    ;;
  threads)   # four threads start sections at once: all end, none hangs
    run "$prog" threads
    expect_rc 0
    [ "$(grep -c "lpf_exec returned 0$" "$out")" -eq 4 ] || fail "not every section succeeded"
    [ "$(grep -c "another thread of rank 0" "$err")" -le 1 ] || fail "said more than once"
    ;;
  bigp)   # bsp_begin(P) above the ranks: said once
    run "$prog" bigp
    expect_rc 0
    grep -qx "bigp: $((2 * n)) processes" "$out" || fail "not 2n processes"
    [ "$(grep -c "run as threads of rank 0" "$err")" -eq 1 ] || fail "not said once"
    ;;
  oom)   # little address space left: an error code, no crash
    for kb in 0 256 1024 8192; do
      TERM_OOM_KB=$kb run "$prog" oom
      expect_rc 0
      grep -qx "oom: lpf_exec returned LPF_\(SUCCESS\|ERR_OUT_OF_MEMORY\)" "$out" ||
        fail "no result with $kb KiB to spare"
      echo "$kb KiB to spare: $(cat "$out")"
      [ "$kb" -gt 256 ] || grep -q "LPF_ERR_OUT_OF_MEMORY" "$out" ||
        fail "not LPF_ERR_OUT_OF_MEMORY with $kb KiB to spare"
    done
    ;;
  noise)   # SIGCONT to the job's process group (as `timeout` and a
           # terminal's `fg` send it), then SIGTERM: no launcher's notice
    SSTEP_TERM_MARKER=$marker setsid "$bsprun" --engine "$engine" -n "$n" "${hyb[@]}" \
      "$prog" loop "$marker" >"$out" 2>"$err" </dev/null &
    pid=$!
    for ((i = 0; i < 300; ++i)); do
      grep -q '^started$' "$out" && break
      sleep 0.1
    done
    grep -q '^started$' "$out" || fail "the program did not start within 30 s"
    kill -CONT -- "-$pid"
    sleep 0.3
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    pid=""
    expect_rc 143
    ! grep -q "Forwarding signal" "$err" || fail "the launcher's notice on stderr"
    nothing_left 2
    ;;
  watchdog)   # a stuck thread of a hybrid rank: its pid named, not its rank's
    SUPERSTEP_SYNC_WARN=1 run "$prog" stuck
    expect_rc 0
    grep -q "stuck: done" "$out" || fail "the program did not finish"
    grep -q "not arrived: 1\b" "$err" || fail "pid 1 not named"
    ! grep -q "not arrived: 0-1" "$err" || fail "a whole rank named"
    ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
echo "ok ($case, $engine, n=$n)"
