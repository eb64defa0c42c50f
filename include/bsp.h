/*
 * <bsp.h> -- BSPlib, as updated by MulticoreBSP for C, on Superstep.
 *
 * Default flavour (MulticoreBSP): unsigned process ids, size_t sizes,
 * SIZE_MAX for "no message". Define MCBSP_COMPATIBILITY_MODE (or
 * LPF_USE_MCBSP_API as 0) before including this header for the original
 * Oxford BSPlib flavour: int everywhere, -1 for "no message", and the
 * bsp_pushregister / bsp_popregister spellings.
 *
 * Misuse (a put to an unregistered address, a pid out of range, ...) is a
 * run-time error: one line on stderr naming the primitive, the process and
 * the values, and the whole program exits with a non-zero status.
 * See docs/bsplib.md.
 */
#ifndef SUPERSTEP_BSP_H
#define SUPERSTEP_BSP_H

#ifdef SUPERSTEP_PUB_H
# error "<bsp.h> (also <mcbsp.h>, <bsp.hpp>) and <pub.h> cannot be included in one translation unit: BSPlib and PUB use the same bsp_ names"
#endif

#ifdef __cplusplus
# include <cstddef>
# include <cstdarg>
# include <cstdint>
#else
# include <stddef.h>
# include <stdarg.h>
# include <stdint.h>
#endif

/* ---- flavour selection ------------------------------------------------- */
#if defined(LPF_USE_MCBSP_API)
# if LPF_USE_MCBSP_API - 0 == 0
#  ifndef MCBSP_COMPATIBILITY_MODE
#   define MCBSP_COMPATIBILITY_MODE
#  endif
# endif
#endif

#if defined(__GNUC__)
# define SSTEP_BSP_NORETURN __attribute__((noreturn))
# define SSTEP_BSP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
# define SSTEP_BSP_NORETURN
# define SSTEP_BSP_PRINTF(a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types and constants (both flavours) ------------------------------- */
typedef unsigned int bsp_pid_t;
typedef unsigned int bsp_nprocs_t;
typedef size_t       bsp_size_t;
static const bsp_size_t bsp_size_unavailable = (bsp_size_t) -1;

/* MulticoreBSP extensions accepted as no-ops */
#define mcbsp_enable_checkpointing()  ((void) 0)
#define mcbsp_disable_checkpointing() ((void) 0)

/* ---- the MulticoreBSP flavour (library symbols) -------------------------- */
void      bsp_init( void (*spmd)(void), int argc, char **argv );
void      bsp_begin( const bsp_pid_t P );
void      bsp_end( void );
bsp_pid_t bsp_nprocs( void );
bsp_pid_t bsp_pid( void );
void      bsp_sync( void );
SSTEP_BSP_NORETURN SSTEP_BSP_PRINTF(1, 2)
void      bsp_abort( const char * const error_message, ... );
SSTEP_BSP_NORETURN
void      bsp_vabort( const char * const error_message, va_list args );
double    bsp_time( void );

void bsp_push_reg( const void * const address, const bsp_size_t size );
void bsp_pop_reg( const void * const address );
void bsp_put( const bsp_pid_t pid, const void * const source,
              const void * const destination, const bsp_size_t offset, const bsp_size_t size );
void bsp_get( const bsp_pid_t pid, const void * const source, const bsp_size_t offset,
              void * const destination, const bsp_size_t size );

void bsp_set_tagsize( bsp_size_t * const size );
void bsp_send( const bsp_pid_t pid, const void * const tag,
               const void * const payload, const bsp_size_t size );
void bsp_qsize( bsp_nprocs_t * const packets, bsp_size_t * const accumulated_size );
void bsp_get_tag( bsp_size_t * const status, void * const tag );
void bsp_move( void * const payload, const bsp_size_t max_copy_size );

void bsp_hpput( const bsp_pid_t pid, const void * const source,
                const void * const destination, const bsp_size_t offset, const bsp_size_t size );
void bsp_hpget( const bsp_pid_t pid, const void * const source, const bsp_size_t offset,
                void * const destination, const bsp_size_t size );
void bsp_hpsend( const bsp_pid_t pid, const void * const tag,
                 const void * const payload, const bsp_size_t size );
bsp_size_t bsp_hpmove( void * * const p_tag, void * * const p_payload );
void bsp_direct_get( const bsp_pid_t pid, const void * const source, const bsp_size_t offset,
                     void * const destination, const bsp_size_t size );

/* Superstep extension for wrappers (used by <bsp.hpp>): start a run of P
 * processes like bsp_begin; every sibling, already joined, calls
 * sibling(arg) and must end with bsp_end(). The caller continues as pid 0. */
void sstep_bsp_begin_with( const bsp_pid_t P, void (*sibling)(void *), void *arg );

/* Superstep extension for layers on an LPF context (the Python binding):
 * the next bsp_begin of the calling thread does not start processes but
 * joins the existing context ctx (an lpf_t) as process pid of nprocs
 * (every process of ctx must do the same, in the same superstep); its P is
 * not used. The matching bsp_end leaves the BSPlib run and returns; ctx
 * goes on. BSPlib registers its own slots on ctx: the caller should hold
 * few registrations of its own meanwhile (BSPlib sizes the register for
 * its own). */
