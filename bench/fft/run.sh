#!/usr/bin/env bash
# Reproduces the FFT figures of docs/apps-numeric.md: p = 2 against FFTW
# with 1 and 2 threads, n = 2^16 .. 2^24, FFTW_MEASURE plans, Release
# build; JSON lines on stdout. A second pass shows the buffered bsp_put.
#   bench/fft/run.sh [build-dir]      (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
if [ ! -x "$dir/bench/bench_fft" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_fft >/dev/null
"$dir/bench/bench_fft" -p 2 -min 16 -max 24
"$dir/bench/bench_fft" -p 2 -min 20 -max 22 -buffered
