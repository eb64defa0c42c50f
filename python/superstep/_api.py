"""superstep.run as a Python function: an exception of the run reaches the
caller with the program's frames only (the binding's are left out)."""
from . import _core


def run(spmd, p=None, args=(), kwargs=None, *, comm=None, meet=None, pid=None, nprocs=None,
        timeout=60.0):
    try:
        return _core.run(spmd, p, args, kwargs, comm=comm, meet=meet, pid=pid, nprocs=nprocs,
                         timeout=timeout)
    except BaseException as e:
        err = e
    _core._trim_tb(err)
    raise err


run.__doc__ = _core.run.__doc__
