/*
 * hello_pub: the minimal PUB program of docs/pub.md (pub.md §4.4): pid 0
 * broadcasts a seed with bsp_gsend, every process sends its pid to its right
 * neighbour, and one bsp_oblsync(bsp, 2) ends the superstep without a
 * barrier (each process knows it receives exactly two messages).
 *
 *   hello_pub [P]            (default: pub_maxprocs())
 */
#include <pub.h>
#include <stdio.h>
#include <stdlib.h>

static void spmd( pbsp bsp, void *arg )
{
    int p = bsp_nprocs( bsp ), s = bsp_pid( bsp ), left = ( s + p - 1 ) % p;
    if( s == 0 ) bsp_gsend( bsp, 0, p - 1, arg, sizeof( int ) );   /* only pid 0 has arg */
    bsp_send( bsp, ( s + 1 ) % p, &s, sizeof s );
    bsp_oblsync( bsp, 2 );                       /* each process receives exactly 2 messages */
    int seed = *(int *)bspmsg_data( bsp_findmsg( bsp, 0, 0 ) );     /* pid 0 issued the gsend first */
    pbspmsg m = bsp_findmsg( bsp, left, left == 0 ? 1 : 0 );
    printf( "%d/%d: seed %d, %d from %d\n", s, p, seed, *(int *)bspmsg_data( m ), bspmsg_src( m ) );
    bsp_sync( bsp );
}

int main( int argc, char **argv )
{
    int seed = 42, P = argc > 1 ? atoi( argv[1] ) : pub_maxprocs();
    pub_exec( P, spmd, &seed );
    return 0;
}
