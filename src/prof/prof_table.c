/*
 * The profiler's analysis as the recorder in the core sees it: one table
 * (src/core/prof_format.h). The core calls nothing else of src/prof.
 */
#include "prof_internal.h"

const struct sstep_prof_analysis sstep_prof_analysis = {
    .report = sstep_prof_report,
    .file_r = pf_file_r,
};
