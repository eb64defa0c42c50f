/*
 * lpf_probe under a parameter file given by SUPERSTEP_PARAMS (tests/probe,
 * params_file.cmake): every process of an lpf_exec reads g and l at several
 * p and message sizes; each must be finite and > 0. Prints "probe values
 * ok" from process 0 and exits 0, else names the bad value and exits 1.
 */
#include <lpf/core.h>

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_int bad;

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t P, lpf_args_t args)
{
    (void)args;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    if (lpf_probe(ctx, &m) != LPF_SUCCESS || !m.g || !m.l) {
        fprintf(stderr, "probe_values: process %u: lpf_probe failed\n", s);
        atomic_fetch_add(&bad, 1);
        return;
    }
    const lpf_pid_t ps[] = { 1, 2, 3, P, 64, 100000 };
    const size_t ms[] = { 0, 1, 7, 8, 1024, (size_t)1 << 20, (size_t)1 << 40, (size_t)-1 };
    for (size_t i = 0; i < sizeof ps / sizeof *ps; ++i)
        for (size_t j = 0; j < sizeof ms / sizeof *ms; ++j) {
            double g = m.g(ps[i], ms[j], LPF_SYNC_DEFAULT), l = m.l(ps[i], ms[j], LPF_SYNC_DEFAULT);
            if (!isfinite(g) || !(g > 0) || !isfinite(l) || !(l > 0)) {
                fprintf(stderr, "probe_values: process %u: g(%u, %zu) = %g, l = %g\n", s, ps[i],
                        ms[j], g, l);
                atomic_fetch_add(&bad, 1);
                return;
            }
        }
}

int main(int argc, char **argv)
{
    lpf_pid_t P = argc > 1 ? (lpf_pid_t)atoi(argv[1]) : 2;
    if (lpf_exec(LPF_ROOT, P, spmd, LPF_NO_ARGS) != LPF_SUCCESS || atomic_load(&bad)) return 1;
    printf("probe values ok\n");
    return 0;
}
