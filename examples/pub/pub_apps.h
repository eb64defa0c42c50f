/*
 * The PUB paper's programs on <pub.h> (Bonorden, Juurlink, von Otte,
 * Rieping, "The Paderborn University BSP (PUB) library", Parallel Computing
 * 29, 2003): parallel binary search on a search butterfly in four forms
 * (Programs 1, 2, 3 and 3 with oblivious synchronisation) and XY-sort
 * (Program 4), each as an SPMD-level routine taking a BSP object, a library
 * call from sequential code, and a sequential reference.
 *
 * Binary search. p = 2^d processes; process q holds block q of a sorted
 * table of N = n*p int keys (n >= 1 per process) and m queries. A query is
 * answered by its lower bound: the number of table keys smaller than it.
 * The first d levels of the search tree are replicated (`gkey`, in reverse
 * order as in the paper: gkey[dim] splits the processes that agree with the
 * caller in the pid bits above dim, at bit dim); a query crosses to the
 * process opposite in dimension dim when it lies on the other side of
 * gkey[dim] ("<=" goes left), from dim = d-1 down to 0, then the process that
 * owns its subtree searches locally and the answer goes back to the process
 * that asked, in one more superstep.
 *
 *   PUB_BS_SEND       Program 1:  one bsp_send per query that crosses,
 *                                 bsp_sync, bsp_nmsgs/bsp_getmsg loop
 *   PUB_BS_HPSEND     Program 2b: the crossing queries packed into `temp`,
 *                                 one bsp_hpsend per level (empty when none
 *                                 crosses), bsp_sync, bsp_getmsg(bsp, 0)
 *   PUB_BS_PARTITION  Program 3:  as 2b in the caller's group halves, then
 *                                 bsp_partition into halves and recursion on
 *                                 the half (own tbsp per level), bsp_done
 *   PUB_BS_OBLSYNC    Program 3 with bsp_oblsync(bsp, 1) (no barrier)
 *
 * XY-sort (Program 4). p = s*s processes in an s x s mesh; processes
 * 0..s-1 (row 0) hold one int key each; at the end process r (r < s) holds
 * the key of rank r (ties broken by position). Three supersteps: bsp_gsend
 * along the row and bsp_lsend down the column, bsp_oblsync(bsp, 2);
 * bsp_lreduce(bspop_addint) of the comparison bits up each column and
 * bsp_push_reg, bsp_oblsync(bsp, 1); bsp_put of each key to its rank,
 * bsp_pop_reg, bsp_sync.
 *
 * All per-process state is local (no globals shared between the threads of
 * the pthread engine); the library calls learn their parameters at pid 0
 * only and send them to the others, so everything runs on the MPI engine.
 */
#ifndef SUPERSTEP_APP_PUB_APPS_H
#define SUPERSTEP_APP_PUB_APPS_H

#include <stddef.h>
#include <pub.h>

#ifdef __cplusplus
extern "C" {
#endif

enum pub_bs_form {
    PUB_BS_SEND = 1,      /* Program 1 */
    PUB_BS_HPSEND = 2,    /* Program 2 (2b) */
    PUB_BS_PARTITION = 3, /* Program 3 (3a) */
    PUB_BS_OBLSYNC = 4    /* Program 3 with bsp_oblsync (3b) */
};

/* "send", "hpsend", "partition", "oblsync" (NULL for an unknown form) */
const char *pub_bs_form_name(int form);
/* the form of a name above or of "1", "2", "3a", "3b"; -1 if unknown */
int pub_bs_form_of(const char *name);

/* ---- sequential references ---------------------------------------------------- */

/* first i in [0, n) with t[i] >= key, or n */
int pub_bs_lower_bound(const int *t, int n, int key);
/* out[i] = lower bound of queries[i] in table[0..N) */
void pub_bs_seq(const int *table, int N, const int *queries, int M, int *out);
/* reproducible inputs: table entry i = 2i + (0 or 1) + base (strictly
 * increasing); queries uniform in [base - 2, base + 2N + 2) (hits, misses,
 * and keys beyond both ends) */
int pub_bs_table_entry(unsigned long long seed, int i, int base);
int pub_bs_query(unsigned long long seed, int N, int i, int base);

/* sorted copy: out[r] = key of rank r (ties by position: a stable sort) */
void pub_xy_seq(const int *keys, int s, int *out);

/* ---- SPMD level ------------------------------------------------------------------ */

/* a query on its way: the key, and where its answer must go */
struct pub_bs_query {
    int key;
    int src; /* pid that asked (in the group of pub_bs_setup's object) */
    int idx; /* its index there */
};

/* Per-process state of the binary search: the table block, the replicated
 * levels of the search tree, and the queries on their way. */
struct pub_bs {
    pbsp bsp;         /* the object the search runs on */
    int form;
    int dims;         /* log2 p */
    int n;            /* keys in this process's block */
    const int *key;   /* the block (sorted) */
    int base;         /* global index of key[0] */
    int *gkey;        /* [dims]: gkey[dim] = the last key left of the split at bit dim */
    int m, cap;       /* queries in flight at this process */
    struct pub_bs_query *query;
    struct pub_bs_query *temp; /* Programs 2-3's packing buffer */
    int tcap;
    int *answer;      /* [m] after pub_bs_route(bs, 1) */
};

/* Collective over bsp's group (p a power of two, every process n >= 1
 * keys): the replicated levels (one bsp_gsend of each block's last key, one
 * superstep), and the queries. Returns 0, or -2 if p is no power of two. */
int pub_bs_setup(struct pub_bs *bs, pbsp bsp, int form, const int *key, int n, const int *query,
                 int m);
/* Route the queries through the butterfly in the chosen form (log2 p
 * supersteps; forms PUB_BS_PARTITION/OBLSYNC in nested groups) and, if
 * `search`, search them locally: bs->answer[i] is the global lower bound of
 * bs->query[i]. Returns the number of queries that ended at this process
 * (bs->m). The paper times the routing. */
int pub_bs_route(struct pub_bs *bs, int search);
/* After pub_bs_route(bs, 1): the answers back to where they were asked
 * (one superstep; one message, maybe empty, to every process).
 * out[i] = lower bound of query[i] of pub_bs_setup. */
void pub_bs_answers(struct pub_bs *bs, int *out);
void pub_bs_free(struct pub_bs *bs);

/* The SPMD routine in one call: every member of bsp's group calls it with its
 * block and its queries; out[i] = global lower bound of query[i]. */
int pub_bsearch_spmd(pbsp bsp, int form, const int *key, int n, const int *query, int m, int *out);

/* Library call from sequential code: P processes (a power of two, P <= what
 * the engine can run), table of N = n*P sorted keys, M = m*P queries; pid 0
 * distributes the blocks, all search, pid 0 gathers out[0..M). Returns 0, or
 * -2 on bad arguments (P not a power of two, n < 1, m < 0, NULL arrays). */
int pub_bsearch(int P, int form, const int *table, int n, const int *queries, int m, int *out);

/* XY-sort on bsp's group (p = s*s): process i < s passes its key in *key;
 * at the end process r < s holds the key of rank r in *key. Returns 0, or -2
 * if p is not a square. The paper's Program 4, with locals for its globals. */
int pub_xy_sort_spmd(pbsp bsp, int *key);

/* Library call: P = s*s processes sort keys[0..s) into out[0..s). 0 or -2. */
int pub_xy_sort(int P, const int *keys, int *out);

/* the integer square root of p if p is a square, else -1 */
int pub_isqrt(int p);

#ifdef __cplusplus
}
#endif

#endif
