"""One BSP process of superstep.dask.run, started by a Dask worker's task:
reads (pid, nprocs, host, port, timeout, payload, parts) from stdin, runs the
function over the TCP meeting and writes ("ok", result) or ("err", text) to
stdout as a pickle."""
import pickle
import sys
import traceback

import cloudpickle

import superstep


def main():
    pid, nprocs, host, port, timeout, payload, parts = cloudpickle.loads(sys.stdin.buffer.read())
    fn, args, kwargs = cloudpickle.loads(payload)
    out = sys.stdout.buffer
    sys.stdout = sys.stderr       # the function's prints must not mix with the result
    try:
        res = superstep.run(lambda ctx: fn(ctx, *parts, *args, **kwargs),
                            meet=(host, port), pid=pid, nprocs=nprocs, timeout=timeout)
        data = pickle.dumps(("ok", res), protocol=5)
        rc = 0
    except BaseException as e:
        data = pickle.dumps(("err", "%s: %s" % (type(e).__name__, e)), protocol=5)
        traceback.print_exc()
        rc = 1
    out.write(data)
    out.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