void sstep_bsp_attach( void *ctx, unsigned pid, unsigned nprocs );

/* ---- the Oxford BSPlib flavour (library symbols) ------------------------- */
void   sstep_oxbsp_begin( int maxprocs );
int    sstep_oxbsp_nprocs( void );
int    sstep_oxbsp_pid( void );
void   sstep_oxbsp_push_reg( const void * ident, int size );
void   sstep_oxbsp_pop_reg( const void * ident );
void   sstep_oxbsp_put( int pid, const void * src, const void * dst, int offset, int nbytes );
void   sstep_oxbsp_get( int pid, const void * src, int offset, void * dst, int nbytes );
void   sstep_oxbsp_hpput( int pid, const void * src, const void * dst, int offset, int nbytes );
void   sstep_oxbsp_hpget( int pid, const void * src, int offset, void * dst, int nbytes );
void   sstep_oxbsp_set_tagsize( int * tag_nbytes );
void   sstep_oxbsp_send( int pid, const void * tag, const void * payload, int payload_nbytes );
void   sstep_oxbsp_hpsend( int pid, const void * tag, const void * payload, int payload_nbytes );
void   sstep_oxbsp_qsize( int * nmessages, int * accum_nbytes );
void   sstep_oxbsp_get_tag( int * status, void * tag );
void   sstep_oxbsp_move( void * payload, int reception_bytes );
int    sstep_oxbsp_hpmove( void ** tag_ptr, void ** payload_ptr );

#ifdef __cplusplus
}
#endif

/* ---- fake hp directives: hp primitives act buffered -------------------- */
#if defined(MCBSP_ENABLE_FAKE_HP_DIRECTIVES) && !defined(MCBSP_ENABLE_HP_DIRECTIVES)
# define SSTEP_BSP_FAKE_HP 1
#endif

#ifdef MCBSP_COMPATIBILITY_MODE
/* Oxford names map to the int-typed library functions; every name stays an
 * ordinary function whose address can be taken. */
# define bsp_begin        sstep_oxbsp_begin
# define bsp_nprocs       sstep_oxbsp_nprocs
# define bsp_pid          sstep_oxbsp_pid
# define bsp_push_reg     sstep_oxbsp_push_reg
# define bsp_pop_reg      sstep_oxbsp_pop_reg
# define bsp_put          sstep_oxbsp_put
# define bsp_get          sstep_oxbsp_get
# define bsp_set_tagsize  sstep_oxbsp_set_tagsize
# define bsp_send         sstep_oxbsp_send
# define bsp_qsize        sstep_oxbsp_qsize
# define bsp_get_tag      sstep_oxbsp_get_tag
# define bsp_move         sstep_oxbsp_move
# ifdef SSTEP_BSP_FAKE_HP
#  define bsp_hpput       sstep_oxbsp_put
#  define bsp_hpget       sstep_oxbsp_get
#  define bsp_hpsend      sstep_oxbsp_send
# else
#  define bsp_hpput       sstep_oxbsp_hpput
#  define bsp_hpget       sstep_oxbsp_hpget
#  define bsp_hpsend      sstep_oxbsp_hpsend
# endif
# define sstep_bsp_hpmove_fn sstep_oxbsp_hpmove
# define sstep_bsp_hpmove_ret int
#else
# ifdef SSTEP_BSP_FAKE_HP
#  define bsp_hpput       bsp_put
#  define bsp_hpget       bsp_get
#  define bsp_hpsend      bsp_send
# endif
# define sstep_bsp_hpmove_fn bsp_hpmove
# define sstep_bsp_hpmove_ret bsp_size_t
#endif

/* the original BSPlib 1.0 spellings */
#define bsp_pushregister  bsp_push_reg
#define bsp_popregister   bsp_pop_reg

/* bsp_hpmove also accepts `const void **` (LPF-flavoured code): an
 * overload in C++, a _Generic selection in C11 (the name alone still
 * designates the library function, so its address can be taken). */
#ifdef MCBSP_COMPATIBILITY_MODE
# define bsp_hpmove sstep_oxbsp_hpmove
#endif
#if defined(__cplusplus)
inline sstep_bsp_hpmove_ret bsp_hpmove( const void ** p_tag, const void ** p_payload ) {
    return bsp_hpmove( const_cast< void ** >( p_tag ), const_cast< void ** >( p_payload ) );
}
#else
static inline sstep_bsp_hpmove_ret sstep_bsp_hpmove_const( const void ** p_tag,
        const void ** p_payload ) {
    return sstep_bsp_hpmove_fn( (void **) p_tag, (void **) p_payload );
}
# if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#  ifdef MCBSP_COMPATIBILITY_MODE
#   define sstep_oxbsp_hpmove( t, p ) _Generic( (t), \
        const void **: sstep_bsp_hpmove_const, default: sstep_oxbsp_hpmove )( t, p )
#  else
#   define bsp_hpmove( t, p ) _Generic( (t), \
        const void **: sstep_bsp_hpmove_const, default: bsp_hpmove )( t, p )
#  endif
# endif
#endif

#endif /* SUPERSTEP_BSP_H */
