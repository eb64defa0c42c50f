#!/bin/sh
# bench/scale/run.sh: the MPI engine at p = 64, 256, 1,024 and 4,096 ranks on
# a simulated InfiniBand fat tree (SimGrid SMPI), beside plain MPI in the same
# simulation; one table into docs/scale.md (between its markers) and one
# machine parameter file per p (the format of bspprobe --save) for
# `bspprof --machine FILE --procs P`. docs/scale.md explains what is
# simulated and what is not.
#
#   bench/scale/run.sh [--quick] [--p "64 256 ..."] [--reps N] [--timeout S]
#                      [--rows LIST] [--variants LIST] [--append] [--mem GIB]
#                      [--all-rows] [--no-docs] [--table-only] [--build DIR]
#                      [--out DIR]
#
#   --quick      p = 64 and 256 only (a few minutes)
#   --p LIST     these p (multiples of 32, or below 32)
#   --reps N     supersteps / operations timed per row (default 3)
#   --timeout S  real seconds one simulation may take before its cells say
#                so (default 900)
#   --rows LIST  simulate these rows (empty,rand4,hrel,total,dget) at every
#                p given, instead of the rows chosen by p (below)
#   --variants LIST  these simulations only: sparse (the engine's default
#                sync), dense (SUPERSTEP_MPI_SPARSE=0), mpi (plain MPI)
#   --append     keep the results of earlier runs (OUT/results.txt) and add
#                these; a later result replaces an earlier one for the same
#                variant, row and p; the table has a column for every p in
#                the results (columns from separate runs, one table)
#   --mem GIB    virtual memory one simulation may take (ulimit -v; default
#                16); beyond it the simulation fails, and its cells say so
#   --all-rows   every row at every p (the total exchange and MPI_Alltoallv
#                beyond 256, the h-relation beyond 1,024: hours of real
#                time there), and the dense sync up to 1,024
#   --no-docs    print the table, leave docs/scale.md alone
#   --table-only no simulation: the table and parameter files again from
#                the results of earlier runs (OUT/results.txt)
#   --build DIR  the SMPI build folder (default build-smpi)
#   --out DIR    raw results, platforms, parameter files (default DIR/scale-out)
#
# Needs smpicc/smpirun (Debian package libsimgrid-dev) and python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
P_LIST="64 256 1024 4096"
REPS=3
TIMEOUT=900
DOCS=1
ALL_ROWS=0
TABLE_ONLY=0
ROWS=
VARIANTS=sparse,dense,mpi
APPEND=0
MEM_GIB=16
BUILD=$root/build-smpi
OUT=
while [ $# -gt 0 ]; do
    case $1 in
        --quick) P_LIST="64 256" ;;
        --p) P_LIST=${2:?--p needs a list}; shift ;;
        --reps) REPS=${2:?--reps needs a number}; shift ;;
        --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift ;;
        --no-docs) DOCS=0 ;;
        --all-rows) ALL_ROWS=1 ;;
        --rows) ROWS=${2:?--rows needs a list}; shift ;;
        --variants) VARIANTS=${2:?--variants needs a list}; shift ;;
        --append) APPEND=1 ;;
        --mem) MEM_GIB=${2:?--mem needs GiB}; shift ;;
        --table-only) TABLE_ONLY=1 ;;
        --build) BUILD=${2:?--build needs a folder}; shift ;;
        --out) OUT=${2:?--out needs a folder}; shift ;;
        -h|--help) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$OUT" ] || OUT=$BUILD/scale-out
for t in smpicc smpirun python3 cmake ninja; do
    command -v $t >/dev/null 2>&1 || { echo "run.sh: $t not found (smpicc/smpirun: apt-get install libsimgrid-dev)" >&2; exit 2; }
done

# ---- the simulated machine: one place (docs/scale.md gives the sources) -----
# per message: 0.3 us of the sender's and the receiver's CPU (smpi/os for
# blocking sends, smpi/ois for MPI_Isend, smpi/or for receives); a poll
# (MPI_Test*, MPI_Iprobe) 0.1 us; the clock 10 ns; computation between MPI
# calls is not simulated (no CPU model: only messages and polls cost time);
# bandwidth and latency exactly as the platform says (factors 1; 0.97 of the
# link rate for payload); Open MPI's collective algorithms.
SIM_CFG="--cfg=smpi/simulate-computation:no
--cfg=smpi/os:0:3e-7:0 --cfg=smpi/ois:0:3e-7:0 --cfg=smpi/or:0:3e-7:0
--cfg=smpi/test:1e-7 --cfg=smpi/iprobe:1e-7 --cfg=smpi/grow-injected-times:no
--cfg=smpi/wtime:1e-8
--cfg=smpi/bw-factor:0:0.97 --cfg=smpi/lat-factor:0:1
--cfg=smpi/coll-selector:ompi
--cfg=smpi/privatization:dlopen --cfg=contexts/stack-size:256
--cfg=smpi/display-timing:no
--log=root.thres:warning --log=smpi_colls.thres:warning --log=smpi_config.thres:error"

