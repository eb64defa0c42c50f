// bench_sort: BSP radix sort (RMA paper) and sample sort (examples/sort)
// against sequential and parallel sorts of the same 32-bit keys. The codes
// are timed in rounds (every code once, then again), so that a change in the
// load of the (shared) machine hits all alike. One JSON line per
// (algorithm, p):
//   t_qsort, t_std_sort, t_radix_seq   sequential baselines (median)
//   t_par_baseline   __gnu_parallel::sort with p OpenMP threads (median)
//   t_bsp    median time of the SPMD routine on data already distributed
//            (each process makes its block of keys from the global indices)
//   t_call   the library call from sequential code (start the run, scatter
//            from pid 0, sort, gather)
//   speedup_* = baseline / t_bsp
//
//   bench_sort [-n keys] [-p 1,2,4] [-r reps] [-a radix,radixopt,sample]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifdef SSTEP_HAVE_GNU_PARALLEL
#include <omp.h>
#include <parallel/algorithm>
#endif

#include <bsp.h>

#include "app_util.h"
#include "sort.h"

namespace {

struct Params {
    uint64_t n, algo, reps, P;
};

thread_local Params *bench_params = nullptr;  // pid 0 only
thread_local double bench_result = 0.0, bench_min = 0.0;

const uint64_t SEED = 2024;

void bench_spmd()
{
    Params *pp = bench_params;
    bsp_begin(pp ? (bsp_pid_t)pp->P : 1);
    const unsigned p = bsp_nprocs(), pid = bsp_pid();
    Params par{};
    if (pid == 0) {
        par = *pp;
        for (unsigned q = 1; q < p; q++)
            bsp_send(q, nullptr, &par, sizeof par);
    }
    bsp_sync();
    if (pid != 0)
        bsp_move(&par, sizeof par);
    const size_t n = par.n;
    const size_t nl = n / p + (pid < n % p);
    const size_t start = pid * (n / p) + (pid < n % p ? pid : n % p);
    // the other processes end inside bsp_end(): no destructor may be pending
    {
        std::vector<uint32_t> keys(nl + 1);
        std::vector<double> times;
        for (uint64_t r = 0; r < par.reps; r++) {
            for (size_t i = 0; i < nl; i++)
                keys[i] = sort_key(SEED, 0, start + i);
            bsp_sync();
            double t0 = bsp_time();
            if (par.algo == 2) {
                size_t nout = 0, first = 0;
                uint32_t *out = bsp_sample_sort_spmd(keys.data(), nl, &nout, &first);
                bsp_sync();  // the sample sort ends with a local merge: wait for all
                times.push_back(bsp_time() - t0);
                free(out);
            } else {
                bsp_radix_sort_spmd(keys.data(), nl, par.algo == 1);
                times.push_back(bsp_time() - t0);
            }
        }
        if (pid == 0) {
            bench_result = app_median(times.data(), (int)times.size());
            bench_min = times[0];
        }
    }
    bsp_end();
}

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> v;
    size_t a = 0;
    while (a <= s.size()) {
        size_t b = s.find(',', a);
        if (b == std::string::npos)
            b = s.size();
        if (b > a)
            v.push_back(s.substr(a, b - a));
        a = b + 1;
    }
    return v;
}

}  // namespace

