#!/usr/bin/env bash
# optional_deps.sh SOURCE_DIR WORK_DIR BUILD_TYPE C_COMPILER CXX_COMPILER
#
# Superstep configured and built with each optional dependency hidden in
# turn (-DCMAKE_DISABLE_FIND_PACKAGE_<Pkg>=ON), with all of them hidden at
# once, and with pkg-config hidden. Each configuration must configure and
# generate (every test folder included, so every reference to a target that
# needs the missing package is checked), say in the summary that the
# feature is off, build the library and a smoke program and run it, and
# leave out what needs the package; some run the tests that concern them:
#   MPI       hello_bsp on threads; no MPI or hybrid tests, no bench_mpi
#   Sodium    the MPI engine still runs hello_bsp; the TCP meeting refuses
#             with one line (ctest mpi.tcp.no_sodium); no other TCP test
#   Hwloc     hello_bsp pinned (SUPERSTEP_PIN=scatter) without hwloc
#   FFTW3     no bspfft, no FFT tests, no checked.apps.test_fft
#   OpenMP    bench_sort builds without it; no bench_core
#   GTest     no tests at all, and configure says so
#   Python    no signal tests
#   Gnuplot   bspprobe builds (it runs gnuplot at run time, when on PATH)
#   all       everything hidden: the whole build (library, tools, examples,
#             benchmarks) and hello_bsp
#   pkgconfig pkg-config hidden: every package is still found
#   require   SUPERSTEP_REQUIRE_ALL=ON with hwloc hidden: configure fails
#             and names it
# The build folders stay under WORK_DIR, so a second run builds little.
set -u
src=$1 work=$2 btype=$3 cc=$4 cxx=$5
jobs=${JOBS:-2}
mkdir -p "$work"
failed=0
fail() { echo "FAILED [$name]: $*"; failed=1; }

# configure NAME EXPECT(ok|fail) ARGS...: a fresh configure (the objects of
# an earlier run are kept); the log in $work/NAME.log
configure() {
  name=$1; local expect=$2; shift 2
  dir=$work/$name
  mkdir -p "$dir"
  rm -f "$dir/CMakeCache.txt"
  local t0=$SECONDS
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="$btype" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "$@" >"$work/$name.log" 2>&1
  local rc=$?
  echo "[$name] configure: status $rc ($((SECONDS - t0)) s)"
  if [ "$expect" = ok ] && [ $rc -ne 0 ]; then
    tail -30 "$work/$name.log"; fail "configure failed"; return 1
  fi
  if [ "$expect" = fail ] && [ $rc -eq 0 ]; then
    fail "configure succeeded but should have failed"; return 1
  fi
  return 0
}

# says PATTERN: the configure log has it
says() { grep -q -- "$1" "$work/$name.log" || fail "configure did not say: $1"; }
# build TARGET...
build() {
  local t0=$SECONDS
  if ! cmake --build "$dir" -j "$jobs" --target "$@" >"$work/$name.build.log" 2>&1; then
    tail -30 "$work/$name.build.log"; fail "build of $* failed"; return 1
  fi
  echo "[$name] built $* ($((SECONDS - t0)) s)"
}
# no_target NAME...: the build has no such target
no_target() {
  local t
  for t in "$@"; do
    ninja -C "$dir" -t targets all 2>/dev/null | grep -q "^$t:" && fail "target $t exists"
  done
  return 0
}
# tests REGEX: how many tests ctest lists that match
ntests() { (cd "$dir" && ctest -N -R "$1" 2>/dev/null | sed -n 's/^Total Tests: //p'); }
no_tests() { local n; n=$(ntests "$1"); [ "${n:-0}" -eq 0 ] || fail "$n tests match $1"; }
# needs LIB: the library itself (not what it links) needs LIB
needs() { readelf -d "$dir/src/libsuperstep.so" | grep NEEDED | grep -q "$1"; }
# smoke [ENV=...] [LAUNCHER ARGS]: hello_bsp on 3 processes prints 3 lines
smoke() {
  local out
  out=$(env "$@" "$dir/examples/hello_bsp" 3 2>&1)
  local n
  n=$(printf '%s\n' "$out" | grep -c "^Hello world from process [0-2] of 3!$")
  [ "$n" -eq 3 ] || { printf '%s\n' "$out"; fail "hello_bsp: $n of 3 greetings"; return 1; }
  echo "[$name] hello_bsp ran on 3 processes"
}
off() { says "^--   $1 *OFF .*\[hidden: CMAKE_DISABLE_FIND_PACKAGE_$2=ON\]"; }

