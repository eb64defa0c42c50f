#!/usr/bin/env bash
# The MPI engine's figures (docs/mpi.md): 2 ranks, Release build, each
# LPF figure next to plain MPI doing the same work in the same run.
#   bench/mpi/run.sh [build-dir] [runs]   (default: build-rel, 3 runs)
# Each run: every benchmark of bench_mpi, then its bulk puts by buffer
# placement again with the source rewritten before every put (--touch) and
# with glibc's memcpy kept off `rep movsb` (GLIBC_TUNABLES).
# JSON lines on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
runs=${2:-3}
if [ ! -x "$dir/bench/bench_mpi" ] || [ ! -x "$dir/tools/bsprun/bsprun" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
  cmake --build "$dir" --target bench_mpi bsprun_filter >/dev/null
fi
run() { "$dir/tools/bsprun/bsprun" --engine mpi -n 2 "$dir/bench/bench_mpi" "$@"; }
for _ in $(seq 1 "$runs"); do
  run
  run --only place --touch
  GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=4294967295 run --only place
done
