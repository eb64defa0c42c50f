#!/usr/bin/env bash
# The figures of docs/lpf-extensions.md from one run, interleaved:
#
#   bench/lpfext/run.sh [-r rounds] [-n N] BUILD [BUILD2]
#
# For each of `rounds` rounds (default 5) runs, from each build in turn (a
# Release build directory with bench_lpfext, bench_pub and bsprun; a second
# build, say of another commit, makes an A/B comparison in the same run):
#   pthread: zero 2 and zero 4 (ordinary vs zero-cost superstep, one 8-byte
#            put each),
#            tag 2 (ordinary sync), tag 4 (tagged sync of 2 of 4 while the
#            others work), tagall 2 (tagged sync of both);
#   PUB:     bench_pub oblsync -p 2 (bsp_oblsync vs bsp_sync, one message);
#   MPI:     zero 2 and zero 4 under bsprun --engine mpi -n P.
# Prints one line per figure: the build, then min, median and max over the
# rounds (us per superstep; ratios for the zero-cost and PUB rows).
set -euo pipefail
rounds=5 N=20000
while getopts "r:n:" opt; do
  case $opt in
    r) rounds=$OPTARG ;;
    n) N=$OPTARG ;;
    *) echo "usage: $0 [-r rounds] [-n N] BUILD [BUILD2]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r rounds] [-n N] BUILD [BUILD2]" >&2; exit 2; }
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
export LPF_MAX_PROCS=4
for r in $(seq "$rounds"); do
  for b in "$@"; do
    L=$b/bench/lpfext/bench_lpfext
    $L zero 2 "$N" | sed -n 's/.*ordinary superstep \([0-9.]*\) us, zero-cost superstep \([0-9.]*\) us, ratio \([0-9.]*\).*/pt_ordinary \1\npt_zero \2\npt_zero_ratio \3/p' | sed "s|^|$b |" >> "$raw"
    $L zero 4 "$N" | sed -n 's/.*ordinary superstep \([0-9.]*\) us, zero-cost superstep \([0-9.]*\) us, ratio \([0-9.]*\).*/pt4_ordinary \1\npt4_zero \2\npt4_zero_ratio \3/p' | sed "s|^|$b |" >> "$raw"
    $L tag 2 "$N" | sed -n 's/.*: \([0-9.]*\) us per superstep.*/pt_tag_ordinary_p2 \1/p' | sed "s|^|$b |" >> "$raw"
    $L tag 4 "$N" | sed -n 's/.*: \([0-9.]*\) us per superstep.*/pt_tag_2of4 \1/p' | sed "s|^|$b |" >> "$raw"
    $L tagall 2 "$N" | sed -n 's/.*: \([0-9.]*\) us per superstep.*/pt_tag_both_p2 \1/p' | sed "s|^|$b |" >> "$raw"
    "$b/bench/bench_pub" oblsync -p 2 -k 2000 -r 1 | sed -n 's/.*"us_sync":\([0-9.]*\),"us_oblsync":\([0-9.]*\),"ratio":\([0-9.]*\).*/pub_sync \1\npub_oblsync \2\npub_ratio \3/p' | sed "s|^|$b |" >> "$raw"
    BENCH_LPFEXT=zero:$N timeout 120 "$b/tools/bsprun/bsprun" --engine mpi -n 2 "$L" zero 2 "$N" | sed -n 's/.*ordinary superstep \([0-9.]*\) us, zero-cost superstep \([0-9.]*\) us, ratio \([0-9.]*\).*/mpi_ordinary \1\nmpi_zero \2\nmpi_zero_ratio \3/p' | sed "s|^|$b |" >> "$raw"
    BENCH_LPFEXT=zero:$N timeout 120 "$b/tools/bsprun/bsprun" --engine mpi -n 4 "$L" zero 4 "$N" | sed -n 's/.*ordinary superstep \([0-9.]*\) us, zero-cost superstep \([0-9.]*\) us, ratio \([0-9.]*\).*/mpi4_ordinary \1\nmpi4_zero \2\nmpi4_zero_ratio \3/p' | sed "s|^|$b |" >> "$raw"
  done
done
echo "# $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds, N = $N"
awk '{ k = $1 " " $2; v[k] = v[k] " " $3; if (!(k in seen)) { seen[k] = 1; order[n++] = k } }
  END { for (i = 0; i < n; i++) { k = order[i]; m = split(substr(v[k], 2), a, " ");
          for (x = 1; x <= m; x++) for (y = x + 1; y <= m; y++) if (a[y] + 0 < a[x] + 0) { t = a[x]; a[x] = a[y]; a[y] = t }
          printf "%-40s %-20s min %8.3f  median %8.3f  max %8.3f\n", substr(k, 1, index(k, " ") - 1),
                 substr(k, index(k, " ") + 1), a[1], a[int((m + 1) / 2)], a[m] } }' "$raw" | sort -k2,2 -s
