#include "bspedupack.h"

/* LU decomposition with partial row pivoting in the style of BSPedupack's
   bsplu: the n x n matrix A is distributed over an M x N processor grid by
   the M x N cyclic distribution; processor (s,t) = s + t*M owns the
   elements a(i,j) with i mod M == s and j mod N == t. On output PA = LU,
   with L unit lower triangular and U upper triangular stored in A, and
   the permutation in pi.

   Input (stdin): M N n. The test matrix is a(i,j) = cos(0.3ij + i + 0.7j);
   processor 0 gathers L and U and checks max |PA - LU|. */

int M, N;

static double aval(int i, int j){ return cos(0.3*i*j + i + 0.7*j); }

int nloc(int p, int s, int n){
    /* number of local components of processor s for a vector of length n
       distributed cyclically over p processors */
    return  (n+p-s-1)/p ;
} /* end nloc */

void bsplu(int M, int N, int s, int t, int n, int *pi, double **a){
    /* Superstep numbers per stage k:
       (0) the processors of column k mod N find their local maximum in
           column k and send it to everybody;
       (1) everybody finds the pivot row r; rows k and r are swapped;
       (2) the pivot, row k and column k are broadcast;
       (3) the multipliers are computed and the submatrix updated. */
    int nlr, nlc, k, kr, kc, kr1, kc1, i, j, r, q, il, jl, imax, p, tmp;
    double absmax, pivot, *Max, *Rowk, *Colk, lik;
    int *Imax;

    p= M*N;
    nlr= nloc(M,s,n); /* number of local rows */
    nlc= nloc(N,t,n); /* number of local columns */

    Max= vecallocd(M); Imax= vecalloci(M);
    Rowk= vecallocd(nlc); Colk= vecallocd(nlr);
    bsp_push_reg(Max,M*SZDBL);
    bsp_push_reg(Imax,M*SZINT);
    bsp_push_reg(Rowk,nlc*SZDBL);
    bsp_push_reg(Colk,nlr*SZDBL);
    bsp_push_reg(&pivot,SZDBL);
    if (nlr>0)
        bsp_push_reg(a[0],nlr*nlc*SZDBL);
    else
        bsp_push_reg(NULL,0);
    bsp_sync();

    for (i=0; i<n; i++)
        pi[i]= i;

    for (k=0; k<n; k++){
        kr= nloc(M,s,k); /* first local row with global index >= k */
        kc= nloc(N,t,k);
        kr1= nloc(M,s,k+1);
        kc1= nloc(N,t,k+1);

        /****** Superstep 0 ******/
        if (k%N==t){
            absmax= -1.0; imax= -1;
            for (il=kr; il<nlr; il++){
                if (fabs(a[il][kc])>absmax){
                    absmax= fabs(a[il][kc]);
                    imax= il*M+s;
                }
            }
            for (q=0; q<p; q++){
                bsp_put(q,&absmax,Max,s*SZDBL,SZDBL);
                bsp_put(q,&imax,Imax,s*SZINT,SZINT);
            }
        }
        bsp_sync();

        /****** Superstep 1 ******/
        absmax= -1.0; r= -1;
        for (q=0; q<M; q++){
            if (Imax[q]>=0 && Max[q]>absmax){
                absmax= Max[q];
                r= Imax[q];
            }
        }
        if (absmax==0.0)
            bsp_abort("bsplu at stage %d: matrix is singular\n",k);
        tmp= pi[k]; pi[k]= pi[r]; pi[r]= tmp;
        if (r!=k && nlc>0){
            if (k%M==s) /* send row k to the owner of row r */
                bsp_put(r%M+t*M,a[k/M],a[0],(r/M)*nlc*SZDBL,nlc*SZDBL);
            if (r%M==s) /* send row r to the owner of row k */
                bsp_put(k%M+t*M,a[r/M],a[0],(k/M)*nlc*SZDBL,nlc*SZDBL);
        }
        bsp_sync();

        /****** Superstep 2 ******/
        if (k%M==s && k%N==t){
            for (q=0; q<p; q++)
                bsp_put(q,&a[k/M][k/N],&pivot,0,SZDBL);
        }
        if (k%M==s && nlc-kc1>0){ /* row k, right of the diagonal, to column t */
            for (q=0; q<M; q++)
                bsp_put(q+t*M,&a[k/M][kc1],Rowk,kc1*SZDBL,(nlc-kc1)*SZDBL);
        }
        if (k%N==t && nlr-kr1>0){ /* column k, below the diagonal, to row s */
            for (q=0; q<N; q++){
                for (il=kr1; il<nlr; il++)
                    bsp_put(s+q*M,&a[il][kc],Colk,il*SZDBL,SZDBL);
            }
        }
        bsp_sync();

        /****** Superstep 3 ******/
        for (il=kr1; il<nlr; il++){
            lik= Colk[il]/pivot;
            if (k%N==t)
                a[il][kc]= lik;
            for (jl=kc1; jl<nlc; jl++)
                a[il][jl] -= lik*Rowk[jl];
        }
    }
    (void)i; (void)j;

    if (nlr>0)
        bsp_pop_reg(a[0]);
    else
        bsp_pop_reg(NULL);
    bsp_pop_reg(&pivot);
    bsp_pop_reg(Colk); bsp_pop_reg(Rowk);
    bsp_pop_reg(Imax); bsp_pop_reg(Max);
    vecfreed(Colk); vecfreed(Rowk);
    vecfreei(Imax); vecfreed(Max);

} /* end bsplu */

