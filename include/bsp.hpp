/*
 * <bsp.hpp> -- BSPlib for C++: the C primitives of <bsp.h> plus the
 * mcbsp::BSP_program class of MulticoreBSP for C.
 *
 * A BSP_program is an SPMD program; each process runs spmd() on its own
 * instance: pid 0 on the object begin() was called on, every sibling on an
 * instance obtained from newInstance() on that object. After spmd() every
 * process performs one implicit bsp_sync(), siblings' instances are released
 * with destroyInstance(), and the run ends as by bsp_end(); begin() returns
 * on pid 0 only. spmd() must not call bsp_begin or bsp_end itself.
 */
#ifndef SUPERSTEP_BSP_HPP
#define SUPERSTEP_BSP_HPP

#include <bsp.h>
#include <cstddef>

namespace mcbsp {

    class BSP_program {
    private:
        size_t P;

        /* what a sibling runs, already part of the run */
        static void sibling_main( void * original ) {
            BSP_program * const orig = static_cast< BSP_program * >( original );
            BSP_program * const mine = orig->newInstance();
            mine->P = orig->P;
            mine->spmd();
            bsp_sync();
            orig->destroyInstance( mine );
            bsp_end();   /* does not return in a sibling */
        }

    protected:
        BSP_program() : P( static_cast< size_t >( -1 ) ) {}

        /* the SPMD section */
        virtual void spmd() = 0;

        /* a new instance of the program for a sibling process */
        virtual BSP_program * newInstance() = 0;

        /* releases an instance made by newInstance */
        virtual void destroyInstance( BSP_program * const instance ) {
            delete instance;
        }

    public:
        /* Runs spmd() on P processes; returns on pid 0 after the run. */
        void begin( const bsp_pid_t P = bsp_nprocs() ) {
            this->P = P;
            ::sstep_bsp_begin_with( static_cast< bsp_pid_t >( P ), &BSP_program::sibling_main, this );
            spmd();
            bsp_sync();
            bsp_end();
        }

        virtual ~BSP_program() {}
    };

}

#endif