int main(int argc, char **argv)
{
    size_t n = 1u << 24;
    std::vector<unsigned> ps{ 1, 2, 4 };
    std::vector<std::string> algos{ "radix", "radixopt", "sample" };
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string o = argv[i];
        if (o == "-n")
            n = strtoull(argv[i + 1], nullptr, 10);
        else if (o == "-r")
            reps = std::max(1, atoi(argv[i + 1]));
        else if (o == "-p") {
            ps.clear();
            for (auto &s : split(argv[i + 1]))
                ps.push_back((unsigned)std::stoul(s));
        } else if (o == "-a")
            algos = split(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [-n keys] [-p list] [-r reps] [-a radix,radixopt,sample]\n", argv[0]);
            return 2;
        }
    }
    reps = std::min(reps, 64);
    std::vector<uint32_t> in(n), w(n), ref(n), tmp(n);
    sort_random_keys(in.data(), n, SEED, 0);
    ref = in;
    sort_qsort(ref.data(), n);
    std::vector<int> algo_ids;
    for (const std::string &a : algos) {
        const int algo = a == "radix" ? 0 : a == "radixopt" ? 1 : a == "sample" ? 2 : -1;
        if (algo < 0) {
            fprintf(stderr, "bench_sort: unknown algorithm %s\n", a.c_str());
            return 2;
        }
        algo_ids.push_back(algo);
    }
    const size_t np = ps.size(), na = algo_ids.size();
    // rounds: every code in turn, so that a change in the load of the
    // (shared) machine hits all of them alike
    std::vector<double> tq, tstd, trad;
    std::vector<std::vector<double>> tpar(np);
    std::vector<std::vector<std::vector<double>>> tb(np, std::vector<std::vector<double>>(na)),
        tc(np, std::vector<std::vector<double>>(na));
    std::vector<std::vector<int>> ok(np, std::vector<int>(na, 1));
    auto timed = [&](auto f) {
        w = in;
        double t0 = app_now();
        f();
        return app_now() - t0;
    };
    for (int r = 0; r < reps; r++) {
        tq.push_back(timed([&] { sort_qsort(w.data(), n); }));
        tstd.push_back(timed([&] { std::sort(w.begin(), w.end()); }));
        trad.push_back(timed([&] { sort_radix_seq(w.data(), n, tmp.data()); }));
        for (size_t ip = 0; ip < np; ip++) {
            const unsigned P = ps[ip];
#ifdef SSTEP_HAVE_GNU_PARALLEL
            omp_set_num_threads((int)P);
            tpar[ip].push_back(timed([&] {
                __gnu_parallel::sort(w.begin(), w.end(), __gnu_parallel::multiway_mergesort_tag());
            }));
            if (w != ref)
                fprintf(stderr, "bench_sort: __gnu_parallel::sort gave a wrong result\n");
#endif
            for (size_t ia = 0; ia < na; ia++) {
                const int algo = algo_ids[ia];
                Params par{ n, (uint64_t)algo, 1, P };
                bench_params = &par;
                bsp_init(bench_spmd, argc, argv);
                bench_spmd();
                bench_params = nullptr;
                tb[ip][ia].push_back(bench_result);
                int st = 0;
                tc[ip][ia].push_back(timed([&] {
                    st = algo == 2 ? bsp_sample_sort(P, w.data(), n) : bsp_radix_sort(P, w.data(), n, algo == 1);
                }));
                ok[ip][ia] = ok[ip][ia] && st == 0 && w == ref;
            }
        }
    }
    auto med = [](std::vector<double> &v) { return v.empty() ? 0.0 : app_median(v.data(), (int)v.size()); };
    const double t_qsort = med(tq), t_std = med(tstd), t_radix = med(trad), t_radix_min = trad[0];
    for (size_t ip = 0; ip < np; ip++) {
        const unsigned P = ps[ip];
        const double t_par = med(tpar[ip]);
#ifdef SSTEP_HAVE_GNU_PARALLEL
        const char *par_name = "gnu_parallel_multiway_mergesort";
#else
        const char *par_name = "none";
#endif
        for (size_t ia = 0; ia < na; ia++) {
            const double t_bsp = med(tb[ip][ia]), t_bsp_min = tb[ip][ia][0], t_call = med(tc[ip][ia]);
            printf("{\"bench\":\"sort\",\"algo\":\"%s\",\"n\":%zu,\"p\":%u,\"reps\":%d,"
                   "\"t_qsort\":%.6f,\"t_std_sort\":%.6f,\"t_radix_seq\":%.6f,"
                   "\"par_baseline\":\"%s\",\"t_par_baseline\":%.6f,\"t_bsp\":%.6f,\"t_call\":%.6f,"
                   "\"speedup_vs_qsort\":%.3f,\"speedup_vs_std_sort\":%.3f,\"speedup_vs_radix_seq\":%.3f,"
                   "\"speedup_vs_par_baseline\":%.3f,\"speedup_call_vs_radix_seq\":%.3f,"
                   "\"t_radix_seq_min\":%.6f,\"t_bsp_min\":%.6f,\"speedup_min_vs_radix_seq\":%.3f,\"correct\":%s}\n",
                   algos[ia].c_str(), n, P, reps, t_qsort, t_std, t_radix, par_name, t_par, t_bsp, t_call,
                   t_qsort / t_bsp, t_std / t_bsp, t_radix / t_bsp, t_par > 0 ? t_par / t_bsp : 0.0,
                   t_radix / t_call, t_radix_min, t_bsp_min, t_radix_min / t_bsp_min, ok[ip][ia] ? "true" : "false");
            fflush(stdout);
        }
    }
    return 0;
}
