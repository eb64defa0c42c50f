#!/usr/bin/env bash
# Reproduces the matrix-multiplication figures of docs/apps-algorithms.md (Release build,
# JSON lines on stdout). p > 2 runs more processes than this machine's 2 cores.
#   bench/matmul/run.sh [build-dir]      (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_matmul >/dev/null
export LPF_MAX_PROCS=${LPF_MAX_PROCS:-16}
"$dir/bench/bench_matmul" -n 960 -p 1,2,3,4,9 -r 5
