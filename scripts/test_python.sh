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
# compiled objects reused between installs when ccache is there (CMake reads
# these variables from the environment)
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
fi
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
# the wheel is self-contained: built here (the build folder above is reused),
# installed into a fresh virtual environment on another path, it runs on
# threads and on MPI ranks without the build tree or LD_LIBRARY_PATH
whl=$(mktemp -d /tmp/superstep-wheel.XXXXXX)
trap 'rm -rf "$whl"' EXIT
CMAKE_BUILD_PARALLEL_LEVEL=${JOBS:-2} \
  "$vpy" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
  -w "$whl/dist" "$PWD/.."
"$py" -m venv "$whl/env"
"$whl/env/bin/python" -m pip install -q --disable-pip-version-check "$whl"/dist/superstep_bsp-*.whl
cat > "$whl/check.py" <<'PY'
import superstep
n, s = superstep.run(lambda ctx: (ctx.nprocs, ctx.allreduce(ctx.pid)), p=2)
assert s == n * (n - 1) // 2, (n, s)
print("wheel ok", superstep.engine(), superstep.mpi_world()[0], superstep.__file__, flush=True)
PY
(cd "$whl" && env -u LD_LIBRARY_PATH "$whl/env/bin/python" check.py)
if [ -n "${SUPERSTEP_BSPRUN:-}" ] && "$vpy" -c "import superstep, sys; sys.exit(not superstep.have_mpi())"; then
  (cd "$whl" && env -u LD_LIBRARY_PATH "$SUPERSTEP_BSPRUN" --engine mpi -n 2 "$whl/env/bin/python" check.py)
fi
