#!/usr/bin/env bash
# bench/rma/run.sh -- the RMA paper's experiment in one run: the As, Mult
# and Rdx suites, written once against <rma.h>, on
#   Superstep pthread   BSPlib mapping, bsprun --engine pthread
#   Superstep MPI       BSPlib mapping, bsprun --engine mpi
#   Superstep hybrid    BSPlib mapping, bsprun --engine hybrid (default
#                       threads per rank: at p = 2 on one node, one rank of
#                       two threads)
#   Open MPI one-sided  the MPI mapping (MPI_Win_create, fences), mpirun
#   Open MPI two-sided  the paper's send/receive variants (As, Mult), mpirun
# and Superstep's own BSPlib applications (examples/matmul, examples/sort)
# beside the interface's BSPlib build. Rounds are interleaved: every round
# runs every configuration once, so load from other users spreads over
# all columns; each cell is the median over the rounds with the range.
# The tables go into docs/rma.md between the "rma-run" markers.
#
#   bench/rma/run.sh [-b BUILD] [-r ROUNDS] [-p P] [--quick] [--no-doc]
#
#   -b BUILD   build directory (default: build); needs the targets of
#              bench/rma and tools/bsprun (ninja -C BUILD rma_as_bsplib ...)
#   -r ROUNDS  rounds (default 3)
#   -p P       processes (default 2)
#   --quick    small sizes, one round (a check of the script)
#   --no-doc   print the tables, leave docs/rma.md alone
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
rounds=3
p=2
quick=0
writedoc=1
while [ $# -gt 0 ]; do
  case "$1" in
    -b) build=$2; shift 2 ;;
    -r) rounds=$2; shift 2 ;;
    -p) p=$2; shift 2 ;;
    --quick) quick=1; rounds=1; shift ;;
    --no-doc) writedoc=0; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build=$root/$build ;; esac
bin=$build/bench/rma
bsprun=$build/tools/bsprun/bsprun
for t in rma_as_bsplib rma_mult_bsplib rma_rdx_bsplib rma_as_mpi rma_mult_mpi rma_rdx_mpi \
         rma_as_mpi2 rma_mult_mpi2 rma_native; do
  [ -x "$bin/$t" ] || { echo "run.sh: $bin/$t missing: ninja -C $build $t" >&2; exit 2; }
done
[ -x "$bsprun" ] || { echo "run.sh: $bsprun missing" >&2; exit 2; }
mpirun=(mpirun -n "$p" --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)

if [ $quick = 1 ]; then
  as_args=(-r 200 -h 16384 -x 1048576)
  mult_n=(160 320)
  rdx_n=(102400 1024000)
else
  as_args=(-r 2000 -h 262144 -x 67108864)
  mult_n=(320 640 1280)
  rdx_n=(1024000 4096000 16384000)
fi
# repetitions inside one run (the best counts): more for the short ones
reps() { if [ "$1" -le 400 ] || [ "$1" -le 1100000 -a "$1" -gt 2000 ]; then echo 5;
         elif [ "$1" -le 700 ] || [ "$1" -le 4200000 -a "$1" -gt 2000 ]; then echo 3; else echo 1; fi; }

log=$build/bench/rma/run.log
: > "$log"
# run COLUMN command...: the command's lines, tagged, into the log
run() {
  local col=$1
  shift
  if ! "$@" > "$log.tmp" 2>&1; then
    echo "run.sh: failed ($col): $*" >&2
    cat "$log.tmp" >&2
    exit 1
  fi
  sed "s/^/col=$col round=$r /" "$log.tmp" >> "$log"
}
sp() {   # sp ENGINE program args: Superstep, the BSPlib mapping
  local e=$1
  shift
  run "sp_$e" "$bsprun" --engine "$e" -n "$p" "$@"
}

start=$(date +%s)
for r in $(seq 1 "$rounds"); do
  echo "run.sh: round $r of $rounds" >&2
  # As
  for e in pthread mpi hybrid; do sp $e "$bin/rma_as_bsplib" "${as_args[@]}"; done
  run mpi1 "${mpirun[@]}" "$bin/rma_as_mpi" "${as_args[@]}"
  run mpi2 "${mpirun[@]}" "$bin/rma_as_mpi2" "${as_args[@]}"
  # Mult: the sequential product once per size and round, then every column
  for n in "${mult_n[@]}"; do
    k=$(reps "$n")
    run seq "$bsprun" -n 1 "$bin/rma_mult_bsplib" -n "$n" -s 1 -c 0 -r "$k"
    for v in put get; do
      for e in pthread mpi hybrid; do sp $e "$bin/rma_mult_bsplib" -n "$n" -v $v -c 0 -r "$k"; done
      run mpi1 "${mpirun[@]}" "$bin/rma_mult_mpi" -n "$n" -v $v -c 0 -r "$k"
      run native "$bsprun" -n "$p" "$bin/rma_native" -m mult -n "$n" -v hp$v -r "$k"
    done
    run mpi2 "${mpirun[@]}" "$bin/rma_mult_mpi2" -n "$n" -c 0 -r "$k"
  done
  # Rdx
  for n in "${rdx_n[@]}"; do
    k=$(reps "$n")
    for a in 0 1; do
      for e in pthread mpi hybrid; do sp $e "$bin/rma_rdx_bsplib" -n "$n" -a $a -c 0 -r "$k"; done
      run mpi1 "${mpirun[@]}" "$bin/rma_rdx_mpi" -n "$n" -a $a -c 0 -r "$k"
      run native "$bsprun" -n "$p" "$bin/rma_native" -m rdx -n "$n" -a $a -r "$k"
    done
    n2=${rdx_n[1]}
    if [ "$n" = "$n2" ]; then   # the combining variant at one size
      for e in pthread mpi hybrid; do sp $e "$bin/rma_rdx_bsplib" -n "$n" -a 2 -c 0 -r "$k"; done
      run mpi1 "${mpirun[@]}" "$bin/rma_rdx_mpi" -n "$n" -a 2 -c 0 -r "$k"
    fi
  done
