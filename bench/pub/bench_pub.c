/*
 * bench_pub: the PUB extensions (<pub.h>) on Superstep; one JSON line per
 * configuration. Every figure is the median over -r runs of a loop of -k
 * supersteps (pid 0's clock; every loop starts and ends with a root
 * bsp_sync, so pid 0's time covers every process's).
 *
 *   bench_pub oblsync [-p 2,4,8] [-k 2000] [-r 7]
 *       a superstep of one message per process (ring) closed by
 *       bsp_oblsync(bsp, 1) vs the same closed by bsp_sync: us per superstep,
 *       ratio = oblsync / sync (target <= 0.5)
 *   bench_pub group [-p 2,8,16] [-k 2000] [-r 7]
 *       an empty sync of a half after bsp_partition (both halves syncing
 *       their own groups) vs an empty sync of all: ratio = group / all
 *   bench_pub bsearch [-p 2] [-n keys/proc] [-lo 10] [-hi 20] [-r 5] [-f forms]
 *       the binary search's four forms for m = 2^lo .. 2^hi queries per
 *       process: routing time (the paper's Figs 2-4: us per query per
 *       process, T/m), and routing + local search + answers back; each
 *       run does up to 16 searches (fewer for large m) and keeps the median
 *   bench_pub coll [-p 4] [-sizes 8,1024,65536,1048576] [-k 200] [-r 7]
 *       a broadcast from pid 0 to the first half plus a sum of doubles over
 *       the first half (to its last member), in one superstep: bsp_gsend +
 *       bsp_greduce closed by bsp_sync and by bsp_oblsync, vs the same with
 *       bsp_put + bsp_sync, vs <lpf/collectives.h> (lpf_broadcast +
 *       lpf_combine on a strided subset; syncs the whole context)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pub.h>

#include "app_util.h"
#include "bench_pub.h"
#include "pub_apps.h"

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        bsp_abort("bench_pub: out of memory (%zu bytes)\n", bytes);
    return p;
}

/* parameters: pid 0 has them (arg), the others get them by a broadcast */
struct job {
    int mode, variant, k, n, m, size, form;
    double t; /* result at pid 0: seconds of the timed loop */
};

static struct job share_job(pbsp bsp, struct job *arg)
{
    struct job j;
    if (bsp_pid(bsp) == 0)
        bsp_gsend(bsp, 0, bsp_nprocs(bsp) - 1, arg, sizeof *arg);
    bsp_sync(bsp);
    memcpy(&j, bspmsg_data(bsp_findmsg(bsp, 0, 0)), sizeof j);
    return j;
}

/* ---- (i) oblsync vs sync -------------------------------------------------------- */

static void spmd_ring(pbsp bsp, void *arg)
{
    struct job j = share_job(bsp, arg);
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    int sum = 0;
    bsp_sync(bsp);
    const double t0 = bsp_time();
    for (int i = 0; i < j.k; i++) {
        bsp_send(bsp, (s + 1) % p, &i, sizeof i);
        if (j.variant)
            bsp_oblsync(bsp, 1);
        else
            bsp_sync(bsp);
        sum += *(int *)bspmsg_data(bsp_getmsg(bsp, 0));
    }
    bsp_sync(bsp);
    if (s == 0)
        ((struct job *)arg)->t = bsp_time() - t0;
    if (sum != j.k * (j.k - 1) / 2)
        bsp_abort("bench_pub oblsync: wrong messages\n");
}

/* ---- (ii) group sync vs sync of all ---------------------------------------------- */

static void spmd_group(pbsp bsp, void *arg)
{
    struct job j = share_job(bsp, arg);
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
    tbsp sub;
    const int part[2] = { p / 2 > 0 ? p / 2 : 1, p };
    bsp_sync(bsp);
    const double t0 = bsp_time();
    if (j.variant) {
        bsp_partition(bsp, &sub, p > 1 ? 2 : 1, p > 1 ? part : part + 1);
        for (int i = 0; i < j.k; i++)
            bsp_sync(&sub);
        bsp_done(&sub);
    } else {
        for (int i = 0; i < j.k; i++)
            bsp_sync(bsp);
    }
    bsp_sync(bsp);
    if (s == 0)
        ((struct job *)arg)->t = bsp_time() - t0;
}

