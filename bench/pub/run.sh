#!/usr/bin/env bash
# The figures of docs/pub.md (Release build, JSON lines on stdout).
# p > 2 runs more processes than this machine's 2 cores (oversubscribed).
#   bench/pub/run.sh [build-dir] [quick]     (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
quick=${2:-}
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_pub >/dev/null
export LPF_MAX_PROCS=${LPF_MAX_PROCS:-16}
b="$dir/bench/bench_pub"
if [ -n "$quick" ]; then
  "$b" oblsync -p 2 -k 500 -r 3
  "$b" group -p 2,8 -k 500 -r 3
  "$b" bsearch -p 2 -lo 10 -hi 14 -r 3
  "$b" coll -p 4 -sizes 8,65536 -k 100 -r 3
  exit 0
fi
# (i) oblsync vs sync, one message per process
"$b" oblsync -p 2,4,8 -k 2000 -r 7
# (ii) a half's sync after bsp_partition vs a sync of all
"$b" group -p 2,8,16 -k 2000 -r 7
# (iii) binary search, the four forms, 2^10 .. 2^20 queries per process
"$b" bsearch -p 2 -n 65536 -lo 10 -hi 20 -r 5
"$b" bsearch -p 4 -n 65536 -lo 10 -hi 18 -r 3
# (iv) broadcast + reduction on half of the processes
"$b" coll -p 4,8 -sizes 8,1024,65536,1048576 -k 200 -r 5
