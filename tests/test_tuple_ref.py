"""flexmbs.runtime.tuple_ref: a tuple handed to kernels by reference (how the BDF step loop
passes (m, ws) to the residual, the Jacobian and the mass hook).

The reference must read the tuple's own members, writes through them must reach the
caller's arrays (numba removes writes into arrays it believes local to a kernel; a
first version, whose ref[i] was an inlined overload, lost them), reading members must
leave the reference counts as they were, and the module must enter the kernel
cache's source hash."""

import os
import pathlib
import re
import sys
from collections import namedtuple

import numpy as np
import pytest
from numba.core.extending import overload

import flexmbs
from flexmbs.runtime import config
from flexmbs.runtime.config import jit, jit_entry, jit_inline
from flexmbs.runtime.tuple_ref import TupleRef, entry_point, held_ref, member_ref, tuple_ref

JIT = os.environ.get("NUMBA_DISABLE_JIT") != "1"
Pair = namedtuple("Pair", "a b")


@jit_entry
def _write_through_ref(ref, q):
    for i in range(q.shape[0]):
        ref[1].b[i] = 2.0 * q[i]
        ref[0][i] = 3.0 * q[i]


@jit_entry
def _pass_a_ref(args, q):
    _write_through_ref(tuple_ref(args), q)


@jit_inline
def _fill(pair, q):
    for i in range(q.shape[0]):
        pair.b[i] = 4.0 * q[i]


@jit_entry
def _write_in_an_inlined_kernel(args, q):
    ref = tuple_ref(args)
    _fill(ref[1], q)


@jit
def _write_through_ref_counted(args, q):
    _write_through_ref(tuple_ref(args), q)


@jit_entry
def _fields_through_ref(ref, q):
    for i in range(q.shape[0]):
        ref.b[i] = ref.a[i] + q[i]


@jit_entry
def _pass_a_namedtuple_ref(pair, q):
    _fields_through_ref(tuple_ref(pair), q)


@jit_entry
def _read_members(args, out):
    ref = tuple_ref(args)
    out[0] = ref[0][1]
    out[1] = ref[1].a.shape[0]
    out[2] = ref[-2].b[0]
    out[3] = ref[2]
    out[4] = tuple_ref(ref)[2]      # a reference to a reference is itself
    out[5] = tuple_ref(ref[1]).b[0]


@jit
def _read_members_counted(args, n):
    s = 0.0
    for _ in range(n):
        ref = tuple_ref(args)
        s += ref[1].a[0] + ref[0].sum()
    return s


def _same(x):
    return x


@overload(_same, inline="always")
def _same_inlined(x):
    """An overload that numba inlines after typing: like numba's own inlined overloads,
    it makes numba run its dead-code elimination on the typed kernel."""
    return lambda x: x


@jit_entry
def _write_through_local_ref(args, q):
    ref = tuple_ref(args)
    w = ref[1]
    for i in range(q.shape[0]):
        w.b[i] = _same(q[i])


@jit_entry
def _write_through_member_refs(args, q):
    ref = tuple_ref(args)
    w = member_ref(ref, 1)
    for i in range(q.shape[0]):
        w.b[i] = _same(q[i])
    _fill(member_ref(ref, -2), q[::-1])     # inlined: writes into b again, reversed


@jit_inline
def _fill_pair(pair, q):
    for i in range(q.shape[0]):
        pair.b[i] = 5.0 * q[i] + pair.a[i]


@jit_entry
def _member_ref_into_an_inlined_kernel(ref, q):
    _fill_pair(member_ref(ref, 1), q)


@jit_entry
def _pass_a_member_ref(args, q):
    _member_ref_into_an_inlined_kernel(tuple_ref(args), q)


@jit
def _pass_a_member_ref_counted(args, n, q):
    for _ in range(n):
        _member_ref_into_an_inlined_kernel(tuple_ref(args), q)


@jit_entry
def _read_through_member_refs(args, out):
    ref = tuple_ref(args)
    pair = member_ref(ref, 1)
    out[0] = pair.a[3]
    out[1] = pair.b.shape[0]
    out[2] = pair[0][2]
    out[3] = member_ref(ref, -2).b[1]


@jit
def _decay(t, y, yp, args, out):
    out[0] = yp[0] + args[0][0] * y[0]


def _args():
    return (np.zeros(3), Pair(np.arange(4.0), np.zeros(3)), 2.5)


def test_writes_through_a_reference_reach_the_tuples_arrays():
    q = np.array([1.5, 2.5, -1.0])
    args = _args()
    _write_through_local_ref(args, q)   # with an inlined overload: see below
    np.testing.assert_array_equal(args[1].b, q)
    args = _args()
    _write_in_an_inlined_kernel(args, q)
    np.testing.assert_array_equal(args[1].b, 4.0 * q)
    for kernel in (_pass_a_ref, _write_through_ref_counted):
        args = _args()
        kernel(args, q)
        np.testing.assert_array_equal(args[1].b, 2.0 * q)
        np.testing.assert_array_equal(args[0], 3.0 * q)


