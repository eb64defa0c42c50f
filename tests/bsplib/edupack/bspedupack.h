/* bspedupack.h -- helpers of BSPedupack-style programs (after R. H.
 * Bisseling, "Parallel Scientific Computation", Oxford 2004). These test
 * programs are written the way BSPedupack is: Oxford BSPlib (int sizes and
 * pids), compiled with MCBSP_COMPATIBILITY_MODE, unchanged otherwise. */
#ifndef BSPEDUPACK_H
#define BSPEDUPACK_H

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "bsp.h"

#define SZDBL (sizeof(double))
#define SZINT (sizeof(int))
#define TRUE (1)
#define FALSE (0)
#define MAX(a,b) ((a)>(b) ? (a) : (b))
#define MIN(a,b) ((a)<(b) ? (a) : (b))

double *vecallocd(int n);
int *vecalloci(int n);
double **matallocd(int m, int n);
void vecfreed(double *pd);
void vecfreei(int *pi);
void matfreed(double **ppd);

#endif
