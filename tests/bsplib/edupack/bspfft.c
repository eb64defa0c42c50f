#include "bspedupack.h"

/* Parallel FFT in the style of BSPedupack's bspfft: a complex vector x of
   length n = 2^m is distributed cyclically over p = 2^q processors with
   p*p <= n. Each processor transforms its subsequence x(s), x(s+p), ...
   locally (unordered FFT ufft plus twiddling), then one redistribution by
   bsp_put (bspredistr) gives every processor all p contributions of a block
   of frequencies, and local transforms of length p finish the job.
   Complex numbers are stored as pairs of doubles.

   Input (stdin): P n. Processor 0 gathers the result and compares it with
   a direct evaluation of the DFT. */

#define PI 3.14159265358979323846

int P;

void ufft(double *x, int n, int sign){
    /* in-place radix-2 FFT of length n (a power of two), with the
       bit-reversal permutation first */
    int i, j, k, len;
    double tr, ti;
    for (i=1, j=0; i<n; i++){
        int bit= n>>1;
        for (; j&bit; bit>>=1)
            j ^= bit;
        j ^= bit;
        if (i<j){
            tr= x[2*i]; x[2*i]= x[2*j]; x[2*j]= tr;
            ti= x[2*i+1]; x[2*i+1]= x[2*j+1]; x[2*j+1]= ti;
        }
    }
    for (len=2; len<=n; len<<=1){
        double ang= sign*2.0*PI/len;
        for (i=0; i<n; i+=len){
            for (k=0; k<len/2; k++){
                double wr= cos(ang*k), wi= sin(ang*k);
                double *u= &x[2*(i+k)], *v= &x[2*(i+k+len/2)];
                double vr= v[0]*wr - v[1]*wi, vi= v[0]*wi + v[1]*wr;
                v[0]= u[0]-vr; v[1]= u[1]-vi;
                u[0] += vr; u[1] += vi;
            }
        }
    }
} /* end ufft */

void bspredistr(double *x, int n, int p, int s, double *z){
    /* processor t receives frequencies [t*b, (t+1)*b) of every processor
       s, b = n/(p*p), at position s*b of z */
    int t, b= n/(p*p);
    for (t=0; t<p; t++)
        bsp_put(t,&x[2*t*b],z,2*s*b*SZDBL,2*b*SZDBL);
    bsp_sync();
} /* end bspredistr */

void bspfft(double *x, int n, int p, int s, int sign, double *z, double *y){
    /* x: local part (cyclic); on output y holds X(k'+(n/p)r) at y[r*b+kk]
       for the local frequency block k' = s*b+kk, kk < b, r < p */
    int nl= n/p, b= n/(p*p), k, kk, r, q;
    double *col;

    ufft(x,nl,sign);
    for (k=0; k<nl; k++){ /* twiddle: w_n^(sign*s*k) */
        double ang= sign*2.0*PI*s*k/n, wr= cos(ang), wi= sin(ang);
        double re= x[2*k]*wr - x[2*k+1]*wi, im= x[2*k]*wi + x[2*k+1]*wr;
        x[2*k]= re; x[2*k+1]= im;
    }
    bspredistr(x,n,p,s,z);

    col= vecallocd(2*p);
    for (kk=0; kk<b; kk++){
        for (q=0; q<p; q++){
            col[2*q]= z[2*(q*b+kk)];
            col[2*q+1]= z[2*(q*b+kk)+1];
        }
        ufft(col,p,sign);
        for (r=0; r<p; r++){
            y[2*(r*b+kk)]= col[2*r];
            y[2*(r*b+kk)+1]= col[2*r+1];
        }
    }
    vecfreed(col);
} /* end bspfft */

static double xre(int j){ return sin(0.1*j) + (j%3); }
static double xim(int j){ return cos(0.05*j*j); }

void bspfft_test(){
    int p, s, n, nl, b, j, k, r, kk, q, m;
    double *x, *z, *y, *all, err, time0, time1;

    bsp_begin(P);
    p= bsp_nprocs();
    s= bsp_pid();
    if (s==0){
        if (scanf("%d",&n)!=1)
            bsp_abort("bspfft_test: no n");
    }
    bsp_push_reg(&n,SZINT);
    bsp_sync();
    bsp_get(0,&n,0,&n,SZINT);
    bsp_sync();
    bsp_pop_reg(&n);
    for (m=1; m<n; m<<=1) ;
    for (q=1; q<p; q<<=1) ;
    if (m!=n || q!=p || p*p>n)
        bsp_abort("bspfft_test: n=%d and p=%d must be powers of two with p*p <= n",n,p);

    nl= n/p; b= n/(p*p);
    x= vecallocd(2*nl); z= vecallocd(2*nl); y= vecallocd(2*nl);
    for (j=0; j<nl; j++){
        x[2*j]= xre(j*p+s);
        x[2*j+1]= xim(j*p+s);
    }
    bsp_push_reg(z,2*nl*SZDBL);
    all= vecallocd(s==0 ? 2*n : 2);
    bsp_push_reg(all,s==0 ? 2*n*SZDBL : 0);
    bsp_sync();

    time0= bsp_time();
    bspfft(x,n,p,s,-1,z,y);
    time1= bsp_time();

    for (r=0; r<p; r++)
        for (kk=0; kk<b; kk++){
            k= s*b+kk + r*nl;
            bsp_put(0,&y[2*(r*b+kk)],all,2*k*SZDBL,2*SZDBL);
        }
    bsp_sync();
    if (s==0){
        err= 0.0;
        for (k=0; k<n; k++){
            double re= 0.0, im= 0.0;
            for (j=0; j<n; j++){
                double ang= -2.0*PI*(double)((long)j*k%n)/n;
                re += xre(j)*cos(ang) - xim(j)*sin(ang);
                im += xre(j)*sin(ang) + xim(j)*cos(ang);
            }
            err= MAX(err,fabs(re-all[2*k]));
            err= MAX(err,fabs(im-all[2*k+1]));
        }
        printf("bspfft: n=%d p=%d: max error %g: %s (%.6lf s)\n",
               n,p,err,err<1e-8*n ? "OK" : "ERROR",time1-time0);
        fflush(stdout);
    }
    bsp_pop_reg(all);
    bsp_pop_reg(z);
    bsp_sync();
    vecfreed(all); vecfreed(y); vecfreed(z); vecfreed(x);
    bsp_end();

} /* end bspfft_test */

int main(int argc, char **argv){
    bsp_init(bspfft_test, argc, argv);
    printf("How many processors do you want to use?\n"); fflush(stdout);
    if (scanf("%d",&P)!=1) exit(2);
    if (P > bsp_nprocs()){
        printf("Sorry, not enough processors available.\n");
        exit(1);
    }
    bspfft_test();
    exit(0);
} /* end main */