# ---- build ----------------------------------------------------------------------
RAW=$OUT/results.txt
if [ "$TABLE_ONLY" = 1 ]; then
    [ -f "$RAW" ] || { echo "run.sh: --table-only: no $RAW (run the simulations first)" >&2; exit 2; }
elif [ ! -f "$BUILD/build.ninja" ]; then
    launcher=
    command -v ccache >/dev/null 2>&1 && launcher="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
    # shellcheck disable=SC2086
    cmake -S "$root" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSUPERSTEP_SMPI=ON \
        -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx $launcher >/dev/null
fi
[ "$TABLE_ONLY" = 1 ] || ninja -C "$BUILD" scale >/dev/null
PROG=$BUILD/bench/scale/scale
mkdir -p "$OUT"
[ "$TABLE_ONLY" = 1 ] || [ "$APPEND" = 1 ] || : > "$RAW"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/scale.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT INT TERM

# one simulation: run VARIANT P ROWS [ENV=VAL ...] -- program options
run() {
    var=$1 rp=$2 rrows=$3; shift 3
    envs=
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    [ $# -gt 0 ] && shift
    case ",$VARIANTS," in *",$var,"*) ;; *) return 0 ;; esac
    [ -n "$ROWS" ] && rrows=$ROWS
    log=$OUT/log-$var-$rp.txt
    # peak resident memory of the simulator (GNU time, where installed)
    rssf=$TMPD/rss
    rm -f "$rssf"
    timer=
    [ -x /usr/bin/time ] && timer="/usr/bin/time -f %M -o $rssf"
    t0=$(date +%s)
    # (smpirun 3.32 mis-parses -tmpdir: its temporary files, one copy of the
    # program per rank, go to $TMPDIR; timeout signals its whole process
    # group, the simulator included)
    # shellcheck disable=SC2086
    if ( ulimit -v $((MEM_GIB * 1048576)) && exec env $envs TMPDIR="$TMPD" \
            timeout --signal=KILL "$TIMEOUT" $timer smpirun -np "$rp" \
            -platform "$OUT/platform-$rp.xml" $SIM_CFG "$PROG" --rows "$rrows" --reps "$REPS" "$@" ) \
            > "$log" 2>&1; then
        status=ok
    else
        status="failed ($?)"
    fi
    t1=$(date +%s)
    rss=0
    [ -s "$rssf" ] && rss=$(tail -n 1 "$rssf" | tr -cd 0-9)
    [ -n "$rss" ] || rss=0
    grep '^RESULT ' "$log" | sed "s/^RESULT /$var /" >> "$RAW" || true
    echo "SIM $var $rp $rrows $((t1 - t0)) rss=$rss $status" >> "$RAW"
    echo "run.sh: p = $rp, $var ($rrows): $((t1 - t0)) s, peak ${rss} KiB, $status" >&2
}

for p in $P_LIST; do
    [ "$TABLE_ONLY" = 1 ] && break
    "$here/platform.sh" "$p" > "$OUT/platform-$p.xml"
    # the rows by p (docs/scale.md, "What it costs to simulate"): every
    # row up to 256; the total exchange (p(p - 1) messages by definition)
    # not beyond; the h-relation (16 p flows of 64 KiB at once, whose
    # bandwidth sharing the simulator solves again at every message's end)
    # not beyond 1,024; all of them with --all-rows
    rows=empty,rand4,hrel,dget
    [ "$p" -le 256 ] && rows=$rows,total
    [ "$p" -gt 1024 ] && rows=empty,rand4,dget
    [ "$ALL_ROWS" = 1 ] && rows=empty,rand4,hrel,dget,total
    # the engine as it chooses by default, then with the dense first-message
    # sync (every process a first message to every peer: p(p - 1) messages
    # per superstep, which the simulator pays for message by message; beyond
    # 1,024 ranks one superstep alone outlasts any sensible budget)
    run sparse "$p" "$rows" -- --lpf-only
    # the dense sync: all rows at p = 64, the empty and the random-peers
    # row at 256 (one of its supersteps costs the simulator about as much
    # real time as ten at 64: p(p - 1) messages); none beyond
    if [ "$p" -le 64 ]; then
        run dense "$p" "$rows" SUPERSTEP_MPI_SPARSE=0 -- --lpf-only
    elif [ "$p" -le 256 ] || { [ "$p" -le 1024 ] && [ "$ALL_ROWS" = 1 ]; }; then
        run dense "$p" empty,rand4 SUPERSTEP_MPI_SPARSE=0 -- --lpf-only
    fi
    # MPI_Alltoallv sends p - 1 messages per process (Open MPI's pairwise
    # and linear algorithms, zero bytes or not): not beyond 256 unless
    # --all-rows
    if [ "$p" -le 256 ] || [ "$ALL_ROWS" = 1 ]; then
        run mpi "$p" "$rows" -- --mpi-only
    else
        run mpi "$p" "$rows" -- --mpi-only --no-alltoallv
    fi
