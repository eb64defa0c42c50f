#!/usr/bin/env bash
# The binary-search figure of docs/pub.md (after the PUB paper's Figs 2-4):
# time per query per process of the routing, for the four forms, p = 2 and
# p = 4, from the JSON lines of one or more runs of bench/pub/run.sh
# (points: median over the runs of the per-run medians; bars: min-max).
#   bench/pub/plot.sh out.png run1.jsonl [run2.jsonl ...]
set -euo pipefail
out=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "$@" <<'PY'
import json, statistics, sys
from collections import defaultdict
tmp, files = sys.argv[1], sys.argv[2:]
v = defaultdict(list)
for fn in files:
    for line in open(fn):
        if '"pub_bsearch"' in line:
            d = json.loads(line)
            v[(d["p"], d["form"], d["m"])].append(d["us_per_query"])
for (p, form, m), xs in v.items():
    with open(f"{tmp}/{form}_p{p}.dat", "a") as f:
        f.write(f"{m} {statistics.median(xs)} {min(xs)} {max(xs)}\n")
PY
for f in "$tmp"/*.dat; do sort -n "$f" -o "$f"; done
gnuplot <<GP
set terminal pngcairo size 1200,520 font "sans,10"
set output "$out"
set multiplot layout 1,2 title "Parallel binary search on a search butterfly with <pub.h>: routing time per query per process (2-vCPU KVM guest, pthread engine)"
set xlabel "queries per process m"
set ylabel "T/m [us]"
set logscale x 2
set format x "2^{%L}"
set logscale y
set grid
set key bottom right
do for [p in "2 4"] {
  set title sprintf("p = %s%s", p, p eq "4" ? " (oversubscribed: 4 threads on 2 vCPUs)" : "")
  plot "$tmp/send_p".p.".dat" u 1:2:3:4 w yerrorlines lw 2 t "(1) bsp\\\\_send per query + bsp\\\\_sync", \
       "$tmp/hpsend_p".p.".dat" u 1:2:3:4 w yerrorlines lw 2 t "(2b) packed bsp\\\\_hpsend + bsp\\\\_sync", \
       "$tmp/partition_p".p.".dat" u 1:2:3:4 w yerrorlines lw 2 t "(3a) partitions + bsp\\\\_sync", \
       "$tmp/oblsync_p".p.".dat" u 1:2:3:4 w yerrorlines lw 2 t "(3b) partitions + bsp\\\\_oblsync"
}
unset multiplot
GP
echo "wrote $out"
