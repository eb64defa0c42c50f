/*
 * BSP inner product (Algorithm 2 of the MulticoreBSP for C paper), the
 * reduction and broadcast helpers built on it, and the library call.
 */
#include "inprod.h"

#include <bsp.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- reductions (Algorithm 2 for k values) ------------------------------ */

int ip_reducer_init(ip_reducer *r, size_t k)
{
    r->p = bsp_nprocs();
    r->s = bsp_pid();
    r->k = k;
    r->buf = malloc((k ? k : 1) * r->p * sizeof(double));
    bsp_push_reg(r->buf, r->buf ? k * r->p * sizeof(double) : 0);
    return r->buf ? 0 : -1;
}

void ip_reducer_put(const ip_reducer *r, const double *vals)
{
    const size_t bytes = r->k * sizeof(double);
    for (unsigned q = 0; q < r->p; ++q)
        bsp_put(q, vals, r->buf, (size_t)r->s * bytes, bytes);
}

void ip_reducer_sum(const ip_reducer *r, double *out)
{
    /* the same order on every process: bit-identical results everywhere */
    for (size_t i = 0; i < r->k; ++i) {
        double a = r->buf[i];
        for (unsigned q = 1; q < r->p; ++q) a += r->buf[(size_t)q * r->k + i];
        out[i] = a;
    }
}

void ip_reducer_free(ip_reducer *r)
{
    bsp_pop_reg(r->buf);
    free(r->buf);
    r->buf = NULL;
}

/* ---- the local kernel ----------------------------------------------------- */

/* eight independent partial sums: the loop is not bound by the latency of
 * one floating-point add chain, and the compiler vectorises it */
double ip_seq(const double *x, const double *y, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
        s4 += x[i + 4] * y[i + 4];
        s5 += x[i + 5] * y[i + 5];
        s6 += x[i + 6] * y[i + 6];
        s7 += x[i + 7] * y[i + 7];
    }
    double t = 0;
    for (; i < n; ++i) t += x[i] * y[i];
    return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)) + t;
}

double ip_spmd(const double *x, const double *y, size_t np, const ip_reducer *r)
{
    double alpha = ip_seq(x, y, np);
    ip_reducer_put(r, &alpha);
    bsp_sync();
    double sum;
    ip_reducer_sum(r, &sum);
    return sum;
}

/* ---- broadcast ------------------------------------------------------------- */

void app_broadcast(void *buf, size_t size)
{
    bsp_push_reg(buf, size);
    bsp_sync();
    if (bsp_pid() != 0) bsp_get(0, buf, 0, buf, size);
    bsp_sync();
    bsp_pop_reg(buf);
}

/* ---- library call ---------------------------------------------------------- */

typedef struct ip_call {
    const double *x, *y;
    size_t n;
    unsigned P;
    double result;
} ip_call;

/* The caller's arguments reach the SPMD function through pid 0 (the calling
 * thread, which keeps its state); the other processes get what they need by
 * BSP communication, so this works on every engine. */
static _Thread_local ip_call *ip_current;

static void ip_entry(void)
{
    ip_call *c = ip_current;
    bsp_begin(c ? c->P : bsp_nprocs());
    const unsigned p = bsp_nprocs(), s = bsp_pid();
    if (s != 0) c = NULL;
    uint64_t n = c ? c->n : 0;
    app_broadcast(&n, sizeof n);

    const size_t lo = app_block_start(n, p, s), np = app_block_start(n, p, s + 1) - lo;
    double *x = malloc((np ? np : 1) * sizeof *x), *y = malloc((np ? np : 1) * sizeof *y);
    if (!x || !y) bsp_abort("bsp_ip: out of memory on pid %u\n", s);
    bsp_push_reg(x, np * sizeof *x);
    bsp_push_reg(y, np * sizeof *y);
    ip_reducer r;
    if (ip_reducer_init(&r, 1) != 0) bsp_abort("bsp_ip: out of memory on pid %u\n", s);
    bsp_sync();
    if (c)   /* block distribution from pid 0; its arrays stay unchanged */
        for (unsigned q = 0; q < p; ++q) {
            size_t qlo = app_block_start(n, p, q), qn = app_block_start(n, p, q + 1) - qlo;
            bsp_hpput(q, c->x + qlo, x, 0, qn * sizeof *x);
            bsp_hpput(q, c->y + qlo, y, 0, qn * sizeof *y);
        }
    bsp_sync();
    double alpha = ip_spmd(x, y, np, &r);
    if (c) c->result = alpha;
    bsp_pop_reg(x);
    bsp_pop_reg(y);
    ip_reducer_free(&r);
    free(x);
    free(y);
    bsp_end();
}

double bsp_ip(const double *x, const double *y, size_t n, unsigned P)
{
    ip_call c = { x, y, n, P ? P : bsp_nprocs(), 0.0 };
    ip_call *prev = ip_current;
    ip_current = &c;
    bsp_init(ip_entry, 0, NULL);
    ip_entry();
    ip_current = prev;
    return c.result;
}
