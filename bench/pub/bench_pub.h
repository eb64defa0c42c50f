/* bench_pub's <lpf/collectives.h> baseline (bench_pub_lpf.c: its own
 * translation unit, the LPF core next to <pub.h>). */
#ifndef SUPERSTEP_BENCH_PUB_H
#define SUPERSTEP_BENCH_PUB_H

/* seconds per iteration of lpf_broadcast (pid 0 to pids 0..P/2-1, `bytes`)
 * + lpf_combine (sum of bytes/8 doubles over the same members, to the last),
 * `iters` iterations in one lpf_exec of P processes (pid 0's clock) */
double bench_pub_lpf_coll(int P, int bytes, int iters);

#endif
