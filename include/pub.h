/*
 * <pub.h> -- the PUB extensions (Paderborn University BSP library) on
 * Superstep: BSP objects, partitions into autonomous groups, oblivious
 * synchronisation, random access to the message buffer and non-blocking
 * collectives on subsets. Contract: pub.md (docs/pub.md).
 *
 * Every PUB name is an object-like macro for an exported symbol:
 * bsp_X -> pub_X, bspmsg_X -> pubmsg_X, bspop_X -> (&pub_op_X). So calls
 * look as in the PUB paper and &bsp_send == &pub_send, while no PUB function
 * is exported under a bsp_ name: one program may link BSPlib translation
 * units and PUB translation units, but <pub.h> and <bsp.h> cannot be
 * included in the same translation unit.
 *
 * Misuse is a run-time error: one line on stderr naming the primitive, the
 * process, its group and the values; the program ends with exit status 6.
 */
#ifndef SUPERSTEP_PUB_H
#define SUPERSTEP_PUB_H

#ifdef SUPERSTEP_BSP_H
# error "<pub.h> and <bsp.h> (also <mcbsp.h>, <bsp.hpp>) cannot be included in one translation unit: PUB and BSPlib use the same bsp_ names"
#endif

#ifdef __cplusplus
# include <cstddef>
#else
# include <stddef.h>
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
# define SSTEP_PUB_NORETURN [[noreturn]]
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
# define SSTEP_PUB_NORETURN _Noreturn
#elif defined(__GNUC__)
# define SSTEP_PUB_NORETURN __attribute__((noreturn))
#else
# define SSTEP_PUB_NORETURN
#endif
#if defined(__GNUC__)
# define SSTEP_PUB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
# define SSTEP_PUB_PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types ------------------------------------------------------------- */
typedef struct tbsp { void *pub_private_[8]; } tbsp;     /* storage of one BSP object */
typedef tbsp *pbsp;                                      /* what the primitives take */
typedef struct pub_msg tbspmsg;                          /* incomplete type */
typedef tbspmsg *pbspmsg;                                /* message handle */
typedef void (*bspop_func)( void *param, void *acc, const void *in, int count );
typedef struct tbspop { size_t size; bspop_func func; } tbspop;  /* element size + fold */
typedef const tbspop *pbspop;
typedef void (*pub_spmd_t)( pbsp bsp, void *arg );
#define BSPOP_INIT( type, func ) { sizeof(type), (func) }

/* ---- start-up ------------------------------------------------------------ */
void    pub_exec( int P, pub_spmd_t spmd, void *arg );
int     pub_maxprocs( void );

/* ---- enquiry; time and abort are process-wide --------------------------- */
int     pub_pid( pbsp bsp );
int     pub_nprocs( pbsp bsp );
double  pub_time( void );
SSTEP_PUB_NORETURN SSTEP_PUB_PRINTF(1, 2)
void    pub_abort( const char *format, ... );

/* ---- objects -------------------------------------------------------------- */
void    pub_partition( pbsp bsp, pbsp subbsp, int n, const int *part );
void    pub_done( pbsp bsp );
void    pub_dup( pbsp bsp, pbsp newbsp );
void    pub_threadsafe_dup( pbsp bsp, pbsp newbsp );

/* ---- synchronisation ------------------------------------------------------ */
void    pub_sync( pbsp bsp );
void    pub_oblsync( pbsp bsp, int n );

/* ---- message passing and the message buffer ------------------------------- */
void    pub_send( pbsp bsp, int dest, const void *buf, size_t size );
void    pub_hpsend( pbsp bsp, int dest, const void *buf, size_t size );
int     pub_nmsgs( pbsp bsp );
pbspmsg pub_getmsg( pbsp bsp, int i );
pbspmsg pub_findmsg( pbsp bsp, int src, int i );
void   *pubmsg_data( pbspmsg msg );
size_t  pubmsg_size( pbspmsg msg );
int     pubmsg_src( pbspmsg msg );

/* ---- DRMA ----------------------------------------------------------------- */
void    pub_push_reg( pbsp bsp, const void *ident, size_t size );
void    pub_pop_reg( pbsp bsp, const void *ident );
void    pub_put( pbsp bsp, int pid, const void *src, const void *dest, size_t offset, size_t size );
void    pub_hpput( pbsp bsp, int pid, const void *src, const void *dest, size_t offset, size_t size );
void    pub_get( pbsp bsp, int pid, const void *src, size_t offset, void *dest, size_t size );
void    pub_hpget( pbsp bsp, int pid, const void *src, size_t offset, void *dest, size_t size );

