// main of the bsp_checks_* programs (the tests compiled with bsp_shim.hpp):
//   bsp_checks_X [--list] [--procs P] [--plain] [--filter TEXT]
// --procs P: the parameterised tests whose process count is P (and the
// plain tests too with --plain). Prints PASS/SKIP/FAILED per test on rank 0,
// FAIL lines wherever a check fails, and "ALL DONE" at the end; the exit
// status is 1 if a check failed on this process.
#include "bsp_shim.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

int main(int argc, char **argv)
{
    unsigned procs = 0;
    bool plain = false, list = false;
    std::string filter;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--procs") && i + 1 < argc) procs = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--plain")) plain = true;
        else if (!std::strcmp(argv[i], "--list")) list = true;
        else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--list] [--procs P] [--plain] [--filter TEXT]\n", argv[0]);
            return 2;
        }
    }
    int failed = 0, ran = 0;
    for (size_t i = 0; i < shim::all_entries().size(); ++i) {
        const shim::TestEntry &e = shim::all_entries()[i];
        if (procs && !(e.procs == procs || (e.procs == 0 && plain))) continue;
        if (!filter.empty() && e.name.find(filter) == std::string::npos) continue;
        if (list) {
            std::printf("%s (P=%u)\n", e.name.c_str(), e.procs);
            continue;
        }
        shim::current_index() = static_cast<int>(i);
        shim::current_name() = e.name;
        const int before = shim::failures();
        std::unique_ptr<shim::TestBase> t = e.make();
        t->TestBody();
        ran++;
        const char *what = t->skipped_ ? "SKIP" : shim::failures() == before ? "PASS" : "FAILED";
        if (shim::failures() != before) failed++;
        std::printf("%s %s\n", what, e.name.c_str());
        std::fflush(stdout);
    }
    if (!list) std::printf("ALL DONE: %d tests, %d failed here\n", ran, failed);
    return failed ? 1 : 0;
}