lib=(superstep hello_bsp)

configure no-mpi ok -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON && {
  off MPI MPI
  says "tests/mpi: this build has no MPI engine"
  no_target bench_mpi bench_hybrid hybrid_test mpi_engine_test
  build "${lib[@]}" && smoke
}

configure no-sodium ok -DCMAKE_DISABLE_FIND_PACKAGE_Sodium=ON && {
  off libsodium Sodium
  says "^--   MPI *ON "
  no_tests '^mpi\.tcp\.meet'
  build "${lib[@]}" mpi_tcp_test && {
    if needs libsodium; then fail "the library links libsodium"; fi
    out=$("$dir/tools/bsprun/bsprun" --engine mpi -n 2 "$dir/examples/hello_bsp" 2>&1)
    n=$(printf '%s\n' "$out" | grep -c "^Hello world from process [01] of 2!$")
    if [ "$n" -eq 2 ]; then echo "[$name] hello_bsp ran on the MPI engine (2 ranks)"
    else printf '%s\n' "$out"; fail "the MPI engine did not run hello_bsp"; fi
    (cd "$dir" && ctest -R '^mpi\.tcp\.' --output-on-failure) >"$work/$name.ctest.log" 2>&1 \
      || { cat "$work/$name.ctest.log"; fail "ctest mpi.tcp"; }
    [ "$(ntests '^mpi\.tcp\.')" = 1 ] || fail "expected one TCP test (mpi.tcp.no_sodium)"
    grep -q "mpi.tcp.no_sodium .*Passed" "$work/$name.ctest.log" && echo "[$name] mpi.tcp.no_sodium passed"
  }
}

configure no-hwloc ok -DCMAKE_DISABLE_FIND_PACKAGE_Hwloc=ON && {
  off hwloc Hwloc
  build "${lib[@]}" && {
    if needs libhwloc; then fail "the library links hwloc"; fi
    smoke SUPERSTEP_PIN=scatter
  }
}

configure no-fftw ok -DCMAKE_DISABLE_FIND_PACKAGE_FFTW3=ON && {
  off FFTW FFTW3
  no_target bspfft bench_fft test_fft test_fft_smoke superstep_app_fft
  no_tests 'fft'
  build "${lib[@]}" && smoke
}

configure no-openmp ok -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON && {
  off OpenMP OpenMP
  no_target bench_core bench_inprod bench_spmv bench_pagerank
  build "${lib[@]}" bench_sort && smoke
}

configure no-gtest ok -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON && {
  off GoogleTest GTest
  says "no GoogleTest: the test suite (tests/) is skipped"
  [ ! -e "$dir/CTestTestfile.cmake" ] || [ "$(ntests .)" = 0 ] || fail "tests are registered"
  build "${lib[@]}" && smoke
}

configure no-python ok -DCMAKE_DISABLE_FIND_PACKAGE_Python=ON && {
  off Python Python
  no_tests 'signals'
  build "${lib[@]}" && smoke
}

configure no-gnuplot ok -DCMAKE_DISABLE_FIND_PACKAGE_Gnuplot=ON && {
  off gnuplot Gnuplot
  build "${lib[@]}" bspprobe && smoke
}

all=()
for p in MPI Sodium Hwloc FFTW3 OpenMP GTest Python Gnuplot; do
  all+=("-DCMAKE_DISABLE_FIND_PACKAGE_$p=ON")
done
configure all-hidden ok "${all[@]}" && {
  for f in "MPI MPI" "hwloc Hwloc" "FFTW FFTW3" "OpenMP OpenMP" "GoogleTest GTest" \
           "Python Python" "gnuplot Gnuplot"; do
    # shellcheck disable=SC2086
    off $f
  done
  says "^--   libsodium *OFF .*\[not used: no MPI engine\]"
  build all && smoke
}

configure no-pkgconfig ok -DCMAKE_DISABLE_FIND_PACKAGE_PkgConfig=ON && {
  for f in MPI libsodium hwloc FFTW fftw3_threads; do says "^--   $f *ON "; done
}

configure require-all fail -DSUPERSTEP_REQUIRE_ALL=ON -DCMAKE_DISABLE_FIND_PACKAGE_Hwloc=ON && {
  says "SUPERSTEP_REQUIRE_ALL=ON but this build would leave out: hwloc"
}

if [ $failed -ne 0 ]; then echo "optional dependencies: FAILED"; exit 1; fi
echo "optional dependencies: every configuration configured, built and ran"