/* ---- broadcast: called by the sender only ---------------------------------- */
void    pub_gsend( pbsp bsp, int first, int last, const void *buf, size_t size );
void    pub_lsend( pbsp bsp, const int *table, int n, const void *buf, size_t size );
void    pub_hpgsend( pbsp bsp, int first, int last, const void *buf, size_t size );
void    pub_hplsend( pbsp bsp, const int *table, int n, const void *buf, size_t size );

/* ---- reduce family: called by every member --------------------------------- */
void pub_greduce   ( pbsp bsp, int first, int last, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_gallreduce( pbsp bsp, int first, int last, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_gscan     ( pbsp bsp, int first, int last, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_gallscan  ( pbsp bsp, int first, int last, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_lreduce   ( pbsp bsp, const int *table, int n, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_lallreduce( pbsp bsp, const int *table, int n, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_lscan     ( pbsp bsp, const int *table, int n, const void *sbuf, void *rbuf, int count, pbspop op, void *param );
void pub_lallscan  ( pbsp bsp, const int *table, int n, const void *sbuf, void *rbuf, int count, pbspop op, void *param );

/* ---- predefined operators (ignore param) ----------------------------------- */
extern const tbspop pub_op_addint,    pub_op_mulint,    pub_op_maxint,    pub_op_minint,
                    pub_op_addlong,   pub_op_mullong,   pub_op_maxlong,   pub_op_minlong,
                    pub_op_adddouble, pub_op_muldouble, pub_op_maxdouble, pub_op_mindouble;

#ifdef __cplusplus
}
#endif

/* ---- the paper's names ------------------------------------------------------ */
#define bsp_pid             pub_pid
#define bsp_nprocs          pub_nprocs
#define bsp_time            pub_time
#define bsp_abort           pub_abort
#define bsp_partition       pub_partition
#define bsp_done            pub_done
#define bsp_dup             pub_dup
#define bsp_threadsafe_dup  pub_threadsafe_dup
#define bsp_sync            pub_sync
#define bsp_oblsync         pub_oblsync
#define bsp_send            pub_send
#define bsp_hpsend          pub_hpsend
#define bsp_nmsgs           pub_nmsgs
#define bsp_getmsg          pub_getmsg
#define bsp_findmsg         pub_findmsg
#define bspmsg_data         pubmsg_data
#define bspmsg_size         pubmsg_size
#define bspmsg_src          pubmsg_src
#define bsp_push_reg        pub_push_reg
#define bsp_pop_reg         pub_pop_reg
#define bsp_put             pub_put
#define bsp_hpput           pub_hpput
#define bsp_get             pub_get
#define bsp_hpget           pub_hpget
#define bsp_gsend           pub_gsend
#define bsp_lsend           pub_lsend
#define bsp_hpgsend         pub_hpgsend
#define bsp_hplsend         pub_hplsend
#define bsp_greduce         pub_greduce
#define bsp_gallreduce      pub_gallreduce
#define bsp_gscan           pub_gscan
#define bsp_gallscan        pub_gallscan
#define bsp_lreduce         pub_lreduce
#define bsp_lallreduce      pub_lallreduce
#define bsp_lscan           pub_lscan
#define bsp_lallscan        pub_lallscan

#define bspop_addint        ( &pub_op_addint )
#define bspop_mulint        ( &pub_op_mulint )
#define bspop_maxint        ( &pub_op_maxint )
#define bspop_minint        ( &pub_op_minint )
#define bspop_addlong       ( &pub_op_addlong )
#define bspop_mullong       ( &pub_op_mullong )
#define bspop_maxlong       ( &pub_op_maxlong )
#define bspop_minlong       ( &pub_op_minlong )
#define bspop_adddouble     ( &pub_op_adddouble )
#define bspop_muldouble     ( &pub_op_muldouble )
#define bspop_maxdouble     ( &pub_op_maxdouble )
#define bspop_mindouble     ( &pub_op_mindouble )

#endif /* SUPERSTEP_PUB_H */
