#include "bspedupack.h"

/* Sparse matrix-vector multiplication u = A v in the style of BSPedupack's
   bspmv: fanout of v by bsp_get, local multiplication in incremental
   compressed row storage (ICRS), fanin of the partial sums by bsp_send with
   the destination index as tag, summation by bsp_qsize/bsp_get_tag/bsp_move.

   Input (stdin): P n. The test matrix is generated: a(i,j) != 0 if
   (31i+17j) mod 7 == 0 or i == j. Nonzero (i,j) belongs to processor
   (i+2j) mod p; v_j to j mod p (cyclic); u_i to (3i+1) mod p. */

int P;

void bspmv(int p, int s, int n, int nz, int nrows, int ncols,
           double *a, int *inc,
           int *srcprocv, int *srcindv, int *destprocu, int *destindu,
           int nv, int nu, double *v, double *u){

    /* This function multiplies a sparse matrix A with a
       dense vector v, giving a dense vector u=Av.
       A is n by n, and u,v are vectors of length n.
       A, u, and v are distributed arbitrarily on input.
       They are all accessed using local indices, but the local
       matrix indices may differ from the local vector indices.
       The local matrix nonzeros are stored in an incremental
       compressed row storage (ICRS) data structure defined by
       nz, nrows, ncols, a, inc.
       All rows and columns in the local data structure are nonempty.
    */

    int i, j, k, tagsz, status, nsums, nbytes, *pinc;
    double sum, *psum, *pa, *vloc, *pvloc, *pvloc_end;

    (void)n; (void)nz; (void)p; (void)s;

    /****** Superstep 0. Initialize and register ******/
    for(i=0; i<nu; i++)
        u[i]= 0.0;
    vloc= vecallocd(ncols);
    bsp_push_reg(v,nv*SZDBL);
    tagsz= SZINT;
    bsp_set_tagsize(&tagsz);
    bsp_sync();

    /****** Superstep 1. Fanout ******/
    for(j=0; j<ncols; j++)
        bsp_get(srcprocv[j],v,srcindv[j]*SZDBL,&vloc[j],SZDBL);
    bsp_sync();

    /****** Superstep 2. Local matrix-vector multiplication and fanin */
    psum= &sum;
    pa= a;
    pinc= inc;
    pvloc= vloc;
    pvloc_end= pvloc + ncols;

    pvloc += *pinc;
    for(i=0; i<nrows; i++){
        *psum= 0.0;
        while (pvloc<pvloc_end){
            *psum += (*pa) * (*pvloc);
            pa++;
            pinc++;
            pvloc += *pinc;
        }
        bsp_send(destprocu[i],&destindu[i],psum,SZDBL);
        pvloc -= ncols;
    }
    bsp_sync();

    /****** Superstep 3. Summation of nonzero partial sums ******/
    bsp_qsize(&nsums,&nbytes);
    bsp_get_tag(&status,&i);
    for(k=0; k<nsums; k++){
        /* status != -1, but its value is not used */
        bsp_move(&sum,SZDBL);
        u[i] += sum;
        bsp_get_tag(&status,&i);
    }
    bsp_pop_reg(v);
    vecfreed(vloc);

} /* end bspmv */

static int nonzero(int i, int j){ return (31*i+17*j)%7==0 || i==j; }
static double value(int i, int j){ return 1.0 + ((13*i+7*j)%10)/10.0; }
static int owner_nz(int p, int i, int j){ return (i+2*j)%p; }
static int owner_u(int p, int i){ return (3*i+1)%p; }

