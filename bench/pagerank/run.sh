#!/usr/bin/env bash
# Reproduces the PageRank figures of docs/apps-numeric.md: p = 2, a random
# power-law graph with 10^6 nodes and about 8 10^6 links, tolerance 1e-10,
# both BSP SpMV algorithms against the sequential and OpenMP loops;
# Release build; JSON lines on stdout.
#   bench/pagerank/run.sh [build-dir]      (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
if [ ! -x "$dir/bench/bench_pagerank" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_pagerank >/dev/null
"$dir/bench/bench_pagerank" -p 2 -m powerlaw:1000000:8 -tol 1e-10
