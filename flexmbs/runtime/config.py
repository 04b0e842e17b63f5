"""Numba settings for every kernel of flexmbs, in one place.

Kernels compile lazily, on first call, for the one set of argument types that every
model shares (no per-model code generation), and are cached on disk so that the second
start of a run skips compilation; an installed wheel carries them compiled
(flexmbs.runtime.kernel_cache says where they are kept and for which processor).

The user cache lives in a folder named after a hash of the kernel modules' source:
numba checks only the file of the function it loads, not the kernels that function
calls, so a change in any kernel module must start a fresh cache. Environment:
`FLEXMBS_NUMBA_CACHE=0` turns caching off; `FLEXMBS_CACHE_DIR` chooses the parent
folder (default: $XDG_CACHE_HOME/flexmbs or ~/.cache/flexmbs); NUMBA_CACHE_DIR, if
set, is the folder itself; `FLEXMBS_KERNELS=native|generic` chooses the processor the
kernels are compiled for (default: see flexmbs.runtime.kernel_cache).
"""

import os
import warnings

import numba

from . import compile_notice, kernel_cache
from .kernel_cache import KERNEL_MARKERS, source_hash

__all__ = [
    "CACHE",
    "CACHE_DIR",
    "KERNEL_MARKERS",
    "NUMBA_VERSIONS",
    "TARGET",
    "cached",
    "jit",
    "jit_entry",
    "jit_inline",
    "jit_shared",
    "numba_version_problem",
    "source_hash",
]

NUMBA_VERSIONS = ((0, 68), (0, 69))
"""[lowest, first unsupported) (major, minor) of numba: the kernels use numba internals
(flexmbs.runtime.tuple_ref's data model and alias hook, function addresses in
flexmbs.solvers.bdf, the `_nrt` option below, flexmbs.runtime.kernel_cache's cache) that
change between releases, so the range is the one the test suite ran on; pyproject.toml
pins the same."""


def numba_version_problem(version=numba.__version__):
    """A sentence saying why `version` of numba is not supported, or None."""
    try:
        major_minor = tuple(int(x) for x in version.split(".")[:2])
    except ValueError:
        return f"numba {version} is not a release version flexmbs knows"
    low, high = NUMBA_VERSIONS
    if low <= major_minor < high:
        return None
    return (
        f"flexmbs runs on numba >={low[0]}.{low[1]},<{high[0]}.{high[1]}, found "
        f"{version}: its kernels use numba internals that change between releases "
        f"(pip install 'numba>={low[0]}.{low[1]},<{high[0]}.{high[1]}')"
    )


if numba_version_problem():
    warnings.warn(numba_version_problem(), RuntimeWarning, stacklevel=2)

CACHE = os.environ.get("FLEXMBS_NUMBA_CACHE", "1") not in ("0", "false", "no")

SOURCE_HASH = source_hash()
CACHE_DIR = kernel_cache.user_cache_dir(SOURCE_HASH)
TARGET = kernel_cache.choose_target(CACHE_DIR, SOURCE_HASH)
"""The processor the kernels compile for and whether the shipped ones are read
(flexmbs.runtime.kernel_cache.Target)."""
kernel_cache._PackageLocator.root = CACHE_DIR
kernel_cache.KernelCache.shipped = TARGET.shipped
if CACHE:
    numba.config.CACHE_DIR = CACHE_DIR  # type: ignore[attr-defined]  # user laws' cfuncs
compile_notice.numba_arrived(TARGET.why)


def cached(dispatcher):
    """`dispatcher` (numba.njit's) with the kernel cache (flexmbs.runtime.kernel_cache), unless
    caching is off."""
    if not CACHE or not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT: plain Python
        return dispatcher
    return kernel_cache.attach(dispatcher)


def jit(fn):
    """numba.njit with the project's flags: nopython, cached, numpy error model, and
    numba's reference counting (NRT) set explicitly, so that a kernel called from a
    `jit_entry` kernel compiles with it too (numba lets a callee inherit the caller's
    NRT setting when its own is unset)."""
    return cached(numba.njit(error_model="numpy", nogil=True, _nrt=True)(fn))


def jit_entry(fn):
    """`jit` without numba's reference counting (NRT off), for the kernels through
    which the integrators enter the equations of motion (the residuals, the state
    derivative), the BDF step loop and the helpers it calls with its state tuple,
    and the output quantities.

    The model and workspace reach these kernels as references (flexmbs.runtime.tuple_ref;
    CompiledModel holds them so), whose arrays borrow numpy's memory: with the
    counting on, every array read from them would be counted, which was 90 % of the
    residual of a rigid chain (12 of 12.3 us at N = 2). Such a kernel must not
    allocate: an allocation fails to compile ("NRT required but not enabled"). With
    the BDF step helpers uncounted (and the functions passed by address,
    solvers.bdf) 10 s of CHAIN-2 integrate in 15 ms instead of 36.
    """
    return cached(numba.njit(error_model="numpy", nogil=True, _nrt=False)(fn))


def jit_inline(fn):
    """`jit`, inlined into its callers by numba (inline="always"), for small helpers
    called in inner loops and for helpers that return arrays (views of their
    arguments), which a kernel without reference counting may not receive from a
    compiled call. numba inlines at the level of its IR and types each copy again,
    so a large function inlined into several kernels costs its compilation several
    times: those are `jit_shared`.
    """
    return cached(numba.njit(error_model="numpy", nogil=True, inline="always")(fn))


def jit_shared(fn):
    """`jit` without reference counting and not inlined: one compiled function that
    every kernel calls, for the large steps of the equations of motion (forward
    kinematics, forces, mass matrix, dynamic rows) that several entry kernels share.

    The model and workspace reach it as references (flexmbs.runtime.tuple_ref.TupleRef, one
    pointer each), so a call copies and counts nothing; inlined instead, each entry
    kernel would compile its own copy (numba inlines at the level of its IR and
    types the copy again). Such a kernel must not allocate, and returns nothing or
    scalars: an array it returned would reach a caller that counts references
    without the count that caller expects.
    """
    return cached(numba.njit(error_model="numpy", nogil=True, _nrt=False)(fn))