void bspmv_test(){
    int p, s, n, i, j, k, nz, nrows, ncols, nv, nu, r, c, bad, t;
    int *rowglob, *colglob, *rowloc, *colloc, *inc, *srcprocv, *srcindv, *destprocu, *destindu;
    int *uloc;
    double *a, *v, *u, err;

    bsp_begin(P);
    p= bsp_nprocs();
    s= bsp_pid();
    if (s==0){
        if (scanf("%d",&n)!=1 || n<1)
            bsp_abort("bspmv_test: bad n");
    }
    bsp_push_reg(&n,SZINT);
    bsp_sync();
    bsp_get(0,&n,0,&n,SZINT);
    bsp_sync();
    bsp_pop_reg(&n);

    /* local nonzeros in row-major order; local row and column numbering */
    rowloc= vecalloci(n); colloc= vecalloci(n);
    for (i=0; i<n; i++){ rowloc[i]= -1; colloc[i]= -1; }
    nz= 0;
    for (i=0; i<n; i++)
        for (j=0; j<n; j++)
            if (nonzero(i,j) && owner_nz(p,i,j)==s){
                nz++;
                rowloc[i]= 0;
                colloc[j]= 0;
            }
    nrows= 0; ncols= 0;
    rowglob= vecalloci(n); colglob= vecalloci(n);
    for (i=0; i<n; i++)
        if (rowloc[i]==0){ rowloc[i]= nrows; rowglob[nrows++]= i; }
    for (j=0; j<n; j++)
        if (colloc[j]==0){ colloc[j]= ncols; colglob[ncols++]= j; }

    /* ICRS: inc[k] = position difference, position = row*ncols + col */
    a= vecallocd(nz+1);
    inc= vecalloci(nz+1);
    k= 0;
    {
        int prev= 0;
        for (r=0; r<nrows; r++)
            for (c=0; c<ncols; c++){
                i= rowglob[r]; j= colglob[c];
                if (nonzero(i,j) && owner_nz(p,i,j)==s){
                    a[k]= value(i,j);
                    inc[k]= r*ncols+c - prev;
                    prev= r*ncols+c;
                    k++;
                }
            }
        inc[k]= nrows*ncols - prev;
    }

    /* vector distributions: v cyclic, u by owner_u with local index = rank */
    nv= (n+p-s-1)/p;
    v= vecallocd(nv);
    for (j=0; j<nv; j++)
        v[j]= j*p+s+1;
    uloc= vecalloci(n);
    nu= 0;
    for (i=0; i<n; i++){
        int cnt= 0;
        for (t=0; t<i; t++)
            if (owner_u(p,t)==owner_u(p,i)) cnt++;
        uloc[i]= cnt;
        if (owner_u(p,i)==s) nu++;
    }
    u= vecallocd(nu);
    srcprocv= vecalloci(ncols); srcindv= vecalloci(ncols);
    for (c=0; c<ncols; c++){
        srcprocv[c]= colglob[c]%p;
        srcindv[c]= colglob[c]/p;
    }
    destprocu= vecalloci(nrows); destindu= vecalloci(nrows);
    for (r=0; r<nrows; r++){
        destprocu[r]= owner_u(p,rowglob[r]);
        destindu[r]= uloc[rowglob[r]];
    }

    bspmv(p,s,n,nz,nrows,ncols,a,inc,srcprocv,srcindv,destprocu,destindu,nv,nu,v,u);

    /* check the owned components of u against a sequential product */
    bad= 0; err= 0.0;
    for (i=0; i<n; i++){
        double sum= 0.0;
        if (owner_u(p,i)!=s) continue;
        for (j=0; j<n; j++)
            if (nonzero(i,j)) sum += value(i,j)*(j+1);
        err= MAX(err,fabs(sum-u[uloc[i]]));
    }
    if (err>1e-9*n*n) bad= 1;
    printf("bspmv: processor %d: %d nonzeros, %d rows, %d columns, max error %g: %s\n",
           s,nz,nrows,ncols,err,bad ? "ERROR" : "OK");
    fflush(stdout);

    vecfreei(destindu); vecfreei(destprocu); vecfreei(srcindv); vecfreei(srcprocv);
    vecfreed(u); vecfreei(uloc); vecfreed(v); vecfreei(inc); vecfreed(a);
    vecfreei(colglob); vecfreei(rowglob); vecfreei(colloc); vecfreei(rowloc);
    bsp_end();

} /* end bspmv_test */

int main(int argc, char **argv){
    bsp_init(bspmv_test, argc, argv);
    printf("How many processors do you want to use?\n"); fflush(stdout);
    if (scanf("%d",&P)!=1) exit(2);
    if (P > bsp_nprocs()){
        printf("Sorry, not enough processors available.\n");
        exit(1);
    }
    bspmv_test();
    exit(0);
} /* end main */