void bsplu_test(){
    int p, pid, s, t, n, nlr, nlc, i, j, k, il, jl, *pi, dims[3], Ml, Nl;
    double **a, *all, err, lu;

    bsp_begin(M*N);
    p= bsp_nprocs();
    pid= bsp_pid();
    /* M and N were read by processor 0 only (on a distributed-memory BSP
       system the others never ran main's sequential part): processor 0
       broadcasts M, N and n in a local array */
    if (pid==0){
        if (scanf("%d",&n)!=1 || n<1)
            bsp_abort("bsplu_test: bad n");
        dims[0]= M; dims[1]= N; dims[2]= n;
    }
    bsp_push_reg(dims,3*SZINT);
    bsp_sync();
    bsp_get(0,dims,0,dims,3*SZINT);
    bsp_sync();
    bsp_pop_reg(dims);
    Ml= dims[0]; Nl= dims[1]; n= dims[2];
    if (Ml*Nl!=p)
        bsp_abort("bsplu_test: %d x %d grid on %d processors",Ml,Nl,p);

    s= pid%Ml; t= pid/Ml;
    nlr= nloc(Ml,s,n); nlc= nloc(Nl,t,n);
    a= matallocd(nlr,nlc);
    for (il=0; il<nlr; il++)
        for (jl=0; jl<nlc; jl++)
            a[il][jl]= aval(il*Ml+s,jl*Nl+t);
    pi= vecalloci(n);

    bsplu(Ml,Nl,s,t,n,pi,a);

    /* gather L\U at processor 0 and check PA = LU */
    /* every processor needs a local identifier for the gather area; only
       processor 0's has room */
    all= vecallocd(pid==0 ? n*n : 1);
    bsp_push_reg(all,pid==0 ? n*n*SZDBL : 0);
    bsp_sync();
    for (il=0; il<nlr; il++)
        for (jl=0; jl<nlc; jl++)
            bsp_put(0,&a[il][jl],all,((il*Ml+s)*n+jl*Nl+t)*SZDBL,SZDBL);
    bsp_sync();
    if (pid==0){
        err= 0.0;
        for (i=0; i<n; i++)
            for (j=0; j<n; j++){
                lu= 0.0;
                for (k=0; k<=MIN(i,j); k++)
                    lu += (k==i ? 1.0 : all[i*n+k]) * all[k*n+j];
                err= MAX(err,fabs(lu-aval(pi[i],j)));
            }
        printf("bsplu: n=%d on a %d x %d grid: max |PA-LU| = %g: %s\n",
               n,Ml,Nl,err,err<1e-8 ? "OK" : "ERROR");
        fflush(stdout);
    }
    bsp_pop_reg(all);
    bsp_sync();
    vecfreed(all);
    vecfreei(pi);
    matfreed(a);
    bsp_end();

} /* end bsplu_test */

int main(int argc, char **argv){
    bsp_init(bsplu_test, argc, argv);
    printf("Please enter number of processor rows M:\n"); fflush(stdout);
    if (scanf("%d",&M)!=1) exit(2);
    printf("Please enter number of processor columns N:\n"); fflush(stdout);
    if (scanf("%d",&N)!=1) exit(2);
    if (M<1 || N<1 || M*N > bsp_nprocs()){
        printf("Sorry, not enough processors available.\n");
        exit(1);
    }
    bsplu_test();
    exit(0);
} /* end main */
