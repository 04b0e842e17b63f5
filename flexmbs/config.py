"""Numba settings for every kernel of flexmbs, in one place.

Kernels compile lazily, on first call, for the one set of argument types that every
model shares (no per-model code generation), and are cached on disk so that the second
start of a run skips compilation.

The cache lives in a folder named after a hash of the kernel modules' source: numba
checks only the file of the function it loads, not the kernels that function calls, so
a change in any kernel module must start a fresh cache. Environment:
`FLEXMBS_NUMBA_CACHE=0` turns caching off; `FLEXMBS_CACHE_DIR` chooses the parent
folder (default: $XDG_CACHE_HOME/flexmbs or ~/.cache/flexmbs). If NUMBA_CACHE_DIR is
set, numba's own setting is kept.
"""

import hashlib
import os
import pathlib

import numba

__all__ = ["CACHE", "CACHE_DIR", "jit", "jit_entry", "jit_inline", "source_hash"]

CACHE = os.environ.get("FLEXMBS_NUMBA_CACHE", "1") not in ("0", "false", "no")


KERNEL_MARKERS = (b"@jit", b"jit_inline", b"import numba", b"from numba")
"""A module holding any of these is compiled code (or compiles it) and enters the
hash; pure-Python modules (command line, I/O, model reading) do not, so editing them
keeps the cache."""


def source_hash():
    """sha1 (12 hex digits) of every .py file of the flexmbs package that defines or
    drives numba kernels (KERNEL_MARKERS)."""
    root = pathlib.Path(__file__).resolve().parent
    h = hashlib.sha1()
    for p in sorted(root.rglob("*.py")):
        text = p.read_bytes()
        if any(k in text for k in KERNEL_MARKERS):
            h.update(str(p.relative_to(root)).encode())
            h.update(text)
    return h.hexdigest()[:12]


def _cache_dir():
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    base = os.environ.get("FLEXMBS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "flexmbs")
    return os.path.join(base, f"numba-{source_hash()}")


CACHE_DIR = _cache_dir()
if CACHE:
    numba.config.CACHE_DIR = CACHE_DIR


def jit(fn):
    """numba.njit with the project's flags: nopython, cached, numpy error model, and
    numba's reference counting (NRT) set explicitly, so that a kernel called from a
    `jit_entry` kernel compiles with it too (numba lets a callee inherit the caller's
    NRT setting when its own is unset)."""
    return numba.njit(cache=CACHE, error_model="numpy", nogil=True, _nrt=True)(fn)


def jit_entry(fn):
    """`jit` without numba's reference counting (NRT off), for the kernels through
    which the integrators enter the equations of motion (the residuals, the state
    derivative), the BDF step loop and the helpers it calls with its state tuple,
    and the output quantities.

    Every call that passes the (m, ws) tuples, inlined or not, increments and
    decrements the count of each of their ~150 arrays; with the counting on, those
    atomic operations were 90 % of the residual of a rigid chain (12 of 12.3 us at
    N = 2, 36 of 39 us at N = 16). Without it the kernels inlined into an entry kernel
    pay nothing. Such a kernel must not allocate: an allocation fails to compile
    ("NRT required but not enabled"). Its non-inlined callees compile with the
    counting on, so helpers called per body take arrays, not the tuples. With the
    BDF step helpers uncounted (and the functions passed by address, solvers.bdf)
    10 s of CHAIN-2 integrate in 15 ms instead of 36; an output row of it costs 4 us
    instead of 13.
    """
    return numba.njit(cache=CACHE, error_model="numpy", nogil=True, _nrt=False)(fn)


def jit_inline(fn):
    """`jit`, inlined into its callers by numba (inline="always").

    For kernels that take the model and workspace tuples (m, ws) and call other
    kernels: a compiled call of such a function increments and decrements the
    reference count of every array in both tuples (~60 atomic operations, ~0.35 us),
    which dominated the residual of small models. Inlined, the counts are paid once
    per entry from Python or from the integrator.
    """
    return numba.njit(cache=CACHE, error_model="numpy", nogil=True, inline="always")(fn)
