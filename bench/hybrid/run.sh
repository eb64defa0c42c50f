#!/usr/bin/env bash
# The hybrid engine's figures (docs/hybrid.md): the same supersteps
# (bench_hybrid) on the pthread, MPI and hybrid engines, interleaved run by
# run, so that every comparison is within one run:
#   p = 2: pthread -n 2 | hybrid 1x2 (one rank, two threads)
#          mpi -n 2     | hybrid 2x1 (two ranks, one thread each)
#   p = 4: mpi -n 4 | hybrid 2x2 (oversubscribed on 2 cores), also with
#          SUPERSTEP_MPI_SHM=0 (ranks as on different nodes) for both
#   bench/hybrid/run.sh [build-dir] [runs]   (default: build-rel, 5 runs)
# JSON lines on stdout (field "run", "config"); a summary on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
runs=${2:-5}
if [ ! -x "$dir/bench/bench_hybrid" ] || [ ! -x "$dir/tools/bsprun/bsprun" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
  cmake --build "$dir" --target bench_hybrid superstep >/dev/null
fi
b="$dir/bench/bench_hybrid"
r="$dir/tools/bsprun/bsprun"
tag() { sed -e "s/^{/{\"run\":$1,\"config\":\"$2\",/"; }
for run in $(seq 1 "$runs"); do
  "$r" -n 2 "$b" | tag "$run" pthread2
  "$r" --engine hybrid -n 2 -t 2 "$b" | tag "$run" hybrid1x2
  "$r" --engine mpi -n 2 "$b" | tag "$run" mpi2
  "$r" --engine hybrid -n 2 -t 1 "$b" | tag "$run" hybrid2x1
  SUPERSTEP_HYBRID_GENERAL=1 "$r" --engine hybrid -n 2 -t 2 "$b" | tag "$run" hybrid1x2_general
  SUPERSTEP_HYBRID_GENERAL=1 "$r" --engine hybrid -n 2 -t 1 "$b" | tag "$run" hybrid2x1_general
  "$r" --engine mpi -n 4 "$b" | tag "$run" mpi4
  "$r" --engine hybrid -n 4 -t 2 "$b" | tag "$run" hybrid2x2
  SUPERSTEP_MPI_SHM=0 "$r" --engine mpi -n 4 "$b" | tag "$run" mpi4_noshm
  SUPERSTEP_MPI_SHM=0 "$r" --engine hybrid -n 4 -t 2 "$b" | tag "$run" hybrid2x2_noshm
done
