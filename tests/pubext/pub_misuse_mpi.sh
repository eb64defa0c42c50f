#!/bin/sh
# pub_misuse_mpi.sh BSPRUN PROG CASE P REGEX [T] -- one PUB mistake on the
# MPI engine, or with T on the hybrid engine with T threads per rank
# (tests/pub/pub_misuse.c reads the case from PUB_MISUSE_CASE on the other
# ranks, handed to every host by bsprun -x): exit status 6, exactly one
# "superstep:" line matching REGEX, within 20 s.
bsprun=$1 prog=$2 case=$3 P=$4 regex=$5 T=${6:-}
if [ -n "$T" ]; then set -- --engine hybrid -t "$T"; else set -- --engine mpi; fi
start=$(date +%s)
out=$(timeout 60 "$bsprun" "$@" -x "PUB_MISUSE_CASE=$case" -n "$P" "$prog" "$case" "$P" 2>&1)
rc=$?
secs=$(( $(date +%s) - start ))
printf '%s\n' "$out"
lines=$(printf '%s\n' "$out" | grep -c '^superstep:')
if [ "$rc" -ne 6 ]; then echo "FAILED: status $rc, expected 6"; exit 1; fi
if [ "$lines" -ne 1 ]; then echo "FAILED: $lines error lines, expected 1"; exit 1; fi
if ! printf '%s\n' "$out" | grep -E -q "$regex"; then echo "FAILED: no line matches $regex"; exit 1; fi
if [ "$secs" -gt 20 ]; then echo "FAILED: took $secs s"; exit 1; fi
echo "ok $case P=$P ($secs s)"
