#!/usr/bin/env bash
# Installs what Superstep needs to build and test, from Debian's packages:
# a C/C++ toolchain, CMake + Ninja, GoogleTest, Open MPI (MPI engine),
# hwloc (thread pinning), FFTW (FFT example), gnuplot (probe plots),
# libsodium (authentication of the TCP meeting), OpenMP comes with gcc,
# python3-venv and python3-dev (the Python package, scripts/test_python.sh),
# help2man (the tools' man pages), iproute2 (the two simulated hosts of the
# tests labelled twohost), mawk (bsprun's output checked with it as awk),
# libsimgrid-dev (SimGrid's SMPI: bench/scale and the test labelled smpi).
# Only the toolchain and CMake are required to build the library;
# the rest add parts (README lists them) and scripts/test.sh, which builds
# with SUPERSTEP_REQUIRE_ALL=ON, needs them all.
# Safe to run again. Needs root (or sudo).
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config libgtest-dev
      libopenmpi-dev openmpi-bin libhwloc-dev libfftw3-dev gnuplot-nox python3
      libsodium-dev python3-venv python3-dev bc procps help2man iproute2 mawk
      libsimgrid-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: installing ${missing[*]}"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
