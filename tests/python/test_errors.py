"""Fatal library errors (checked mode) as superstep.BSPError on threads, and
ctx.put(copy=True). Checked mode is switched on for a whole program
(SUPERSTEP_CHECK=1), so these run small scripts in a subprocess."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import superstep


def run_script(body, check=True, timeout=120):
    env = dict(os.environ)
    env.pop("SUPERSTEP_ENGINE", None)
    env["LPF_MAX_PROCS"] = "4"
    env["SUPERSTEP_SYNC_TIMEOUT"] = "60"
    if check:
        env["SUPERSTEP_CHECK"] = "1"
    src = "import numpy as np, superstep\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_changed_put_source_is_a_bsp_error_in_every_process():
    r = run_script("""
        seen = {}
        def spmd(ctx):
            dst = np.zeros(4)
            try:
                with ctx.register(dst) as slot:
                    src = np.arange(4.0)
                    ctx.put(src, (ctx.pid + 1) % ctx.nprocs, slot)
                    if ctx.pid == 1:
                        src[2] = 99.0           # before the sync: reported
                    ctx.sync()
            except superstep.BSPError as e:
                seen[ctx.pid] = e.pid
                raise
        try:
            superstep.run(spmd, p=2)
        except superstep.BSPError as e:
            print("CALLER", e.pid, e.primitive, "|", e, flush=True)
        print("SEEN", sorted(seen.items()), flush=True)
        # the next run works
        print("NEXT", superstep.run(lambda ctx: ctx.allreduce(1), p=2), flush=True)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "CALLER 1 ctx.put | ctx.put (process 1 of 2): checked mode: the source of a " \
           "ctx.put (float64 array of shape (4,), 4 elements) to elements [0, 4) of the " \
           "slot at process 0" in out, out
    assert "copy=True" in out and "0x" not in out.split("CALLER")[1].split("\n")[0]
    assert "SEEN [(0, 1), (1, 1)]" in out        # both processes raised it
    assert "NEXT 2" in out
    # caught by the caller: nothing printed by the package
    assert "Traceback" not in r.stderr, r.stderr
    assert "superstep: lpf_put" not in r.stderr   # no C line, no status 6


def test_copy_true_sends_the_values_of_the_call():
    r = run_script("""
        def spmd(ctx):
            dst = np.zeros(4)
            with ctx.register(dst) as slot:
                src = np.arange(4.0)
                ctx.put(src, (ctx.pid + 1) % ctx.nprocs, slot, copy=True)
                src[:] = -1.0                   # allowed: the put sent a copy
                ctx.sync()
            return dst.tolist()
        print("RESULT", superstep.run(spmd, p=2), flush=True)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RESULT [0.0, 1.0, 2.0, 3.0]" in r.stdout


def test_read_write_conflict_in_python_terms():
    r = run_script("""
        def spmd(ctx):
            dst = np.arange(4.0)
            with ctx.register(dst) as slot:
                # the source is the registered array that the other process writes
                ctx.put(dst[0:2], (ctx.pid + 1) % ctx.nprocs, slot, offset=0)
                ctx.sync()
        try:
            superstep.run(spmd, p=2)
        except superstep.BSPError as e:
            print("CALLER", e, flush=True)
    """)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "read-write conflict" in r.stdout
    assert "elements [0, 2) of the float64 array of shape (4,), registered by " \
           "ctx.register, are the source of ctx.put by process" in r.stdout, r.stdout
    assert "(elements [0, 2) of the slot that is here the float64 array of shape (4,), " \
           "registered by ctx.register)" in r.stdout, r.stdout
    assert "global slot" not in r.stdout.split("CALLER")[1]


def test_without_checked_mode_zero_copy_put_reads_at_the_sync():
    # documented behaviour: ctx.put does not copy, the data leave at the sync
    def spmd(ctx):
        dst = np.zeros(2)
        with ctx.register(dst) as slot:
            src = np.array([1.0, 2.0])
            ctx.put(src, (ctx.pid + 1) % ctx.nprocs, slot)
            src[0] = 5.0
            ctx.sync()
        return dst.tolist()
    assert superstep.run(spmd, p=2) == [5.0, 2.0]
