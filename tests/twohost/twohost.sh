#!/usr/bin/env bash
# twohost.sh: two simulated hosts on this machine, for the tests labelled
# "twohost" (tests/twohost/CMakeLists.txt).
#
# Each host is a Linux network namespace with a host name of its own (a UTS
# namespace entered with unshare when a process enters the host); a veth
# pair joins the two, with a private address at each end that exists only
# inside the namespaces (they have no other interface and no route, so
# nothing leaves them but loopback and the veth). Open MPI reaches the other
# host as it would over ssh: its rsh launcher calls DIR/agent, which enters
# the other namespace with a login-like environment (env -i), so what a job
# needs there has to be forwarded as on a real cluster.
#
#   twohost.sh setup DIR      make the two hosts; where this machine does not
#                             allow network namespaces, DIR/skip says why
#   twohost.sh cleanup DIR    remove them (and DIR)
#   twohost.sh test DIR CMD.. run CMD (exit status 77 and the reason where
#                             the hosts could not be made)
#   twohost.sh on DIR a|b CMD..  run CMD on host a or b
#   twohost.sh pids DIR a|b   the processes on host a or b
#   twohost.sh link DIR down|up  cut the link between the hosts (a network
#                             partition: packets are lost, no connection is
#                             refused) or restore it
#
# setup writes DIR/bsprun: bsprun run on host a with Open MPI told to place
# ranks on both hosts, round robin by host (rank 0 on a, 1 on b, 2 on a, ...),
# through DIR/hostfile. The real bsprun is $SSTEP_BSPRUN (given to setup).
set -u
cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: twohost.sh setup|cleanup|test|on|pids DIR ..." >&2; exit 2; }
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
self=$(readlink -f "$0")

# names from the folder, so that two build trees do not share namespaces
tag=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
tag=$(printf '%08x' "$tag" | cut -c1-7)
ns_a="sstep$tag-a" ns_b="sstep$tag-b"
veth_a="ss${tag}a" veth_b="ss${tag}b"
host_a=hosta host_b=hostb
addr_a=10.213.7.1 addr_b=10.213.7.2

ns_of() { case "$1" in a | "$host_a" | "$addr_a") echo "$ns_a" ;; b | "$host_b" | "$addr_b") echo "$ns_b" ;; *) return 1 ;; esac; }
name_of() { case "$1" in a | "$host_a" | "$addr_a") echo "$host_a" ;; b | "$host_b" | "$addr_b") echo "$host_b" ;; *) return 1 ;; esac; }

remove_hosts() {
  # what a test left running on the hosts (processes of ours: they run in
  # our namespaces) goes with them
  local p
  for p in $(ip netns pids "$ns_a" 2>/dev/null) $(ip netns pids "$ns_b" 2>/dev/null); do
    kill -KILL "$p" 2>/dev/null
  done
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  rm -rf "/etc/netns/$ns_a" "/etc/netns/$ns_b"
  rmdir /etc/netns 2>/dev/null
  return 0
}

skip() {
  echo "$*" >"$dir/skip"
  echo "twohost: skipped: $*"
  remove_hosts
  exit 0
}

case "$cmd" in
setup)
  bsprun=${SSTEP_BSPRUN:?setup needs SSTEP_BSPRUN (the real bsprun)}
  rm -rf "$dir"
  mkdir -p "$dir"
  remove_hosts
  command -v ip >/dev/null || skip "no ip command (iproute2; scripts/setup.sh installs it)"
  command -v unshare >/dev/null || skip "no unshare command (util-linux)"
  err=$(ip netns add "$ns_a" 2>&1) || skip "this machine does not allow network namespaces (ip netns add: $err)"
  ip netns add "$ns_b" || skip "ip netns add $ns_b failed"
  err=$(ip netns exec "$ns_a" unshare --uts true 2>&1) || skip "no UTS namespaces here (unshare --uts: $err)"
  ip link add "$veth_a" type veth peer name "$veth_b" 2>/dev/null || skip "no veth pairs here (ip link add type veth failed)"
  ip link set "$veth_a" netns "$ns_a" && ip link set "$veth_b" netns "$ns_b" \
    && ip -n "$ns_a" addr add "$addr_a/30" dev "$veth_a" && ip -n "$ns_b" addr add "$addr_b/30" dev "$veth_b" \
    && ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up \
    && ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up \
    || skip "could not set up the veth pair"
  # host names: `ip netns exec NS` lays /etc/netns/NS/hosts over /etc/hosts
  for ns in "$ns_a" "$ns_b"; do
    mkdir -p "/etc/netns/$ns" || skip "cannot write /etc/netns"
    printf '127.0.0.1 localhost\n%s %s\n%s %s\n' "$addr_a" "$host_a" "$addr_b" "$host_b" >"/etc/netns/$ns/hosts"
  done
  printf '%s slots=2\n%s slots=2\n' "$host_a" "$host_b" >"$dir/hostfile"
  # Open MPI's rsh launcher calls: agent HOST COMMAND... (the command is a
  # shell line, as ssh would hand it to the remote shell)
  cat >"$dir/agent" <<EOF
