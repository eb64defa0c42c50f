/*
 * Bootstrapping a matrix computation (the LPF paper's Algorithm 2):
 * the matrix dimensions come in through lpf_exec's args at process 0, the
 * others fetch them with lpf_get; every process checks its local block;
 * errors are broadcast by letting every failing process put its error code
 * to all (write-conflict resolution picks one, no buffer needed); process 0
 * writes the global error code back through args.output.
 *
 *   ./bootstrap_matrix M N [P]     exit status: 0 OK, 1 illegal input
 */
#include <lpf/core.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OK = 0, ILLEGAL_INPUT = 1 };

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    lpf_memslot_t s_lerr, s_gerr, s_mdimm;
    int M, N, mdimm[2] = { 0, 0 };
    int lerr = OK, gerr = OK;

    if (args.input_size != 0) memcpy(mdimm, args.input, args.input_size);

    lpf_resize_memory_register(ctx, 3);
    lpf_resize_message_queue(ctx, 2 * p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);

    lpf_register_local(ctx, &lerr, sizeof lerr, &s_lerr);
    lpf_register_global(ctx, &gerr, sizeof gerr, &s_gerr);
    lpf_register_global(ctx, mdimm, sizeof mdimm, &s_mdimm);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);

    /* everyone without input fetches the dimensions from process 0 */
    if (args.input_size == 0)
        lpf_get(ctx, 0, s_mdimm, 0, s_mdimm, 0, sizeof mdimm, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);

    /* local block: rows distributed cyclically */
    M = (mdimm[0] + (int)(p - s - 1)) / (int)p;
    N = mdimm[1];
    if (p > INT_MAX || M <= 0 || N <= 0) lerr = ILLEGAL_INPUT;

    /* broadcast the error by write-conflict resolution */
    if (lerr != OK)
        for (lpf_pid_t k = 0; k < p; ++k)
            lpf_put(ctx, s_lerr, 0, k, s_gerr, 0, sizeof(int), LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);

    if (gerr == OK)
        printf("process %u: local block %d x %d\n", s, M, N);

    lpf_deregister(ctx, s_lerr);
    lpf_deregister(ctx, s_gerr);
    lpf_deregister(ctx, s_mdimm);
    if (args.output_size == sizeof(int)) memcpy(args.output, &gerr, sizeof gerr);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s M N [P]\n", argv[0]);
        return 2;
    }
    int in[2] = { atoi(argv[1]), atoi(argv[2]) };
    int out = OK;
    lpf_pid_t P = argc > 3 ? (lpf_pid_t)atoi(argv[3]) : LPF_MAX_P;
    lpf_args_t args = LPF_NO_ARGS;
    args.input = in;
    args.input_size = sizeof in;
    args.output = &out;
    args.output_size = sizeof out;
    if (lpf_exec(LPF_ROOT, P, spmd, args) != LPF_SUCCESS) return 3;
    printf("result: %s\n", out == OK ? "OK" : "ILLEGAL_INPUT");
    return out;
}
