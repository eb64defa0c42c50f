#!/usr/bin/env bash
# Builds Superstep (release) and runs the hello-world demo on the default
# pthread engine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "${JOBS:-2}"
./build/examples/hello_lpf