done

# ---- the table, the parameter files ----------------------------------------------
[ "$TABLE_ONLY" = 1 ] || [ "$APPEND" = 1 ] || KEEP_P=$P_LIST
python3 - "$RAW" "$OUT" "$root/docs/scale.md" "$DOCS" "${KEEP_P:-}" "$REPS" "$TIMEOUT" <<'EOF'
import sys, os, re
raw, out, doc, docs, plist, reps, tmo = sys.argv[1:8]
res = {}   # (variant, row, what, p) -> seconds or None
sims = {}  # (variant, p) -> [(rows, secs, peak KiB, status)], in the order run
for line in open(raw):
    f = line.split()
    if f[0] == 'SIM':
        rss = 0
        if len(f) > 5 and f[5].startswith('rss='):
            rss = int(f[5][4:] or 0)
            f = f[:5] + f[6:]
        sims.setdefault((f[1], int(f[2])), []).append((f[3].split(','), int(f[4]), rss, ' '.join(f[5:])))
        continue
    var, row, what, p, t = f[0], f[1], f[2], int(f[3]), f[4]
    res[(var, row, what, p)] = t if t in ('na', 'skipped') else float(t)
# the columns: the p of this run, or (--append, --table-only) every p simulated
P = sorted(set([int(x) for x in plist.split()] or [p for (_, p) in sims]))

def get(var, row, what, p):
    t = res.get((var, row, what, p))
    return t if isinstance(t, float) else None

def why_missing(var, row, p):
    ss = [s for s in sims.get((var, p), []) if row in s[0]]
    if not ss: return 'not run'
    rows, secs, rss, status = ss[-1]
    if status != 'ok':
        return 'over %d s' % secs if 'failed (137)' in status or 'failed (124)' in status else status
    return 'n/a'

def us(t):
    if t is None: return None
    v = t * 1e6
    return '%.3g' % v if v < 1000 else '%.0f' % v

def cell(var, row, what, p):
    t = get(var, row, what, p)
    if t is None:
        if res.get((var, row, what, p)) == 'skipped': return 'not simulated'
        if (var, row, what, p) in res: return 'n/a'
        w = why_missing(var, row, p)
        if row == 'total' and p > 256 and w == 'not run': return '—'
        return 'not simulated' if w == 'not run' else w
    return us(t)

def ratio(a, b, inv=False):
    if a is None or b is None or a <= 0 or b <= 0: return '—'
    return '%.2f' % ((b / a) if inv else (a / b))

rows = [
    ('empty', 'empty sync', ['MPI_Barrier'], 'MPI_Barrier', False, '≤ 1.5'),
    ('rand4', '8 B to 4 random peers', ['MPI_Barrier:empty', 'MPI_Alltoallv', 'MPI_Neighbor_alltoallv', 'MPI_Put+MPI_Win_fence'], 'MPI_Barrier:empty', False, '≤ 2'),
    ('hrel', '1 MiB h-relation, 16 peers', ['MPI_Alltoallv', 'MPI_Neighbor_alltoallv', 'MPI_Put+MPI_Win_fence'], 'MPI_Alltoallv', True, '≥ 0.9'),
    ('total', 'total exchange, 4 KiB per pair', ['MPI_Alltoall'], 'MPI_Alltoall', False, ''),
    ('dget', 'one bsp_direct_get (8 B)', ['MPI_Win_lock+MPI_Get+MPI_Win_unlock'], 'MPI_Win_lock+MPI_Get+MPI_Win_unlock', False, ''),
]
hdr = '| row | variant | ' + ' | '.join('p = {:,}'.format(p) for p in P) + ' |'
L = [hdr, '|' + ' --- |' * (2 + len(P))]
for key, name, base, rbase, inv, target in rows:
    first = True
    def line(variant, cells):
        global first
        L.append('| %s | %s | %s |' % (name if first else '', variant, ' | '.join(cells)))
        first = False
    line('Superstep (default sync)', [cell('sparse', key, 'superstep', p) for p in P])
    line('Superstep, `SUPERSTEP_MPI_SPARSE=0`', [cell('dense', key, 'superstep', p) for p in P])
    for b in base:
        bk = b.split(':')
        brow = bk[1] if len(bk) > 1 else key
        line(bk[0] + (' (the empty row\'s)' if len(bk) > 1 else ''), [cell('mpi', brow, bk[0], p) for p in P])
    bk = rbase.split(':')
    brow = bk[1] if len(bk) > 1 else key
    rname = ('ratio: %s time / Superstep time (throughput ratio)' % bk[0]) if inv else ('ratio: Superstep / %s' % bk[0])
    if target: rname += ' — target ' + target
    line(rname, [ratio(get('sparse', key, 'superstep', p), get('mpi', brow, bk[0], p), inv) for p in P])
