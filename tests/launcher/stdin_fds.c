/*
 * stdin_fds [ROUNDS]: every process exchanges data with every other one for
 * ROUNDS supersteps (default 20; across hosts, or with Open MPI's TCP
 * transport, MPI opens its sockets then), then checks that none of its
 * descriptors 0, 1 and 2 is a socket, and process 0 reads its standard
 * input: "stdin: data '<first line>'", "stdin: EOF" or "stdin: closed".
 * Exit status 1 where a descriptor was a socket.
 */
#include <bsp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int rounds = 20, bad;

static void spmd(void)
{
    bsp_begin(bsp_nprocs());
    unsigned p = bsp_nprocs(), s = bsp_pid();
    long *box = calloc(p, sizeof *box);
    bsp_push_reg(box, (bsp_size_t)(p * sizeof *box));
    bsp_sync();
    for (int r = 0; r < rounds; ++r) {
        long v = (long)s * 1000 + r;
        for (unsigned k = 0; k < p; ++k) bsp_put(k, &v, box, (bsp_size_t)(s * sizeof v), sizeof v);
        bsp_sync();
        for (unsigned k = 0; k < p; ++k)
            if (box[k] != (long)k * 1000 + r) {
                fprintf(stderr, "stdin_fds: process %u: wrong value from %u\n", s, k);
                bad = 1;
            }
    }
    for (int fd = 0; fd <= 2; ++fd) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) {
            fprintf(stderr, "stdin_fds: process %u: descriptor %d is a socket\n", s, fd);
            bad = 1;
        }
    }
    if (s == 0) {
        char buf[256];
        ssize_t n = read(0, buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = '\0';
            buf[strcspn(buf, "\n")] = '\0';
            printf("stdin: data '%s'\n", buf);
        } else if (n == 0) {
            printf("stdin: EOF\n");
        } else {
            printf("stdin: closed (%s)\n", strerror(errno));
        }
        fflush(stdout);
    }
    int b = bad;
    bsp_push_reg(&b, sizeof b);
    bsp_sync();
    if (b && s != 0) bsp_put(0, &b, &b, 0, sizeof b);
    bsp_sync();
    if (s == 0) bad = b;
    bsp_pop_reg(&b);
    bsp_pop_reg(box);
    bsp_end();
    free(box);
}

int main(int argc, char **argv)
{
    if (argc > 1) rounds = atoi(argv[1]);
    bsp_init(&spmd, argc, argv);
    spmd();
    return bad ? 1 : 0;
}
