#!/bin/sh
# repeat.sh N PASS_REGEX COMMAND... -- runs COMMAND N times (a race shows
# only in some runs); fails at the first run that exits non-zero, prints
# FAIL, or lacks a line matching PASS_REGEX (grep -E), after printing it.
n=$1
pass=$2
shift 2
i=1
while [ "$i" -le "$n" ]; do
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] || printf '%s\n' "$out" | grep -q FAIL \
            || ! printf '%s\n' "$out" | grep -Eq "$pass"; then
        printf '%s\n' "$out"
        echo "repeat.sh: run $i of $n failed (status $rc)"
        exit 1
    fi
    i=$((i + 1))
done
printf '%s\n' "$out"
echo "repeat.sh: $n runs passed"