table = '\n'.join(L)
simlines = []
def mem(kib):
    return '' if not kib else (', %.1f GiB' % (kib / 1048576.0) if kib >= 1048576 else ', %d MiB' % (kib // 1024))
for p in P:
    parts = []
    for var, label in (('sparse', 'Superstep'), ('dense', 'dense'), ('mpi', 'MPI')):
        for rows, secs, rss, status in sims.get((var, p), []):
            parts.append('%s (%s) %d s%s%s' % (label, ', '.join(rows), secs, mem(rss),
                         '' if status == 'ok' else ', ' + ('killed' if 'failed (137)' in status else status)))
    simlines.append('p = {:,}: '.format(p) + '; '.join(parts))
foot = ('Times in microseconds of simulated time per superstep or operation (the slowest rank\'s mean over %s, after one warm-up); '
        '"—": not part of the default run (the total exchange beyond p = 256); "not simulated": not run at that p, as it would cost the simulator more real time or memory than the run affords (the reasons, measured, are under "What it costs to simulate"; run.sh --all-rows tries them); "over N s": the simulation was stopped after N s of real time. '
        'Real time and the simulator\'s peak memory per simulation (the rows it ran): %s.' % (reps, ' — '.join(simlines)))
block = table + '\n\n' + foot + '\n'

# machine parameter files (bspprobe --save format): l = the empty sync;
# g per byte from the rows with data, at their message sizes
prm = []
lastg = None   # (p, {msg_size: g}) of the largest p so far with rows with data
for p in P:
    l = get('sparse', 'empty', 'superstep', p)
    if not l: continue
    gs = {}
    for key, m, h in (('rand4', 8, 32), ('total', 4096, 4096 * (p - 1)), ('hrel', 65536, 1 << 20)):
        t = get('sparse', key, 'superstep', p)
        if t is None: continue
        gs[m] = max((t - l) / h, 1e-15)
    note = ''
    if gs:
        lastg = (p, gs)
    elif lastg:
        # only the empty sync at this p: its l, the g of the largest p below
        gs = lastg[1]
        note = '# l simulated at p = %d; g per byte from p = %d (rows with data not simulated at %d)\n' % (p, lastg[0], p)
    rowsp = ['mpi %d %d %.6g %.6g' % (p, m, gs[m], l) for m in sorted(gs)]
    if rowsp:
        fn = os.path.join(out, 'params-p%d.txt' % p)
        with open(fn, 'w') as f:
            f.write('# bench/scale/run.sh: simulated (SimGrid SMPI, docs/scale.md), engine mpi, p = %d\n' % p)
            f.write('# engine p msg_size g_seconds_per_byte l_seconds\n' + note)
            f.write('\n'.join(rowsp) + '\n')
        prm += ([note.rstrip()] if note else []) + rowsp
if prm:
    with open(os.path.join(out, 'params.txt'), 'w') as f:
        f.write('# bench/scale/run.sh: simulated (SimGrid SMPI, docs/scale.md), engine mpi\n')
        f.write('# engine p msg_size g_seconds_per_byte l_seconds\n')
        f.write('\n'.join(prm) + '\n')
print(block)
if prm:
    print('parameter rows (%s):' % os.path.join(out, 'params.txt'))
    print('\n'.join(prm))
if docs == '1':
    text = open(doc).read()
    b, e = '<!-- bench/scale/run.sh: begin -->', '<!-- bench/scale/run.sh: end -->'
    i, j = text.find(b), text.find(e)
    if i < 0 or j < i:
        sys.exit('run.sh: %s lacks the markers %s / %s' % (doc, b, e))
    text = text[:i + len(b)] + '\n' + block + '\n' + text[j:]
    pb, pe = '<!-- bench/scale/run.sh params: begin -->', '<!-- bench/scale/run.sh params: end -->'
    i, j = text.find(pb), text.find(pe)
    if prm and i >= 0 and j > i:
        text = text[:i + len(pb)] + '\n```\n' + '\n'.join(prm) + '\n```\n' + text[j:]
    open(doc, 'w').write(text)
    print('run.sh: the table is in %s' % doc, file=sys.stderr)
EOF
