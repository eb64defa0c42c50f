#!/usr/bin/env bash
# Reproduces the inner-product figures of docs/apps-numeric.md: p = 2,
# n = 2^16 .. 2^25, Release build; JSON lines on stdout.
#   bench/inprod/run.sh [build-dir]      (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
if [ ! -x "$dir/bench/bench_inprod" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_inprod >/dev/null
"$dir/bench/bench_inprod" -p 2 -min 16 -max 25
