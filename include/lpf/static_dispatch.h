/*
 * <lpf/static_dispatch.h> -- renaming helpers of the LPF contract.
 *
 * Superstep selects its engine at run time, so static dispatch is inert:
 * programs that define LPF_CORE_STATIC_DISPATCH keep the plain lpf_* names,
 * which always link. The helper macros exist so that code using them compiles.
 * Safe to include repeatedly.
 */
#ifndef LPF_RENAME_PRIMITIVE4
#define LPF_RENAME_PRIMITIVE4( a, b, c, d ) a ## b ## _ ## c ## _ ## d
#endif
#ifndef LPF_RENAME_PRIMITIVE2
#define LPF_RENAME_PRIMITIVE2( a, b ) a ## b
#endif
#ifndef LPF_FUNC
#define LPF_FUNC( name ) LPF_RENAME_PRIMITIVE2( lpf_, name )
#endif
#ifndef LPF_TYPE
#define LPF_TYPE( name ) LPF_RENAME_PRIMITIVE2( lpf_, name )
#endif
#ifndef LPF_CONST
#define LPF_CONST( name ) LPF_RENAME_PRIMITIVE2( LPF_, name )
#endif
