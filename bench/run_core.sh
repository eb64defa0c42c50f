#!/usr/bin/env bash
# Reproduces the core figures of README: five consecutive runs of the empty
# sync at p = 2, the h-relations at p = 2, and the empty sync at p = 8 and 16
# (more processes than cores). Release build; JSON lines on stdout.
#   bench/run_core.sh [build-dir]      (default: build-rel, configured here)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-rel}
if [ ! -x "$dir/bench/bench_core" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
  cmake --build "$dir" --target bench_core >/dev/null
fi
export OMP_WAIT_POLICY=active
for run in 1 2 3 4 5; do "$dir/bench/bench_core" -p 2 --only sync_empty; done
"$dir/bench/bench_core" -p 2 --only put_coarse
"$dir/bench/bench_core" -p 2 --only get_coarse
"$dir/bench/bench_core" -p 2 --only put_fine
for run in 1 2 3 4 5; do "$dir/bench/bench_core" -p 2 --only put_one; done
for p in 8 16; do "$dir/bench/bench_core" -p $p --only sync_empty; done