done
rm -f "$log.tmp"
secs=$(( $(date +%s) - start ))

tables=$(python3 - "$log" "$p" "$rounds" "$secs" "$(nproc)" "$quick" <<'PY'
import sys, statistics
log, p, rounds, secs, ncpu, quick = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6] == "1"
vals = {}          # (suite, row, col) -> [values]
def add(suite, row, col, v):
    vals.setdefault((suite, row, col), []).append(v)
for line in open(log):
    kv = {}
    words = line.split()
    for w in words:
        if "=" in w:
            k, v = w.split("=", 1)
            kv[k] = v
    col = kv.get("col")
    prog = words[2] if len(words) > 2 else ""
    if prog == "as" and "test" in kv:
        add("as", "Test %s" % kv["test"], col, float(kv["us"]))
    elif prog == "as" and "g" in kv:
        h = int(kv["h"])
        if h >= 64 and (h.bit_length() - 1) % 2 == 0:   # 64, 256, ..., 4^k
            add("as", "g, h = %s" % kv["h"], col, float(kv["g"]))
    elif prog == "mult" and kv.get("seq") is None and "variant" in kv:
        name = "MatMulG" if kv["variant"] == "get" else "MatMul"
        add("mult", "%s n = %s" % (name, kv["n"]), col, float(kv["s"]))
    elif prog == "mult" and words[3] == "seq":
        add("seq", "n = %s" % kv["n"], "seq", float(kv["s"]))
    elif prog == "rdx" and "algo" in kv:
        name = {"rdxsort": "RDXSORT", "rdxsortopt": "RDXSORTOPT", "combining": "combining"}[kv["algo"]]
        add("rdx", "%s n = %s" % (name, kv["n"]), col, float(kv["s"]))
    elif prog == "native":
        if kv["app"] == "matmul":
            name = "MatMulG" if kv["variant"] == "hpget" else "MatMul"
        else:
            name = "RDXSORTOPT" if kv["algo"] == "rdxsortopt" else "RDXSORT"
        add("native", "%s n = %s" % (name, kv["n"]), "native", float(kv["s"]))

def med(suite, row, col):
    v = vals.get((suite, row, col))
    return statistics.median(v) if v else None
def low(suite, row, col):
    v = vals.get((suite, row, col))
    return min(v) if v else None
def cell(suite, row, col, fmt, extra=None):
    v = vals.get((suite, row, col))
    if not v:
        return "—"
    m = statistics.median(v)
    s = fmt % m
    if len(v) > 1:
        s += " (" + fmt % min(v) + "–" + fmt % max(v) + ")"
    if extra:
        s += extra(m)
    return s
def rows_of(suite):
    seen = []
    for (s, r, c) in vals:
        if s == suite and r not in seen:
            seen.append(r)
    return seen
def keyrow(r):
    parts = r.split("n = ")
    if r.startswith("Test"):
        return (0, int(r.split()[1]))
    if r.startswith("g,"):
        return (1, int(r.split("= ")[1]))
    name = parts[0].strip()
    order = {"MatMul": 0, "MatMulG": 1, "RDXSORT": 0, "RDXSORTOPT": 1, "combining": 2}
    return (int(parts[1]), order.get(name, 9))
def ratio(a, b):
    return "%.2f" % (a / b) if a is not None and b else "—"

