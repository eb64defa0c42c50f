/*
 * The extensions as the core sees them: one table (core_internal.h, struct
 * sstep_lpfext), as an engine is one struct sstep_engine. The core and the
 * engines call nothing else of src/ext.
 */
#include "lpfext.h"

const struct sstep_lpfext sstep_lpfext = {
    .noc_entry = sstep_noc_entry,
    .noc_resolve = sstep_noc_resolve,
    .noc_range_error = sstep_noc_range_error,
    .noc_deregister = sstep_noc_deregister,
    .free = sstep_lext_free,
    .flush = sstep_lext_flush,
    .sync = sstep_lext_sync,
    .put = sstep_lext_put,
};
