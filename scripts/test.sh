#!/usr/bin/env bash
# Builds Superstep and runs every test:
#   1. release build: the whole suite, every engine (label optional-deps:
#      the builds with each optional dependency hidden);
#   2. ASan+UBSan build and 3. TSan build: the tests labelled 'sanitize'
#      (a cross-section of every engine and layer).
# Usage: scripts/test.sh [--quick]   (--quick: release build only)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=${JOBS:-2}

# SUPERSTEP_REQUIRE_ALL: a missing optional dependency stops the build here
# instead of silently leaving its tests out (the optional-deps test checks
# the builds without them)
build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DSUPERSTEP_REQUIRE_ALL=ON -DSUPERSTEP_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

build build -DCMAKE_BUILD_TYPE=Release
(cd build && ctest -j "$jobs" -LE twohost --output-on-failure --timeout 300)
# the MPI and hybrid engines across two simulated hosts (network namespaces,
# tests/twohost; skipped with the reason where the machine does not allow them)
(cd build && ctest -j "$jobs" -L twohost --output-on-failure --timeout 300)
# the Python package: pip install . in build-py/venv, pytest
SKBUILD_CMAKE_DEFINE="SUPERSTEP_REQUIRE_ALL=ON;SUPERSTEP_WERROR=ON" scripts/test_python.sh

if [ "${1:-}" = "--quick" ]; then exit 0; fi

build build-asan -DCMAKE_BUILD_TYPE=Debug -DSUPERSTEP_SANITIZE=address -DSUPERSTEP_BUILD_BENCH=OFF
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
   ctest -j "$jobs" -L sanitize --output-on-failure --timeout 300)

build build-tsan -DCMAKE_BUILD_TYPE=Debug -DSUPERSTEP_SANITIZE=thread -DSUPERSTEP_BUILD_BENCH=OFF
# atexit_sleep_ms=0: TSan's default 1 s pause at exit, paid by every test
# process that ends with threads still running (aborts, death tests)
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:atexit_sleep_ms=0 \
   ctest -j "$jobs" -L sanitize --output-on-failure --timeout 300)
echo "all tests passed"