/* ---- (iii) binary search --------------------------------------------------------- */

#define BS_SEED 77ull

struct bs_result {
    double route, total;
};

static void spmd_bsearch(pbsp bsp, void *arg)
{
    struct job j = share_job(bsp, arg);
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp), N = j.n * p;
    int *key = xmalloc((size_t)j.n * sizeof *key), *q = xmalloc((size_t)j.m * sizeof *q);
    int *out = xmalloc((size_t)j.m * sizeof *out);
    for (int i = 0; i < j.n; i++)
        key[i] = pub_bs_table_entry(BS_SEED, s * j.n + i, 0);
    for (int i = 0; i < j.m; i++)
        q[i] = pub_bs_query(BS_SEED, N, s * j.m + i, 0);
    /* j.k searches of the same queries; pid 0 keeps the median */
    double *t = xmalloc((size_t)j.k * sizeof *t);
    for (int it = 0; it < j.k; it++) {
        struct pub_bs bs;
        if (pub_bs_setup(&bs, bsp, j.form, key, j.n, q, j.m) != 0)
            bsp_abort("bench_pub bsearch: p = %d is no power of two\n", p);
        bsp_sync(bsp);
        const double t0 = bsp_time();
        pub_bs_route(&bs, j.variant); /* variant 1: with the local search */
        if (j.variant)
            pub_bs_answers(&bs, out);
        bsp_sync(bsp);
        t[it] = bsp_time() - t0;
        pub_bs_free(&bs);
    }
    if (s == 0)
        ((struct job *)arg)->t = app_median(t, j.k);
    free(t);
    free(out);
    free(q);
    free(key);
}

/* ---- (iv) broadcast + reduction on a subset --------------------------------------- */

static void spmd_coll(pbsp bsp, void *arg)
{
    struct job j = share_job(bsp, arg);
    const int p = bsp_nprocs(bsp), s = bsp_pid(bsp), h = p / 2 > 0 ? p / 2 : 1, last = h - 1;
    const int count = j.size / (int)sizeof(double) > 0 ? j.size / (int)sizeof(double) : 1;
    char *bbuf = xmalloc((size_t)j.size), *bdst = xmalloc((size_t)j.size);
    double *x = xmalloc((size_t)count * sizeof *x), *r = xmalloc((size_t)count * sizeof *r);
    double *area = xmalloc((size_t)h * count * sizeof *area); /* puts: contributions at `last` */
    memset(bbuf, s + 1, (size_t)j.size);
    for (int i = 0; i < count; i++)
        x[i] = s + 0.5 * i;
    const int member = s <= last;
    if (j.variant == 2) {
        bsp_push_reg(bsp, bdst, (size_t)j.size);
        bsp_push_reg(bsp, area, (size_t)h * count * sizeof *area);
    }
    bsp_sync(bsp);
    const double t0 = bsp_time();
    for (int it = 0; it < j.k; it++) {
        if (j.variant <= 1) { /* gsend + greduce; 0: bsp_sync, 1: bsp_oblsync */
            if (s == 0)
                bsp_gsend(bsp, 0, last, bbuf, (size_t)j.size);
            if (member)
                bsp_greduce(bsp, 0, last, x, r, count, bspop_adddouble, NULL);
            if (j.variant == 1)
                bsp_oblsync(bsp, member ? 2 : 0);
            else
                bsp_sync(bsp);
            if (member && bspmsg_size(bsp_getmsg(bsp, 0)) != (size_t)j.size)
                bsp_abort("bench_pub coll: wrong broadcast\n");
        } else { /* puts + bsp_sync, the fold at the last member */
            if (s == 0)
                for (int q = 0; q <= last; q++)
                    bsp_put(bsp, q, bbuf, bdst, 0, (size_t)j.size);
            if (member)
                bsp_put(bsp, last, x, area, (size_t)s * count * sizeof *x, (size_t)count * sizeof *x);
            bsp_sync(bsp);
            if (s == last) {
                memcpy(r, area, (size_t)count * sizeof *r);
                for (int k = 1; k < h; k++)
                    for (int i = 0; i < count; i++)
                        r[i] += area[(size_t)k * count + i];
            }
        }
        if (s == last && r[count - 1] != (double)h * (h - 1) / 2 + 0.5 * (count - 1) * h)
            bsp_abort("bench_pub coll: wrong sum %g\n", r[count - 1]);
    }
    bsp_sync(bsp);
    if (s == 0)
        ((struct job *)arg)->t = bsp_time() - t0;
    if (j.variant == 2) {
        bsp_pop_reg(bsp, area);
        bsp_pop_reg(bsp, bdst);
        bsp_sync(bsp);
    }
    free(area);
    free(r);
    free(x);
    free(bdst);
    free(bbuf);
}

