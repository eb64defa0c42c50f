// An LPF program in C++: lpf_exec, a put ring and an allreduce of the
// collectives (LPF's "HL" layer).
#include <lpf/core.h>
#include <lpf/collectives.h>
#include <cstdio>

static void reduce_sum(size_t n, const void *array, void *value)
{
    const unsigned *a = static_cast<const unsigned *>(array);
    unsigned *v = static_cast<unsigned *>(value);
    for (size_t i = 0; i < n; ++i) *v += a[i];
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    unsigned mine = s, left = 0, sum = s;
    lpf_memslot_t a, b, c;
    lpf_coll_t coll;
    lpf_resize_memory_register(ctx, 4);
    lpf_resize_message_queue(ctx, 4 * p);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_register_local(ctx, &mine, sizeof mine, &a);
    lpf_register_global(ctx, &left, sizeof left, &b);
    lpf_register_global(ctx, &sum, sizeof sum, &c);
    lpf_collectives_init(ctx, s, p, 1, sizeof(unsigned), sizeof(unsigned), &coll);
    lpf_put(ctx, a, 0, (s + 1) % p, b, 0, sizeof mine, LPF_MSG_DEFAULT);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_allreduce(coll, &sum, c, sizeof sum, reduce_sum);
    lpf_sync(ctx, LPF_SYNC_DEFAULT);
    lpf_collectives_destroy(coll);
    bool ok = left == (s + p - 1) % p && sum == p * (p - 1) / 2;
    if (s == 0) *static_cast<int *>(args.output) = ok;
}

int main()
{
    int ok = 0;
    lpf_args_t args = LPF_NO_ARGS;
    args.output = &ok;
    args.output_size = sizeof ok;
    lpf_machine_t m = LPF_INVALID_MACHINE;
    lpf_probe(LPF_ROOT, &m);
    if (lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args) != LPF_SUCCESS || !ok) {
        std::printf("x: wrong\n");
        return 1;
    }
    std::printf("x: ok on %u processes\n", m.p);
    return 0;
}
