#!/usr/bin/env bash
# Reproduces the FFT figures of docs/apps-numeric.md: p = 2 against FFTW
# with 1 and 2 threads, n = 2^16 .. 2^24, FFTW_MEASURE plans, Release
# build; JSON lines on stdout, each naming the code that ran ("variant"; by
# default the fused code with the exchange at the end up to 16 MiB of data,
# the two-pass code above; see examples/fft/bspfft.h). A second pass shows
# the fused push code (bsp_hpput) at every size, a third the buffered
# bsp_put. FFTW wisdom is kept in $dir/fft.wisdom: the first run plans
# (minutes for the large sizes), later ones reuse the plans.
#   bench/fft/run.sh [build-dir]      (default: build-rel)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-rel}
if [ ! -x "$dir/bench/bench_fft" ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$dir" --target bench_fft >/dev/null
w="$dir/fft.wisdom"
"$dir/bench/bench_fft" -p 2 -min 16 -max 24 -wisdom "$w"
"$dir/bench/bench_fft" -p 2 -min 16 -max 24 -wisdom "$w" -push
"$dir/bench/bench_fft" -p 2 -min 20 -max 22 -wisdom "$w" -buffered
