#!/usr/bin/env bash
# The Python package's benchmarks beside the C ones (p = 2 by default):
#   threads: bench_python.py vs bench_core (sync_empty, put_coarse)
#   MPI:     bench_python.py under bsprun --engine mpi vs bench_mpi
#            (empty_sync) and vs mpi4py (installed here, for the benchmark only)
# Needs the release build (build/) and scripts/test_python.sh's venv.
# Usage: bench/python/run.sh [P]
set -euo pipefail
cd "$(dirname "$0")/../.."
P=${1:-2}
vpy=build-py/venv/bin/python
[ -x "$vpy" ] || scripts/test_python.sh >/dev/null
"$vpy" -m pip install -q --disable-pip-version-check mpi4py
bsprun=build/tools/bsprun/bsprun
echo "# threads, p=$P"
LPF_MAX_PROCS=$P "$vpy" bench/python/bench_python.py --p "$P"
build/bench/bench_core -p "$P" --quick --only sync_empty
build/bench/bench_core -p "$P" --quick --only put_coarse |
  grep -E '"block_bytes":(65536|262144|1048576),'
echo "# MPI, $P ranks"
"$bsprun" --engine mpi -n "$P" "$vpy" bench/python/bench_python.py --mpi4py
"$bsprun" --engine mpi -n "$P" build/bench/bench_mpi --only empty_sync
"$bsprun" --engine mpi -n "$P" build/bench/bench_mpi --only total_exchange
