#!/bin/sh
# msgcount.sh BSPRUN MSGCOUNT_TEST [P...] -- MPI messages each process sends
# per superstep on the message path (SUPERSTEP_MPI_SHM=0, the engine's own
# count: SUPERSTEP_MPI_STATS=1), for an empty sync and for a ring put (every
# process puts 8 bytes to pid + 1), at P = 2, 4, 8, 16, 32 by default. From
# P = 16 on: at most 2 ceil(log2 P) for the empty sync, one more for the
# ring. Prints every figure; exits 1 if a bound or a value is wrong.
bsprun=$1
prog=$2
shift 2
[ $# -gt 0 ] || set -- 2 4 8 16 32
unset SUPERSTEP_MPI_SPARSE SUPERSTEP_MPI_SPARSE_MIN
export SUPERSTEP_MPI_SHM=0 SUPERSTEP_MPI_STATS=1
status=0
for p in "$@"; do
    lg=0
    while [ $((1 << lg)) -lt "$p" ]; do lg=$((lg + 1)); done
    bound=$((2 * lg))
    for mode in empty ring; do
        out=$("$bsprun" --engine mpi -n "$p" "$prog" "$mode" 2>&1)
        rc=$?
        max=$(printf '%s\n' "$out" | sed -n 's/.*at most \([0-9]*\) in one sync.*/\1/p' | sort -n | tail -1)
        lines=$(printf '%s\n' "$out" | grep -c '^superstep mpi: process')
        kind=$(printf '%s\n' "$out" | sed -n 's/.*(\([a-z-]*\) sync).*/\1/p' | sort -u | tr '\n' ' ')
        want=$bound
        [ "$mode" = ring ] && want=$((bound + 1))
        verdict=ok
        if [ $rc -ne 0 ] || [ "$lines" -ne "$p" ] || [ -z "$max" ] \
                || printf '%s\n' "$out" | grep -q FAIL; then
            verdict="FAILED (status $rc, $lines of $p stats lines)"
            printf '%s\n' "$out" | grep -v '^superstep mpi: process' | head -20
        elif [ "$p" -ge 16 ] && [ "$max" -gt "$want" ]; then
            verdict="FAILED (more than $want)"
        fi
        [ "$verdict" = ok ] || status=1
        echo "p=$p $mode: at most $max messages per process and sync (${kind% }; 2*ceil(log2 p) = $bound) $verdict"
    done
done
exit $status
