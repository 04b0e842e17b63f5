"""The cost of handing a model's (m, ws) tuples to a compiled function, as the BDF
step loop calls its residual: by value (numba's way, every array's fields copied)
and by reference (flexmbs.runtime.tuple_ref).

A no-op function with the residual's arguments is called through a function pointer
from a compiled loop, first with the tuple, then with a reference to it (the
function reads one member either way):

    .venv/bin/python benchmarks/bench_call_cost.py [--n 16] [--calls 200000]
"""

import argparse
import time

import numba
import numpy as np
from numba.core import types

from flexmbs.model.compiled import compile_model
from flexmbs.model.library import chain_model
from flexmbs.runtime.config import jit_entry
from flexmbs.runtime.tuple_ref import TupleRef, tuple_ref
from flexmbs.solvers.bdf import _F8, _VEC, _CompiledFunction, _function_type


@jit_entry
def _no_op(t, y, yp, args, out):
    out[0] = y[0] + args[1].x[0]


@jit_entry
def _call_with_tuple(f, args, y, yp, out, n):
    for _ in range(n):
        f(0.0, y, yp, args, out)


@jit_entry
def _call_with_reference(f, args, y, yp, out, n):
    ref = tuple_ref(args)
    for _ in range(n):
        f(0.0, y, yp, ref, out)


def time_calls(nbodies, calls):
    """ns per call with the tuple and with the reference, CHAIN-nbodies planar."""
    cm = compile_model(chain_model(nbodies, "planar"))
    args = (cm.arrays, cm.new_workspace())
    y = cm.initial_state()
    yp, out = np.zeros_like(y), np.zeros_like(y)
    targs = numba.typeof(args)
    result = {}
    for label, loop, atype in (("tuple", _call_with_tuple, targs),
                               ("reference", _call_with_reference, TupleRef(targs))):
        ftype = _function_type(_no_op, (_F8, _VEC, _VEC, atype, _VEC), "no-op")
        f = _CompiledFunction(_no_op, ftype)
        entry = loop.compile((ftype, targs, _VEC, _VEC, _VEC, types.int64))
        entry(f, args, y, yp, out, 10)
        best = np.inf
        for _ in range(3):
            start = time.perf_counter()
            entry(f, args, y, yp, out, calls)
            best = min(best, (time.perf_counter() - start) / calls * 1e9)
        result[label] = best
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=16, help="bodies of the planar chain")
    p.add_argument("--calls", type=int, default=200000)
    a = p.parse_args()
    r = time_calls(a.n, a.calls)
    print(f"CHAIN-{a.n}: a call through a function pointer with (m, ws) by value "
          f"{r['tuple']:.0f} ns, by reference {r['reference']:.0f} ns")


if __name__ == "__main__":
    main()