/* ---- driver ---------------------------------------------------------------------------- */

static int parse_list(const char *s, int *v, int max)
{
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t && n < max; t = strtok(NULL, ","))
        v[n++] = atoi(t);
    return n;
}

static double run(int P, pub_spmd_t f, struct job *j)
{
    j->t = -1;
    pub_exec(P, f, j);
    return j->t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s oblsync|group|bsearch|coll [options]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int ps[16], np = 0, k = 2000, reps = 7, n = 1 << 16, lo = 10, hi = 20, sizes[16], ns = 0;
    int forms[4] = { PUB_BS_SEND, PUB_BS_HPSEND, PUB_BS_PARTITION, PUB_BS_OBLSYNC }, nf = 4;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-p"))
            np = parse_list(argv[i + 1], ps, 16);
        else if (!strcmp(argv[i], "-k"))
            k = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-lo"))
            lo = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-hi"))
            hi = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-sizes"))
            ns = parse_list(argv[i + 1], sizes, 16);
        else if (!strcmp(argv[i], "-f")) {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", argv[i + 1]);
            nf = 0;
            for (char *t = strtok(buf, ","); t && nf < 4; t = strtok(NULL, ","))
                if (pub_bs_form_of(t) > 0)
                    forms[nf++] = pub_bs_form_of(t);
        } else {
            fprintf(stderr, "bench_pub: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (reps < 1)
        reps = 1;
    if (reps > 64)
        reps = 64;
    double a[64], b[64], c[64], d[64];

    if (!strcmp(mode, "oblsync") || !strcmp(mode, "group")) {
        const int obl = !strcmp(mode, "oblsync");
        if (!np) {
            if (obl) {
                ps[0] = 2; ps[1] = 4; ps[2] = 8; np = 3;
            } else {
                ps[0] = 2; ps[1] = 8; ps[2] = 16; np = 3;
            }
        }
        for (int ip = 0; ip < np; ip++) {
            for (int r = 0; r < reps; r++) { /* alternate, so that load changes hit both */
                struct job j = { 0, 0, k, 0, 0, 0, 0, 0 };
                a[r] = run(ps[ip], obl ? spmd_ring : spmd_group, &j) / k;
                j.variant = 1;
                b[r] = run(ps[ip], obl ? spmd_ring : spmd_group, &j) / k;
                c[r] = b[r] / a[r];
            }
            const double ta = app_median(a, reps), tb = app_median(b, reps), ratio = app_median(c, reps);
            const double rmin = c[0], rmax = c[reps - 1];
            if (obl)
                printf("{\"bench\":\"pub_oblsync\",\"p\":%d,\"supersteps\":%d,\"reps\":%d,\"us_sync\":%.3f,"
                       "\"us_oblsync\":%.3f,\"ratio\":%.3f,\"ratio_min\":%.3f,\"ratio_max\":%.3f}\n",
                       ps[ip], k, reps, ta * 1e6, tb * 1e6, ratio, rmin, rmax);
            else
                printf("{\"bench\":\"pub_group_sync\",\"p\":%d,\"group\":%d,\"syncs\":%d,\"reps\":%d,"
                       "\"us_all\":%.3f,\"us_group\":%.3f,\"ratio\":%.3f,\"ratio_min\":%.3f,\"ratio_max\":%.3f}\n",
                       ps[ip], ps[ip] > 1 ? ps[ip] / 2 : 1, k, reps, ta * 1e6, tb * 1e6, ratio, rmin, rmax);
            fflush(stdout);
        }
    } else if (!strcmp(mode, "bsearch")) {
        if (!np) {
            ps[0] = 2;
            np = 1;
        }
        for (int ip = 0; ip < np; ip++)
            for (int lg = lo; lg <= hi; lg++) {
                const int m = 1 << lg;
                static double tr[4][64], tt[4][64];
                for (int r = 0; r < reps; r++)
                    for (int f = 0; f < nf; f++) {
                        const int iters = m >= (1 << 16) ? 1 : (1 << 16) / m > 16 ? 16 : (1 << 16) / m;
                        struct job j = { 0, 0, iters, n, m, 0, forms[f], 0 };
                        tr[f][r] = run(ps[ip], spmd_bsearch, &j);
                        j.variant = 1;
                        tt[f][r] = run(ps[ip], spmd_bsearch, &j);
                    }
                for (int f = 0; f < nf; f++) {
                    const double rt = app_median(tr[f], reps), rmin = tr[f][0], rmax = tr[f][reps - 1];
                    const double tot = app_median(tt[f], reps);
                    printf("{\"bench\":\"pub_bsearch\",\"form\":\"%s\",\"p\":%d,\"n\":%d,\"m\":%d,\"reps\":%d,"
                           "\"t_route\":%.6f,\"us_per_query\":%.5f,\"us_per_query_min\":%.5f,"
                           "\"us_per_query_max\":%.5f,\"t_total\":%.6f,\"us_per_query_total\":%.5f}\n",
                           pub_bs_form_name(forms[f]), ps[ip], n, m, reps, rt, rt / m * 1e6, rmin / m * 1e6,
                           rmax / m * 1e6, tot, tot / m * 1e6);
                }
                fflush(stdout);
            }
    } else if (!strcmp(mode, "coll")) {
        if (!np) {
            ps[0] = 4;
            np = 1;
        }
        if (!ns) {
            sizes[0] = 8; sizes[1] = 1024; sizes[2] = 65536; sizes[3] = 1048576; ns = 4;
        }
        if (k == 2000)
            k = 200;
        for (int ip = 0; ip < np; ip++)
            for (int is = 0; is < ns; is++) {
                int kk = sizes[is] >= 65536 ? (k / 10 > 0 ? k / 10 : 1) : k;
                for (int r = 0; r < reps; r++) {
                    struct job j = { 0, 0, kk, 0, 0, sizes[is], 0, 0 };
                    a[r] = run(ps[ip], spmd_coll, &j) / kk;
                    j.variant = 1;
                    b[r] = run(ps[ip], spmd_coll, &j) / kk;
                    j.variant = 2;
                    c[r] = run(ps[ip], spmd_coll, &j) / kk;
                    d[r] = bench_pub_lpf_coll(ps[ip], sizes[is], kk);
                }
                const double ta = app_median(a, reps), tb = app_median(b, reps);
                const double tc = app_median(c, reps), td = app_median(d, reps);
                printf("{\"bench\":\"pub_coll\",\"p\":%d,\"members\":%d,\"bytes\":%d,\"iters\":%d,\"reps\":%d,"
                       "\"us_pub_sync\":%.3f,\"us_pub_oblsync\":%.3f,\"us_puts_sync\":%.3f,\"us_lpf_coll\":%.3f,"
                       "\"us_pub_sync_min\":%.3f,\"us_pub_sync_max\":%.3f,\"us_lpf_coll_min\":%.3f,"
                       "\"us_lpf_coll_max\":%.3f}\n",
                       ps[ip], ps[ip] / 2 > 0 ? ps[ip] / 2 : 1, sizes[is], kk, reps, ta * 1e6, tb * 1e6,
                       tc * 1e6, td * 1e6, a[0] * 1e6, a[reps - 1] * 1e6, d[0] * 1e6, d[reps - 1] * 1e6);
                fflush(stdout);
            }
    } else {
        fprintf(stderr, "bench_pub: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
