#!/usr/bin/env bash
# installed.sh BUILD_DIR WORK SOURCE_DIR: the matrix from an installed
# prefix. Installs the build into WORK/prefix, compiles the hello programs
# (LPF, BSPlib, PUB) with the installed bspcc, and runs each with the
# installed bsprun on pthread p=2, MPI p=2 and hybrid 2x2 (PUB: not there,
# docs/hybrid.md), each plain, checked and profiled (run.sh).
set -u
build=$1 work=$2 src=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; echo "FAILED: install"; exit 1; }
for p in lpf/hello_lpf.c bsplib/hello_bsp.c pub/hello_pub.c; do
  n=$(basename "$p" .c)
  "$prefix/bin/bspcc" -O2 "$src/examples/$p" -o "$work/$n" || { echo "FAILED: bspcc $p"; exit 1; }
done
engines=("--engine pthread -n 2")
if [ -x "$prefix/bin/bsprun" ] && "$prefix/bin/bsprun" --engine mpi -n 1 --dry-run true >/dev/null 2>&1; then
  engines+=("--engine mpi -n 2" "--engine hybrid -n 4 -t 2")
fi
fails=0
for n in hello_lpf hello_bsp hello_pub; do
  for e in "${engines[@]}"; do
    case "$e" in *hybrid*) [ "$n" = hello_pub ] && continue ;; esac
    P=${e##*-n }; P=${P%% *}
    for mode in plain check profile; do
      d="$work/run.$n.${e// /_}.$mode"
      # shellcheck disable=SC2086
      if "$here/run.sh" "$mode" "$d" "$prefix/bin/bsprun" $e "$work/$n" "$P" >"$d.log" 2>&1; then
        echo "ok: $n $e $mode"
      else
        cat "$d.log"
        echo "FAILED: $n $e $mode"
        fails=$((fails + 1))
      fi
    done
  done
done
[ "$fails" -eq 0 ] && echo "installed: ok"
