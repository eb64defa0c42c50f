# Included by _core.pyx: where the program called the profiled superstep.

# ---- the profiler (SUPERSTEP_PROFILE, bsprun --profile): each superstep is
# recorded with the program's call that ended it (ctx.sync, a collective):
# "LINE FUNCTION FILE" of the innermost frame outside this package
cdef bint _PROF = sstep_prof_on() != 0
cdef dict _pysites = {}
_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


cdef _prof_site():
    try:
        f = sys._getframe(0)
    except ValueError:          # no Python frame: a sync of the package's own
        f = None
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        sstep_prof_pysite(NULL)
        return
    key = (f.f_code, f.f_lineno)
    b = _pysites.get(key)
    if b is None:
        name = getattr(f.f_code, "co_qualname", f.f_code.co_name).replace(" ", "_")
        b = ("%d %s %s" % (f.f_lineno, name, os.path.abspath(f.f_code.co_filename))
             ).replace("\n", " ").encode("utf-8", "replace")
        _pysites[key] = b       # kept: the recorder holds its address
    sstep_prof_pysite(<const char *>(<bytes>b))
