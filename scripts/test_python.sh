#!/usr/bin/env bash
# Builds the Python package `superstep` (pip install . into a virtual
# environment under build-py/) and runs its tests (tests/python) with
# pytest: the threads engine, and the MPI engine through bsprun when the
# release build's bsprun (build/tools/bsprun/bsprun) is there.
# Python packages come from PyPI (mpi4py for the run over an mpi4py
# communicator, dask and distributed for superstep.dask). Exits non-zero when a test fails.
# Usage: scripts/test_python.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
venv=build-py/venv
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
vpy=$PWD/$venv/bin/python
"$vpy" -m pip install -q --disable-pip-version-check --upgrade pip
# build requirements too, so that the package builds without isolation
# (its build folder under build-py/ is then reused between runs)
"$vpy" -m pip install -q --disable-pip-version-check \
  "scikit-build-core>=0.9" "cython>=3.0" "numpy>=2.0" scipy pytest mpi4py \
  "dask[array]" distributed
CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} \
  "$vpy" -m pip install -q --disable-pip-version-check --no-build-isolation .
if [ -z "${SUPERSTEP_BSPRUN:-}" ] && [ -x build/tools/bsprun/bsprun ]; then
  export SUPERSTEP_BSPRUN=$PWD/build/tools/bsprun/bsprun
fi
export LPF_MAX_PROCS=${LPF_MAX_PROCS:-4}
unset SUPERSTEP_ENGINE
# from outside the source tree: the installed package is the one tested
cd build-py
"$vpy" -m pytest -q -p no:cacheprovider "$PWD/../tests/python" "$@"
# the Python programs in README and docs/ run as written (tests/docs)
"$vpy" "$PWD/../tests/docs/check_docs.py" --src "$PWD/.." --python "$vpy"