#!/bin/sh
exec "$self" agent "$dir" "\$@"
EOF
  # The ranks wait in MPI by polling. With mpi_yield_when_idle they yield
  # the core while they poll: on a 2-core machine with two hosts' ranks,
  # daemons and launcher, busy-polling ranks keep the veth's packets from
  # being handled (an MPI_Barrier across the hosts took 4 ms instead of
  # tens of microseconds).
  cat >"$dir/bsprun" <<EOF
#!/bin/sh
export OMPI_MCA_plm_rsh_agent="$dir/agent"
export OMPI_MCA_orte_default_hostfile="$dir/hostfile"
export OMPI_MCA_rmaps_base_mapping_policy=node
export OMPI_MCA_mpi_yield_when_idle=1
exec "$self" on "$dir" a "$bsprun" "\$@"
EOF
  chmod +x "$dir/agent" "$dir/bsprun"
  echo "twohost: $host_a ($ns_a, $addr_a) and $host_b ($ns_b, $addr_b) ready; launcher $dir/bsprun"
  ;;
cleanup)
  remove_hosts
  rm -rf "$dir"
  echo "twohost: removed $ns_a and $ns_b"
  ;;
test)
  shift 2
  if [ -f "$dir/skip" ]; then
    echo "twohost: skipped: $(cat "$dir/skip")"
    exit 77
  fi
  [ -x "$dir/bsprun" ] || { echo "twohost: the two hosts are not set up (run the fixture: ctest -L twohost)"; exit 1; }
  exec "$@"
  ;;
on)
  h=${3:-}
  shift 3
  ns=$(ns_of "$h") || { echo "twohost: no host '$h'" >&2; exit 2; }
  name=$(name_of "$h")
  exec ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
  ;;
agent)
  # from Open MPI's rsh launcher: [options] HOST COMMAND...
  shift 2
  while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
  h=${1:-}
  shift
  ns=$(ns_of "$h") || { echo "twohost agent: no host '$h'" >&2; exit 255; }
  name=$(name_of "$h")
  exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="${HOME:-/}" \
    USER="$(id -un)" LOGNAME="$(id -un)" SHELL=/bin/sh \
    ip netns exec "$ns" unshare --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$name" "$*"
  ;;
pids)
  ns=$(ns_of "${3:-}") || { echo "twohost: no host '${3:-}'" >&2; exit 2; }
  ip netns pids "$ns"
  ;;
link)
  case "${3:-}" in
    down) ip -n "$ns_a" link set "$veth_a" down ;;
    up)
      # back, and usable before the next test starts: carrier on both ends,
      # the neighbour entries the cut left failed forgotten
      ip -n "$ns_a" link set "$veth_a" up || exit 1
      for _ in $(seq 50); do
        ip -n "$ns_a" link show "$veth_a" | grep -q "state UP" \
          && ip -n "$ns_b" link show "$veth_b" | grep -q "state UP" && break
        sleep 0.1
      done
      ip -n "$ns_a" neigh flush all 2>/dev/null || true
      ip -n "$ns_b" neigh flush all 2>/dev/null || true
      sleep 1
      ;;
    *) echo "twohost: link down|up, not '${3:-}'" >&2; exit 2 ;;
  esac
  ;;
*)
  echo "twohost.sh: unknown command $cmd" >&2
  exit 2
  ;;
esac
