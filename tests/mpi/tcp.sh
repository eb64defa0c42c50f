#!/usr/bin/env bash
# tcp.sh PROGRAM MODE [NPROCS | HOSTILE]: the TCP meeting point of the MPI
# engine. PROGRAM is tcp_test, HOSTILE is tcp_hostile (a client without the
# secret). Every mode sets its own SUPERSTEP_TCP_SECRET (secretfile none).
#   meet        NPROCS independent processes (no mpirun) meet on loopback and
#               run a ring put together (item 72)
#   timeout0    process 0 waits for a peer that never comes: LPF_ERR_FATAL
#               with a clear message after the timeout (item 73)
#   timeout1    a process whose process 0 never listens: the same
# Authentication and robustness: in each of these the real processes still
# meet and run ("ok" from each, exit 0), the hostile client learns no MPI
# port or ompi-server address, and process 0 names the closed connection:
#   impostor    before process 1 comes, clients without the secret claim to
#               be process 1: a hello with a made-up MAC, and the
#               unauthenticated 16-byte hello of old
#   garbage     a client sends junk
#   slow        a client sends 2 bytes and idles: the meeting goes on
#               without waiting for it
#   scan        200 connects and closes while the processes meet
#   duplicate   two processes with pid 1 (both with the secret) among 3:
#               the later is refused with a clear message, the others meet
#   wrongsecret process 1 has another secret: it fails at once with a clear
#               message, not a hang; process 0 names the rejected connection
#   secretfile  no SUPERSTEP_TCP_SECRET: three processes starting together
#               create the per-user file under a fresh XDG_CONFIG_HOME (one
#               secret, mode 0600, folder 0700) and meet; then under
#               HOME/.config; a file readable by others is refused
set -u
prog=$1 mode=$2 arg=${3:-}
unset SUPERSTEP_ENGINE OMPI_COMM_WORLD_SIZE PMIX_RANK
export SUPERSTEP_TCP_SECRET="tcp.sh secret $$ $RANDOM$RANDOM"
tmp=$(mktemp -d)
bg=()
cleanup() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; exit 1; }

