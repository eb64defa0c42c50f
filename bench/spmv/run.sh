#!/usr/bin/env bash
# Reproduces the SpMV figures of docs/apps-numeric.md: p = 2, a 2D and a 3D
# Laplacian and a power-law matrix, row-block and 2D partitions, both BSP
# algorithms, against the CRS loop and the OpenMP CRS loop; Release build;
# JSON lines on stdout.
#   bench/spmv/run.sh [build-dir]      (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
if [ ! -x "$dir/bench/bench_spmv" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_spmv >/dev/null
"$dir/bench/bench_spmv" -p 2 -m lap2d:2048 -m lap3d:160 -m powerlaw:2000000:8 -part rows -part 2d
