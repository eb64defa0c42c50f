#!/usr/bin/env bash
# The MPI engine's figures (docs/mpi.md): 2 ranks, Release build, each
# LPF figure next to plain MPI doing the same work in the same run.
#   bench/mpi/run.sh [build-dir] [runs]   (default: build-rel, 3 runs)
# JSON lines on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
runs=${2:-3}
if [ ! -x "$dir/bench/bench_mpi" ] || [ ! -x "$dir/tools/bsprun/bsprun" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
  cmake --build "$dir" --target bench_mpi >/dev/null
fi
for run in $(seq 1 "$runs"); do
  "$dir/tools/bsprun/bsprun" --engine mpi -n 2 "$dir/bench/bench_mpi"
done