def test_a_namedtuples_fields_read_and_written_through_a_reference():
    pair = Pair(np.arange(4.0), np.zeros(3))
    q = np.array([0.5, -1.0, 2.0])
    _pass_a_namedtuple_ref(pair, q)
    np.testing.assert_array_equal(pair.b, pair.a[:3] + q)


def test_members_read_through_a_reference_are_the_tuples():
    args = _args()
    args[0][1] = 7.0
    args[1].b[0] = -4.0
    out = np.zeros(6)
    _read_members(args, out)
    np.testing.assert_array_equal(out, [7.0, 4.0, -4.0, 2.5, 2.5, -4.0])


def test_writes_through_a_member_reference_reach_the_tuples_arrays():
    """member_ref(ref, i): a reference to a tuple member, read field by field where it
    is used (how residual_from_ref reads m and ws). numba's dead-code elimination must
    see the member's arrays as the caller's: without the alias rule that
    flexmbs.runtime.tuple_ref registers, the writes below are removed."""
    q = np.array([1.5, 2.5, -1.0])
    args = _args()
    _write_through_member_refs(args, q)
    np.testing.assert_array_equal(args[1].b, 4.0 * q[::-1])
    args = _args()
    _pass_a_member_ref(args, q)
    np.testing.assert_array_equal(args[1].b, 5.0 * q + args[1].a[:3])
    args = _args()
    arrays = [args[0], args[1].a, args[1].b]
    _pass_a_member_ref_counted(args, 1, q)
    before = [sys.getrefcount(a) for a in arrays]
    _pass_a_member_ref_counted(args, 1000, q)
    np.testing.assert_array_equal(args[1].b, 5.0 * q + args[1].a[:3])
    assert [sys.getrefcount(a) for a in arrays] == before


def test_members_read_through_a_member_reference_are_the_tuples():
    args = _args()
    args[1].b[1] = -6.0
    out = np.zeros(4)
    _read_through_member_refs(args, out)
    np.testing.assert_array_equal(out, [3.0, 3.0, 2.0, -6.0])


@pytest.mark.skipif(not JIT, reason="numba off")
def test_a_member_reference_is_typed_only_for_a_tuple_member():
    import numba
    from numba.core.errors import TypingError

    @numba.njit
    def of_an_array(args):
        return member_ref(tuple_ref(args), 0)[0]

    with pytest.raises(TypingError):
        of_an_array(_args())


def test_reading_members_leaves_reference_counts_unchanged():
    args = _args()
    arrays = [args[0], args[1].a, args[1].b]
    _read_members_counted(args, 1)
    before = [sys.getrefcount(a) for a in arrays]
    assert _read_members_counted(args, 1000) == 1000 * 0.0
    assert [sys.getrefcount(a) for a in arrays] == before


@pytest.mark.skipif(not JIT, reason="numba off")
def test_the_bdf_functions_receive_a_reference():
    from flexmbs.solvers.bdf import BDF
    solver = BDF(_decay, (np.array([1.0]),), 0.0, [1.0], [-1.0], 1.0)
    for f in solver._functions:
        targs = f.signature().args
        ref = [a for a in targs if isinstance(a, TupleRef)]
        assert len(ref) == 1 and ref[0].dtype.types[0].ndim == 1


@jit_entry
def _scale_through_a_held_ref(t, q, ref, out):
    """Reads and writes the referenced tuple's arrays (as state_derivative_from_ref)."""
    pair = member_ref(ref, 1)
    for i in range(q.shape[0]):
        pair[1][i] = t * q[i]
        out[i] = ref[0][i] + pair[0][i]


def _held_pair():
    """A HeldTuple whose tuple no one else holds. A plain tuple: flexmbs' cache index
    of the storing kernel pickles the tuple's type, and a namedtuple of this module
    would make it unreadable where the module cannot be imported."""
    return held_ref((np.array([1.0, 2.0, 3.0]), (np.arange(4.0), np.zeros(3))))


def test_a_held_tuple_is_passed_by_reference_from_python():
    """held_ref: the tuple typed as its TupleRef and passed as an address, through the
    dispatcher and through entry_point alike; the kernel reads the tuple's arrays and
    its writes reach them, the HeldTuple keeps the arrays alive, and no reference
    count moves."""
    import gc
    held = _held_pair()
    gc.collect()
    tup = held.tuple if JIT else held
    q = np.array([0.5, -1.0, 2.0])
    out = np.zeros(3)
    _scale_through_a_held_ref(2.0, q, held, out)
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(tup[1][1], 2.0 * q)
    call = entry_point(_scale_through_a_held_ref, 0.0, q, held, out)
    arrays = [tup[0], tup[1][0], tup[1][1], q, out]
    before = [sys.getrefcount(a) for a in arrays]
    tup[0][:] = [-1.0, 0.0, 1.0]
    for _ in range(1000):
        call(3.0, q, held, out)
    np.testing.assert_array_equal(out, [-1.0, 1.0, 3.0])
    np.testing.assert_array_equal(tup[1][1], 3.0 * q)
    assert [sys.getrefcount(a) for a in arrays] == before
    if JIT:
        assert isinstance(_scale_through_a_held_ref.typeof_pyval(held), TupleRef)