# a port nobody listens on now
free_port() {
  local p
  while :; do
    p=$(( 20000 + (RANDOM % 30000) ))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# launch LABEL TIMEOUT_MS PID NPROCS [expect-...]: one process in the
# background (output in $tmp/out.LABEL, err.LABEL); extra environment in
# LAUNCH_ENV
declare -A P
LAUNCH_ENV=()
launch() {
  local label=$1; shift
  env "${LAUNCH_ENV[@]}" timeout 60 "$prog" 127.0.0.1 "$port" "$@" \
    >"$tmp/out.$label" 2>"$tmp/err.$label" &
  P[$label]=$!
  bg+=($!)
}

# finish LABEL...: wait for them; their exit statuses in RC[LABEL]
declare -A RC
finish() {
  local l
  for l in "$@"; do
    wait "${P[$l]}"; RC[$l]=$?
  done
}

show() {
  local f
  for f in "$tmp"/out.* "$tmp"/err.* "$tmp"/hostile.*; do
    [ -s "$f" ] && { echo "--- ${f##*/}"; cat "$f"; }
  done
  return 0
}

# wait_for FILE PATTERN SECONDS
wait_for() {
  local i
  for ((i = 0; i < $3 * 20; i++)); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

# met LABEL...: each exited 0 and said ok
met() {
  local l
  for l in "$@"; do
    [ "${RC[$l]}" -eq 0 ] || fail "process $l: exit status ${RC[$l]}"
    grep -q ': ok' "$tmp/out.$l" || fail "process $l did not report ok"
  done
}

# p0_says PATTERN: process 0's stderr has it
p0_says() {
  grep -q -- "$1" "$tmp/err.p0" || fail "process 0 did not report: $1"
}

# hostile KIND...: process 0 of 2 listens, the hostile clients have their
# say, then process 1 comes; both must meet
hostile() {
  local hostile_prog=$arg attempt h kind
  for attempt in 1 2 3; do
    port=$(free_port)
    rm -f "$tmp"/out.* "$tmp"/err.* "$tmp"/hostile.*
    launch p0 20000 0 2
    local hp=()
    h=0
    for kind in "$@"; do
      if [ "$kind" = scan ]; then
        timeout 60 "$hostile_prog" 127.0.0.1 "$port" scan 200 >"$tmp/hostile.$h" 2>&1 &
      else
        timeout 90 "$hostile_prog" 127.0.0.1 "$port" "$kind" 1 2 >"$tmp/hostile.$h" 2>&1 &
      fi
      hp[$h]=$!
      bg+=($!)
      if ! wait_for "$tmp/hostile.$h" ready 15; then
        # process 0 lost the port to another program between free_port and
        # its listen: the client had nobody to talk to; try another port
        if grep -q "cannot listen" "$tmp/err.p0" 2>/dev/null; then break; fi
        show
        fail "the $kind client never got going"
      fi
      h=$((h + 1))
    done
    if grep -q "cannot listen" "$tmp/err.p0" 2>/dev/null; then
      echo "port $port is taken, trying another"
      for h in "${hp[@]}"; do kill "$h" 2>/dev/null; wait "$h" 2>/dev/null; done
      kill "${P[p0]}" 2>/dev/null; wait "${P[p0]}" 2>/dev/null
      continue
    fi
    launch p1 20000 1 2
    finish p0 p1
    if [ "${RC[p0]}" -eq 3 ] && grep -q "cannot listen" "$tmp/err.p0"; then
      echo "port $port is taken, trying another"
      for h in "${hp[@]}"; do kill "$h" 2>/dev/null; wait "$h" 2>/dev/null; done
      continue
    fi
    local hrc=()
    for h in "${!hp[@]}"; do
      wait "${hp[$h]}"; hrc[$h]=$?
    done
    show
    met p0 p1
    for h in "${!hp[@]}"; do
      [ "${hrc[$h]}" -eq 0 ] || fail "hostile client $h: exit status ${hrc[$h]} (1: it learnt the MPI port or address)"
    done
    return 0
  done
  fail "no free port"
}

case "$mode" in
  meet)
    n=${arg:-2}
    for attempt in 1 2 3 4 5; do
      port=$(free_port)
      rm -f "$tmp"/out.* "$tmp"/err.*
      for ((k = n - 1; k >= 0; k--)); do launch p$k 60000 "$k" "$n"; done
      for ((k = 0; k < n; k++)); do finish p$k; done
      show
      if [ "${RC[p0]}" -eq 3 ] && grep -q "cannot listen" "$tmp/err.p0"; then
        echo "port $port is taken, trying another"; continue
      fi
      for ((k = 0; k < n; k++)); do met p$k; done
      echo "all $n processes met and communicated"
      exit 0
    done
    fail "no free port" ;;
  timeout0)
    port=$(free_port)
    launch p0 1500 0 2 expect-timeout; finish p0; show
    [ "${RC[p0]}" -eq 0 ] || fail "exit status ${RC[p0]}"
    p0_says "only 1 of 2 processes arrived at the meeting point 127.0.0.1:$port within the timeout of 1500 ms" ;;
  timeout1)
    port=$(free_port)
    launch p1 1500 1 2 expect-timeout; finish p1; show
    [ "${RC[p1]}" -eq 0 ] || fail "exit status ${RC[p1]}"
    grep -q "could not reach process 0 at the meeting point 127.0.0.1:$port within the timeout of 1500 ms" "$tmp/err.p1" \
      || fail "no clear message" ;;
  impostor)
    hostile impostor forged
    p0_says "closed the connection from 127.0.0.1:[0-9]*: authentication failed: it claims to be process 1 of 2 but does not know the shared secret"
    p0_says "closed the connection from 127.0.0.1:[0-9]*: it sent an unauthenticated hello (of an older Superstep, or forged) claiming pid 1"
    echo "the impostors were turned away and learnt nothing; the processes met" ;;
  garbage)
    hostile garbage
    p0_says "closed the connection from 127.0.0.1:[0-9]*: it sent garbage, not a Superstep hello"
    echo "the junk was turned away; the processes met" ;;
  slow)
    hostile slow
    # closed at the end, not after its 5 s: nobody waited for it
    p0_says "closed the connection from 127.0.0.1:[0-9]*: the meeting is complete"
    echo "the meeting went on without waiting for the idle connection" ;;
  scan)
    hostile scan
    p0_says "closed the connection from 127.0.0.1:[0-9]*: it left without a word"
    echo "the processes met during a port scan" ;;
  duplicate)
    port=$(free_port)
    launch p0 20000 0 3
    launch a 20000 1 3
    launch b 20000 1 3
    wait_for "$tmp/err.p0" "were two processes started with pid 1?" 20 || { show; fail "process 0 did not report the duplicate"; }
    launch p2 20000 2 3
    finish p0 a b p2
    show
    met p0 p2
    if [ "${RC[a]}" -eq 0 ]; then good=a bad=b; else good=b bad=a; fi
    met $good
    [ "${RC[$bad]}" -eq 3 ] || fail "the duplicate process 1: exit status ${RC[$bad]}, not 3"
    grep -q "process 1: process 0 has a process 1 already: were two processes started with pid 1?" "$tmp/err.$bad" \
      || fail "the duplicate got no clear message"
    echo "the duplicate was refused with a message; the others met" ;;
  wrongsecret)
    port=$(free_port)
    launch p0 4000 0 2 expect-timeout
    LAUNCH_ENV=("SUPERSTEP_TCP_SECRET=not the secret of process 0")
    launch p1 4000 1 2 expect-reject
    LAUNCH_ENV=()
    finish p1 p0
    show
    [ "${RC[p1]}" -eq 0 ] || fail "process 1 (wrong secret) did not fail at once: exit status ${RC[p1]}"
    grep -q "process 1: process 0 at 127.0.0.1:$port rejected us: authentication failed, the processes do not share the same secret" "$tmp/err.p1" \
      || fail "process 1 got no clear message"
    [ "${RC[p0]}" -eq 0 ] || fail "process 0: exit status ${RC[p0]}"
    p0_says "closed the connection from 127.0.0.1:[0-9]*: authentication failed: it claims to be process 1 of 2"
    p0_says "only 1 of 2 processes arrived"
    echo "a process with another secret fails at once with a clear message" ;;
  secretfile)
    unset SUPERSTEP_TCP_SECRET
    export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/xdg
    mkdir -p "$HOME"
    check_file() {  # FILE: one secret, 0600 in a 0700 folder, no leftovers
      [ -f "$1" ] || fail "no secret file $1"
      [ "$(stat -c %a "$1")" = 600 ] || fail "$1 has mode $(stat -c %a "$1"), not 600"
      [ "$(stat -c %a "${1%/*}")" = 700 ] || fail "${1%/*} has mode $(stat -c %a "${1%/*}"), not 700"
      grep -Eqx '[0-9a-f]{64}' "$1" || fail "$1 does not hold 64 hex digits"
      ! ls -A "${1%/*}" | grep -qv '^tcp-secret$' || fail "leftovers in ${1%/*}: $(ls -A "${1%/*}")"
    }
    # 1. three processes at once create $XDG_CONFIG_HOME/superstep/tcp-secret
    port=$(free_port)
    for k in 2 1 0; do launch p$k 20000 "$k" 3; done
    finish p0 p1 p2; show
    met p0 p1 p2
    check_file "$XDG_CONFIG_HOME/superstep/tcp-secret"
    # 2. without XDG_CONFIG_HOME: $HOME/.config/superstep/tcp-secret
    unset XDG_CONFIG_HOME
    port=$(free_port)
    rm -f "$tmp"/out.* "$tmp"/err.*
    launch p1 20000 1 2; launch p0 20000 0 2
    finish p0 p1; show
    met p0 p1
    f=$HOME/.config/superstep/tcp-secret
    check_file "$f"
    # 3. a file readable by the group is refused at once
    chmod 640 "$f"
    port=$(free_port)
    launch p1 4000 1 2 expect-reject; finish p1; show
    [ "${RC[p1]}" -eq 0 ] || fail "a secret file of mode 640 was not refused at once"
    grep -q "the secret file $f is accessible by group or others (mode 640); refusing it: run chmod 600" "$tmp/err.p1" \
      || fail "no clear message about the mode of the secret file"
    echo "the secret file is created once, private, and checked" ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
