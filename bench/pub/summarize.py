#!/usr/bin/env python3
"""Ranges over several runs of bench/pub/run.sh (JSON lines files): the
tables of docs/pub.md. Each cell is min-max over the files of the per-run
medians.   bench/pub/summarize.py run1.jsonl run2.jsonl ..."""
import json
import sys
from collections import defaultdict

rows = defaultdict(lambda: defaultdict(list))
for fn in sys.argv[1:]:
    for line in open(fn):
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        b = d["bench"]
        if b == "pub_oblsync":
            key = (b, d["p"])
            fields = ["us_sync", "us_oblsync", "ratio"]
        elif b == "pub_group_sync":
            key = (b, d["p"], d["group"])
            fields = ["us_all", "us_group", "ratio"]
        elif b == "pub_bsearch":
            key = (b, d["p"], d["m"], d["form"])
            fields = ["us_per_query", "us_per_query_total"]
        elif b == "pub_coll":
            key = (b, d["p"], d["bytes"])
            fields = ["us_pub_sync", "us_pub_oblsync", "us_puts_sync", "us_lpf_coll"]
        else:
            continue
        for f in fields:
            rows[key][f].append(d[f])


def rng(v, fmt):
    lo, hi = min(v), max(v)
    return (fmt % lo) + "–" + (fmt % hi) if fmt % lo != fmt % hi else fmt % lo


print("### (i) oblsync vs sync, one message per process (µs per superstep)\n")
print("| p | bsp_sync | bsp_oblsync | ratio |\n|---|---|---|---|")
for k in sorted(k for k in rows if k[0] == "pub_oblsync"):
    r = rows[k]
    print(f"| {k[1]} | {rng(r['us_sync'], '%.2f')} | {rng(r['us_oblsync'], '%.2f')} | {rng(r['ratio'], '%.2f')} |")
print("\n### (ii) group sync vs sync of all (µs per empty sync)\n")
print("| p | group | sync of all | sync of a half | ratio |\n|---|---|---|---|---|")
for k in sorted(k for k in rows if k[0] == "pub_group_sync"):
    r = rows[k]
    print(f"| {k[1]} | {k[2]} | {rng(r['us_all'], '%.2f')} | {rng(r['us_group'], '%.2f')} | {rng(r['ratio'], '%.2f')} |")
forms = ["send", "hpsend", "partition", "oblsync"]
for p in sorted({k[1] for k in rows if k[0] == "pub_bsearch"}):
    print(f"\n### (iii) binary search, p = {p}: routing, µs per query per process (T/m)\n")
    print("| m | (1) send | (2b) hpsend | (3a) partition | (3b) oblsync |\n|---|---|---|---|---|")
    for m in sorted({k[2] for k in rows if k[0] == "pub_bsearch" and k[1] == p}):
        cells = []
        for f in forms:
            r = rows.get(("pub_bsearch", p, m, f))
            cells.append(rng(r["us_per_query"], "%.4f") if r else "")
        print(f"| 2^{m.bit_length() - 1} | " + " | ".join(cells) + " |")
    print(f"\nrouting + local search + answers back (µs per query per process), p = {p}:\n")
    print("| m | (1) send | (2b) hpsend | (3a) partition | (3b) oblsync |\n|---|---|---|---|---|")
    for m in sorted({k[2] for k in rows if k[0] == "pub_bsearch" and k[1] == p}):
        cells = []
        for f in forms:
            r = rows.get(("pub_bsearch", p, m, f))
            cells.append(rng(r["us_per_query_total"], "%.4f") if r else "")
        print(f"| 2^{m.bit_length() - 1} | " + " | ".join(cells) + " |")
print("\n### (iv) broadcast + reduction on half of the processes (µs per superstep)\n")
print("| p | bytes | gsend+greduce, bsp_sync | gsend+greduce, bsp_oblsync | puts + bsp_sync | lpf_broadcast + lpf_combine |\n|---|---|---|---|---|---|")
for k in sorted(k for k in rows if k[0] == "pub_coll"):
    r = rows[k]
    print(f"| {k[1]} | {k[2]} | {rng(r['us_pub_sync'], '%.1f')} | {rng(r['us_pub_oblsync'], '%.1f')} | "
          f"{rng(r['us_puts_sync'], '%.1f')} | {rng(r['us_lpf_coll'], '%.1f')} |")
