// Item 3: libsuperstep exports pub_*, pubmsg_*, pub_op_* and no PUB function
// under a bsp_* name; a program with a BSPlib translation unit
// (mixed_bsplib.c, <bsp.h>) and a PUB one (this file, <pub.h>) runs a BSPlib
// run, then a PUB run, then a BSPlib run again.
#include "pub/mixed_bsplib.h"
#include "pub/pub_test.hpp"

#include <dlfcn.h>

#include <string>
#include <vector>

#ifndef SUPERSTEP_SHARED_LIB
# error "SUPERSTEP_SHARED_LIB must name libsuperstep's shared object"
#endif

using namespace pubtest;

namespace {

// the functions of pub.md §3 by their bsp_ / bspmsg_ / bspop_ suffix
const std::vector<std::string> &pub_functions()
{
    static const std::vector<std::string> f = {
        "pid", "nprocs", "time", "abort", "partition", "done", "dup", "threadsafe_dup", "sync",
        "oblsync", "send", "hpsend", "nmsgs", "getmsg", "findmsg", "push_reg", "pop_reg", "put",
        "hpput", "get", "hpget", "gsend", "lsend", "hpgsend", "hplsend", "greduce", "gallreduce",
        "gscan", "gallscan", "lreduce", "lallreduce", "lscan", "lallscan",
    };
    return f;
}

} // namespace

TEST(PubLink, Item03_Exports)
{
    void *h = dlopen(SUPERSTEP_SHARED_LIB, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(h, nullptr) << dlerror();
    EXPECT_NE(dlsym(h, "pub_exec"), nullptr);
    EXPECT_NE(dlsym(h, "pub_maxprocs"), nullptr);
    for (const std::string &f : pub_functions()) {
        SCOPED_TRACE(f);
        void *pub = dlsym(h, ("pub_" + f).c_str());
        EXPECT_NE(pub, nullptr);
        // a bsp_ symbol may exist (BSPlib's), but never as the PUB function
        void *bsp = dlsym(h, ("bsp_" + f).c_str());
        if (bsp != nullptr) {
            EXPECT_NE(bsp, pub);
        }
    }
    for (const char *m : { "data", "size", "src" }) {
        SCOPED_TRACE(m);
        EXPECT_NE(dlsym(h, (std::string("pubmsg_") + m).c_str()), nullptr);
        EXPECT_EQ(dlsym(h, (std::string("bspmsg_") + m).c_str()), nullptr);
    }
    for (const char *t : { "int", "long", "double" }) {
        for (const char *o : { "add", "mul", "max", "min" }) {
            std::string n = std::string(o) + t;
            SCOPED_TRACE(n);
            EXPECT_NE(dlsym(h, ("pub_op_" + n).c_str()), nullptr);
            EXPECT_EQ(dlsym(h, ("bspop_" + n).c_str()), nullptr);
        }
    }
    // the PUB-only names are not exported as bsp_* at all
    for (const char *f : { "partition", "done", "dup", "threadsafe_dup", "oblsync", "nmsgs",
                           "getmsg", "findmsg", "gsend", "lsend", "greduce", "gallreduce",
                           "gscan", "gallscan", "lreduce", "lallreduce", "lscan", "lallscan" }) {
        EXPECT_EQ(dlsym(h, (std::string("bsp_") + f).c_str()), nullptr) << f;
    }
    dlclose(h);
}

TEST(PubLink, Item03_BsplibThenPubRun)
{
    for (unsigned P : { 1u, 2u, 4u }) {
        SCOPED_TRACE(P);
        EXPECT_EQ(mixed_bsplib_run(P), (int)(P * (P + 1) / 2));
        std::vector<int> got(P, -1);
        run((int)P, [&](pbsp bsp) {
            int p = bsp_nprocs(bsp), s = bsp_pid(bsp);
            bsp_send(bsp, (s + 1) % p, &s, sizeof s);
            bsp_sync(bsp);
            if (bsp_nmsgs(bsp) == 1) got[s] = msg_val<int>(bsp_getmsg(bsp, 0));
        });
        for (int s = 0; s < (int)P; ++s) EXPECT_EQ(got[s], (s + (int)P - 1) % (int)P);
        EXPECT_EQ(mixed_bsplib_run(P), (int)(P * (P + 1) / 2));
    }
}
