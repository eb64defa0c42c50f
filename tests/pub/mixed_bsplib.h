/* Item 3: the BSPlib side of the mixed program (mixed_bsplib.c). */
#pragma once
#ifdef __cplusplus
extern "C" {
#endif
/* runs P processes with BSPlib; returns 1 + 2 + ... + P when every process
 * saw its ring message, a negative value otherwise */
int mixed_bsplib_run(unsigned P);
#ifdef __cplusplus
}
#endif
