# Sourced by the test scripts that start a job and must leave nothing
# behind (tests/robust/term.sh, tests/mpi/signals.sh).
#
# job_pids_of NAME MARKER: the job's processes — those whose command line
# holds MARKER (bsprun, the launcher, the ranks) or whose environment has
# NAME=MARKER (everything bsprun started) — without the calling shell.
job_pids_of() {
  {
    pgrep -f -- "$2"
    grep -l -s -a -F -e "$1=$2" /proc/[0-9]*/environ 2>/dev/null |
      sed -n 's,^/proc/\([0-9]*\)/environ$,\1,p'
  } | sort -un | grep -v -x -e "$$" -e "$BASHPID"
}