def test_the_module_enters_the_kernel_source_hash():
    """Every module of the package that uses numba enters config.source_hash (a
    change in one must start a fresh cache)."""
    root = pathlib.Path(flexmbs.__file__).parent
    for p in sorted(root.rglob("*.py")):
        text = p.read_bytes()
        if re.search(rb"^\s*(import|from)\s+numba", text, re.M):
            assert any(k in text for k in config.KERNEL_MARKERS), p
    assert any(k in (root / "runtime" / "tuple_ref.py").read_bytes() for k in config.KERNEL_MARKERS)


@pytest.mark.skipif(not JIT, reason="numba off")
def test_a_held_tuple_is_stored_as_the_compiled_kernel_stores_it():
    """The native value written from Python (arrays of 1 to 3 dimensions, nested
    tuples, a held tuple inside) is the compiled _store_tuple's, byte for byte."""
    import numba

    from flexmbs.runtime.tuple_ref import _store_native_value, _store_tuple, _tuple_size
    inner = held_ref((np.zeros(2),))
    for tup in [(np.arange(3.0), (np.ones((2, 3)), np.zeros((2, 2, 4))),
                 np.arange(5, dtype=np.int64)),
                (np.ones((3, 3))[:, :2].copy(), np.zeros(0)),
                (inner, np.ones(5))]:
        ty = numba.typeof(tup)
        fast = np.zeros(_tuple_size(ty), np.uint8)
        slow = fast.copy()
        _store_native_value(tup, ty, fast)
        _store_tuple(tup, slow.ctypes.data)
        np.testing.assert_array_equal(fast, slow)


@jit_entry
def _first_doubled(ref, out):
    """Writes 2 a into out, a the first array of the first of two referenced tuples."""
    first = member_ref(ref, 0)
    for i in range(out.shape[0]):
        out[i] = 2.0 * first.a[i]
        first.b[i] = out[i]


@jit_entry
def _first_of_a_pair_of_refs(args, out):
    _first_doubled(tuple_ref(args), out)


@pytest.mark.skipif(not JIT, reason="numba off")
def test_a_held_namedtuple_reads_as_itself_and_copies_hold_their_own_arrays():
    """A HeldTuple of a namedtuple answers its fields, items, length and iteration;
    a tuple of held tuples reaches kernels as references (member_ref of a reference
    is that reference); a deep copy and a pickled copy store their own arrays, so a
    kernel writing through the copy leaves the original as it was."""
    import copy
    import pickle
    held = held_ref(Pair(np.array([1.0, 2.0]), np.zeros(2)))
    assert held.a is held.tuple.a and held[1] is held.tuple.b and len(held) == 2
    assert [x is y for x, y in zip(held, held.tuple)] == [True, True]
    assert held._fields == ("a", "b")
    out = np.zeros(2)
    _first_of_a_pair_of_refs((held, held_ref((np.zeros(1),))), out)
    np.testing.assert_array_equal(out, [2.0, 4.0])
    np.testing.assert_array_equal(held.b, [2.0, 4.0])
    for twin in (copy.deepcopy(held), pickle.loads(pickle.dumps(held))):
        assert twin.address != held.address and twin.a is not held.a
        twin.a[:] = [5.0, 6.0]
        _first_of_a_pair_of_refs((twin, held_ref((np.zeros(1),))), out)
        np.testing.assert_array_equal(twin.b, [10.0, 12.0])
        np.testing.assert_array_equal(held.b, [2.0, 4.0])


@pytest.mark.skipif(not JIT, reason="numba off")
def test_a_held_tuple_is_typed_as_numba_types_it_whatever_it_was_typed_before():
    """The type of a held tuple is kept per class, dtypes, dimensions, layouts and
    writability of its members (a record's fields too): a tuple that differs in any
    of them gets numba's own type of it, and one that differs only in values or sizes
    gets the kept one."""
    import numba
    base = Pair(np.zeros(3), np.zeros((2, 2)))
    assert held_ref(base).numba_type == numba.typeof(base)
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    square = np.zeros((2, 2))
    others = (Pair(np.zeros(5), np.ones((4, 4))), Pair(np.zeros((3, 2))[:, 0], square),
              Pair(readonly, square), Pair(np.zeros(3, dtype=np.int64), square),
              Pair(np.zeros(3), np.zeros((2, 2, 1))), (np.zeros(3), square),
              Pair(np.zeros(3), 1.5), Pair(np.zeros(3), 7),
              Pair(np.zeros(2, dtype=[("x", "f8"), ("y", "f8")]), square),
              Pair(np.zeros(2, dtype=[("i", "i8"), ("j", "f8")]), square),
              Pair(np.zeros((3, 2), order="F"), square), Pair(np.zeros((3, 4))[:, ::2], square),
              Pair((np.zeros(3), (readonly, 2.5)), square), Pair(np.zeros(3, np.float32), square))
    for other in others:
        assert held_ref(other).numba_type == numba.typeof(other)