sp_cols = ["sp_pthread", "sp_mpi", "sp_hybrid"]
cols = sp_cols + ["mpi1", "mpi2"]
head = "| %s | Superstep pthread | Superstep MPI | Superstep hybrid | Open MPI one-sided | Open MPI two-sided | MPI best ÷ Superstep best, medians | same, minima | MPI best ÷ Superstep MPI, medians |"
sep = "|" + " --- |" * 9
out = []
met = [0, 0, 0]
lost, lost_low = [], []
def table(suite, title, unit, fmt, extra_for=None):
    out.append("")
    out.append(title)
    out.append("")
    out.append(head % unit)
    out.append(sep)
    for r in sorted(rows_of(suite), key=keyrow):
        cells = []
        f = "%.5f" if r.startswith("g,") else fmt
        for c in cols:
            cells.append(cell(suite, r, c, f, extra_for(r) if extra_for else None))
        def best(f, cs):
            xs = [f(suite, r, c) for c in cs if f(suite, r, c) is not None]
            return min(xs) if xs else None
        best_sp, best_mpi = best(med, sp_cols), best(med, ("mpi1", "mpi2"))
        low_sp, low_mpi = best(low, sp_cols), best(low, ("mpi1", "mpi2"))
        ra = ratio(best_mpi, best_sp)
        rl = ratio(low_mpi, low_sp)
        rb = ratio(best_mpi, med(suite, r, "sp_mpi"))
        if best_sp is not None and best_mpi is not None:
            met[2] += 1
            if best_sp < best_mpi:
                met[0] += 1
            else:
                lost.append("%s %s" % (suite, r))
            if low_sp < low_mpi:
                met[1] += 1
            else:
                lost_low.append("%s %s" % (suite, r))
        out.append("| %s | %s | %s | %s | %s |" % (r, " | ".join(cells), ra, rl, rb))

table("as", "**As** (µs; Tests 1–5: one superstep; g: µs per 32-bit word of a total exchange of h words per process)", "As", "%.3f")
def speedup(r):
    n = r.split("n = ")[1]
    s = med("seq", "n = " + n, "seq")
    return (lambda m: " ×%.2f" % (s / m)) if s else None
table("mult", "**Mult** (seconds; × speedup over the sequential blocked product of the same run; MatMul: put, or send in the two-sided column; MatMulG: get)", "Mult", "%.4f", speedup)
seqrows = sorted(rows_of("seq"), key=lambda r: int(r.split("= ")[1]))
out.append("")
out.append("Sequential product (same runs): " + ", ".join("%s: %s s" % (r, cell("seq", r, "seq", "%.4f")) for r in seqrows) + ".")
table("rdx", "**Rdx** (seconds; 1 M = 1024000 keys; the paper's artificial delay of RDXSORTOPT is left out; no two-sided variant, as in the paper)", "Rdx", "%.4f")

out.append("")
out.append("**The interface against Superstep's own BSPlib applications** (pthread engine, same data and timing; the mapping uses bsp_hpput/bsp_hpget, so the applications run with their hp variants)")
out.append("")
out.append("| row | `<rma.h>` on BSPlib | examples/matmul, examples/sort | ratio, medians | ratio, minima |")
out.append("| --- | --- | --- | --- | --- |")
worst = worst_low = 0.0
for r in sorted(rows_of("native"), key=keyrow):
    a, b = med("mult" if r.startswith("MatMul") else "rdx", r, "sp_pthread"), med("native", r, "native")
    suite = "mult" if r.startswith("MatMul") else "rdx"
    la, lb = low(suite, r, "sp_pthread"), low("native", r, "native")
    if a and b:
        worst = max(worst, a / b)
    if la and lb:
        worst_low = max(worst_low, la / lb)
    out.append("| %s | %s | %s | %s | %s |" % (r, cell(suite, r, "sp_pthread", "%.4f"), cell("native", r, "native", "%.4f"), ratio(a, b), ratio(la, lb)))
out.append("")
out.append("Rows where a Superstep column beats both Open MPI columns: by the medians %d of %d%s; by the minima %d of %d%s." % (met[0], met[2], (" (not: " + "; ".join(lost) + ")") if lost else "", met[1], met[2], (" (not: " + "; ".join(lost_low) + ")") if lost_low else ""))
out.append("Slowest ratio of the interface to Superstep's own application: %.2f by the medians, %.2f by the minima." % (worst, worst_low))
out.append("")
out.append("p = %d, %d interleaved round(s), %d s in all, on this %s-core machine shared with other users' builds and tests%s." % (p, rounds, secs, ncpu, " (quick sizes)" if quick else ""))
print("\n".join(out))
PY
)
printf '%s\n' "$tables"
if [ $writedoc = 1 ]; then
  doc=$root/docs/rma.md
  printf '%s\n' "$tables" > "$log.tables"
  python3 - "$doc" "$log.tables" <<'PY'
import sys
doc, tab = sys.argv[1], sys.argv[2]
s = open(doc).read()
b, e = "<!-- rma-run:begin -->", "<!-- rma-run:end -->"
i, j = s.find(b), s.find(e)
if i < 0 or j < 0:
    sys.exit("run.sh: the markers are missing in " + doc)
open(doc, "w").write(s[:i + len(b)] + "\n" + open(tab).read() + "\n" + s[j:])
PY
  echo "run.sh: tables written into docs/rma.md" >&2
fi
