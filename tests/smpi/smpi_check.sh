#!/bin/sh
# tests/smpi/smpi_check.sh SOURCE_DIR BUILD_DIR: build bench/scale/scale with
# smpicc (-DSUPERSTEP_SMPI=ON) and run it under smpirun at p = 4 and 16 with
# --check (every received byte compared), the engine with its default sync
# and with SUPERSTEP_MPI_SPARSE=0. Exit 77 (skip) without SimGrid.
set -eu
src=${1:?usage: smpi_check.sh SOURCE_DIR BUILD_DIR}
bld=${2:?usage: smpi_check.sh SOURCE_DIR BUILD_DIR}
for t in smpicc smpicxx smpirun; do
    if ! command -v $t >/dev/null 2>&1; then
        echo "smpi_check: skipped: $t not found (SimGrid's SMPI: apt-get install libsimgrid-dev)"
        exit 77
    fi
done
if [ ! -f "$bld/build.ninja" ]; then
    launcher=
    command -v ccache >/dev/null 2>&1 && launcher="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    # shellcheck disable=SC2086
    cmake -S "$src" -B "$bld" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_SMPI=ON \
        -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx $launcher > "$bld.configure.log" 2>&1 \
        || { cat "$bld.configure.log"; echo "smpi_check: configuring the SMPI build failed"; exit 1; }
fi
ninja -C "$bld" -j2 scale > "$bld.build.log" 2>&1 \
    || { tail -40 "$bld.build.log"; echo "smpi_check: building bench/scale/scale with smpicc failed"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/smpi_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
sh "$src/bench/scale/platform.sh" 16 > "$tmp/platform.xml"
cfg="--cfg=smpi/simulate-computation:no --cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0
 --cfg=smpi/or:0:3e-7:0 --cfg=smpi/test:1e-7 --cfg=smpi/iprobe:1e-7
 --cfg=smpi/grow-injected-times:no --cfg=smpi/coll-selector:ompi
 --log=root.thres:warning --log=smpi_colls.thres:warning --log=smpi_config.thres:error"
fail=0
for p in 4 16; do
    for sparse in "" 0; do
        # shellcheck disable=SC2086
        # (smpirun 3.32 mis-parses -tmpdir: its temporary files go to $TMPDIR)
        if ! env ${sparse:+SUPERSTEP_MPI_SPARSE=$sparse} TMPDIR="$tmp" timeout --signal=KILL 120 smpirun \
                -np $p -platform "$tmp/platform.xml" $cfg "$bld/bench/scale/scale" \
                --check --reps 2 > "$tmp/out" 2>&1 || ! grep -q '^CHECK ok' "$tmp/out"; then
            cat "$tmp/out"
            echo "smpi_check: p = $p${sparse:+, SUPERSTEP_MPI_SPARSE=$sparse}: FAILED"
            fail=1
        else
            echo "smpi_check: p = $p${sparse:+, SUPERSTEP_MPI_SPARSE=$sparse}: ok ($(grep -c '^RESULT' "$tmp/out") results)"
        fi
    done
done
exit $fail
