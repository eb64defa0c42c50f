/*
 * superstep_lpf_debug.o: what `-llpf_debug` links into a program (lpfcc,
 * lpfcxx, the linker script liblpf_debug.so, target_link_lpf(... DEBUG)).
 *
 * LPF's debug layer checks every call; Superstep's checked mode does that
 * (docs/checked.md). This definition overrides the library's weak default
 * of 0 (src/core/checked.c): the program runs in checked mode unless
 * SUPERSTEP_CHECK says otherwise (SUPERSTEP_CHECK=0 turns it off).
 */
__attribute__((visibility("default"))) const int SUPERSTEP_CHECK_DEFAULT = 1;
