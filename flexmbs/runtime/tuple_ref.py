"""A tuple handed to compiled kernels by reference: one pointer instead of its members.

numba passes a tuple argument member by member, and an array as its 7 to 9 fields, so
a call that passes the model and workspace tuples (m, ws), about 150 arrays, pushes
some 1400 words onto the stack. The BDF step loop makes such calls several times a
step (the step, the Newton iteration, the residual through its function pointer and
the residual's own wrapper): about a microsecond a step, as much as the residual of a
2-body chain. `tuple_ref(args)` stores the tuple once in the caller's stack frame and
returns a `TupleRef`, a pointer to it; `ref[i]` (i a constant) reads member i and
`ref.name` a namedtuple's field; `tuple_ref(ref)` is `ref`. The reference is valid
while the kernel that made it runs, so it is made in the kernel the integrator
enters (bdf_advance) and passed down.

`member_ref(ref, i)` is a reference to member i, itself a tuple, without reading it.
Reading a tuple member, `ref[i]`, loads all of its fields where it is read: for the
model and workspace that is some 700 words, which a large kernel keeps in its stack
frame for the whole call (about 0.3 us a residual). Through `member_ref` every field
is read where it is used (`ws.rot` loads the 5 to 7 words of one array).

`ref[i]` is typed and lowered as numba's own static_getitem, and `ref.name` as a
getattr, so that numba's alias analysis knows the member is part of the tuple: read
through an inlined overload instead, writes into its arrays were removed as dead
code. For the same reason `tuple_ref` and `member_ref` are entered in that analysis
(numba's `ir_utils.alias_func_extensions`) as aliasing their first argument. `tuple_ref` is
an intrinsic, lowered into its caller, so the tuple lives in the caller's frame.

From Python a kernel would pay for the same tuples in another way: numba's
dispatcher converts each of the ~150 arrays on every call, about 18 us, which is 25
times the residual of a 2-body chain, and numba builds that conversion into the
kernel's Python entry when it compiles it (about 5 s a kernel). `held_ref(tup)`
gives instead a `HeldTuple`: the tuple stored once in a buffer, typed as its
`TupleRef` and passed as the buffer's address; in Python it reads as the tuple. The
model's arrays and every workspace are HeldTuples (flexmbs.model.compiled), so every
kernel is compiled once, for references, whether Python or another kernel calls it.
The integrators that call kernels from Python (scipy's, IDA) also call the compiled
function `entry_point(kernel, *args)` directly, without the dispatcher's type
resolution (about 4 us for a `HeldTuple`). A call then costs what the kernel costs.

In Python (NUMBA_DISABLE_JIT=1) `tuple_ref` and `held_ref` return the tuple itself
and `entry_point` the kernel.
"""

import numba
import numpy as np
from numba.core import cgutils, config, ir_utils, types
from numba.core.datamodel import models
from numba.core.extending import NativeValue, intrinsic, register_model, typeof_impl, unbox
from numba.core.imputils import impl_ret_borrowed, lower_builtin, lower_getattr_generic
from numba.core.typing.templates import (
    AbstractTemplate,
    AttributeTemplate,
    infer,
    infer_getattr,
    signature,
)
from numba.np import numpy_support

__all__ = ["HeldTuple", "TupleRef", "entry_point", "held_ref", "member_ref",
           "tuple_ref"]


class TupleRef(types.Type):
    """numba type of a pointer to a tuple of type `tuple_type` (`dtype`)."""

    def __init__(self, tuple_type):
        self.dtype = tuple_type
        super().__init__(name=f"TupleRef({tuple_type})")


@register_model(TupleRef)
class _TupleRefModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        pointee = dmm.lookup(fe_type.dtype).get_value_type()
        super().__init__(dmm, fe_type, pointee.as_pointer())


@intrinsic
def _tuple_ref(typingctx, tup):
    if isinstance(tup, TupleRef):
        return tup(tup), lambda context, builder, sig, args: args[0]
    if not isinstance(tup, types.BaseTuple):
        return None

    def codegen(context, builder, signature, args):
        ptr = cgutils.alloca_once(builder, context.get_value_type(tup))
        builder.store(args[0], ptr)
        return ptr
    return TupleRef(tup)(tup), codegen


def _python_tuple_ref(tup):
    return tup


tuple_ref = _python_tuple_ref if config.DISABLE_JIT else _tuple_ref  # type: ignore[attr-defined]
tuple_ref.__doc__ = """tuple_ref(tup): a reference to the tuple `tup` (or `tup` itself if
it is one) for the callees of the calling kernel; in Python, `tup`."""


@intrinsic
def _member_ref(typingctx, ref, idx):
    if not (isinstance(ref, TupleRef) and isinstance(idx, types.IntegerLiteral)):
        return None
    members = ref.dtype.types
    i = idx.literal_value
    if not (-len(members) <= i < len(members)
            and isinstance(members[i], (types.BaseTuple, TupleRef))):
        return None
    i %= len(members)
    if isinstance(members[i], TupleRef):
        def load(context, builder, signature, args):
            return builder.load(cgutils.gep_inbounds(builder, args[0], 0, i))
        return members[i](ref, idx), load

    def codegen(context, builder, signature, args):
        return cgutils.gep_inbounds(builder, args[0], 0, i)
    return TupleRef(members[i])(ref, idx), codegen


def _aliases_its_first_argument(lhs, args, alias_map, arg_aliases):
    """numba's dead-code elimination (run after it inlines an overload) drops writes
    into arrays that it cannot trace to a live variable: a reference aliases the tuple
    it was made from, and a member's reference the tuple's reference (as ref[i] and
    ref.name do)."""
    ir_utils._add_alias(lhs, args[0].name, alias_map, arg_aliases)


for _name in ("_tuple_ref", "_member_ref"):
    ir_utils.alias_func_extensions[(_name, __name__)] = _aliases_its_first_argument


def _python_member_ref(ref, i):
    return ref[i]


member_ref = _python_member_ref if config.DISABLE_JIT else _member_ref  # type: ignore[attr-defined]
member_ref.__doc__ = """member_ref(ref, i): a reference to member i (a constant; the member
a tuple, or a reference itself, which is then returned) of the tuple that `ref`
references; in Python, `ref[i]`."""


@infer
class _StaticGetItem(AbstractTemplate):
    """ref[i] for a constant i, typed as tuple[i] (numba's StaticGetItemTuple)."""
    key = "static_getitem"

    def generic(self, args, kws):
        ref, idx = args
        if not (isinstance(ref, TupleRef) and isinstance(idx, int)):
            return None
        members = ref.dtype.types
        if not -len(members) <= idx < len(members):
            return None
        return signature(members[idx], *args)


def _load_member(context, builder, ref_type, ref, i):
    """Member i of the referenced tuple (a borrowed reference, counted if NRT is on)."""
    value = builder.load(cgutils.gep_inbounds(builder, ref, 0, i))
    return impl_ret_borrowed(context, builder, ref_type.dtype.types[i], value)


@lower_builtin("static_getitem", TupleRef, types.IntegerLiteral)
def _static_getitem(context, builder, sig, args):
    ref, idx = args
    return _load_member(context, builder, sig.args[0], ref,
                        idx % len(sig.args[0].dtype.types))


@infer_getattr
class _NamedTupleRefAttributes(AttributeTemplate):
    """ref.name for a reference to a namedtuple, typed as the field."""
    key = TupleRef

    def generic_resolve(self, ref, attr):
        tup = ref.dtype
        if isinstance(tup, types.BaseNamedTuple) and attr in tup.fields:
            return tup.types[tup.fields.index(attr)]
        return None


@lower_getattr_generic(TupleRef)
def _namedtuple_ref_getattr(context, builder, typ, value, attr):
    return _load_member(context, builder, typ, value, typ.dtype.fields.index(attr))


@intrinsic
def _store_at(typingctx, tup, address):
    def codegen(context, builder, sig, args):
        pointer_type = context.get_value_type(sig.args[0]).as_pointer()
        builder.store(args[0], builder.inttoptr(args[1], pointer_type))
        return context.get_dummy_value()
    return types.void(tup, address), codegen


def _compiled_without_counting(fn):
    from .config import cached  # flexmbs.runtime.config; `config` here is numba's
    return cached(numba.njit(nogil=True, _nrt=False)(fn))


def _tuple_size(tuple_type):
    """Bytes of the native value of a tuple of numba type `tuple_type`."""
    from numba.core.registry import cpu_target
    context = cpu_target.target_context
    return context.get_abi_sizeof(context.get_value_type(tuple_type))


@_compiled_without_counting
def _store_tuple(tup, address):
    """Writes the tuple's native value at `address`. Compiled without reference
    counting, its arrays are stored without a meminfo: they borrow the numpy arrays'
    memory, which the HeldTuple keeps alive."""
    _store_at(tup, address)


def _native_words(value, value_type, words):
    """Appends to `words` the 8-byte words of numba's native value of `value` (numba
    type `value_type`) as `_store_tuple` writes it: an array as (meminfo = 0, parent
    = the array object, nitems, itemsize, data, shape, strides), a reference as its
    address, a tuple as its members in order. False when a member is of another
    type (its native value may hold padding)."""
    if isinstance(value_type, types.Array):
        words += [0, id(value), value.size, value.itemsize, value.ctypes.data,
                  *value.shape, *value.strides]
        return True
    if isinstance(value_type, TupleRef):
        words.append(value.address)
        return True
    if isinstance(value_type, types.FunctionType) and hasattr(value, "__wrapper_address__"):
        # (c_addr, py_addr, jit_addr) as numba's unboxing of the function writes them
        # for an object of the wrapper-address protocol (its jit address is 0)
        words += [value.__wrapper_address__(), id(value), 0]
        return True
    if isinstance(value_type, types.BaseTuple):
        return all(_native_words(v, t, words) for v, t in zip(value, value_type.types))
    return False


def _store_native_value(tup, tuple_type, buffer):
    """Writes the native value of the tuple `tup` into `buffer` (uint8, of its size):
    from Python when its members are arrays, references and such tuples (no
    compilation), else by the compiled `_store_tuple`."""
    words = []
    if _native_words(tup, tuple_type, words) and 8 * len(words) == buffer.size:
        buffer.view(np.int64)[:] = words
    else:
        _store_tuple(tup, buffer.ctypes.data)


class HeldTuple:
    """A tuple stored once for calls of compiled kernels from Python: numba types it as
    TupleRef(type of the tuple) and passes its address, so that a call converts no
    member. Holds the tuple, whose arrays the stored value borrows: valid while the
    HeldTuple lives and the tuple's arrays are the ones it was made with (arrays are
    written in place, never replaced). The cache index of the kernels that store it
    pickles the tuple's type: hold only tuples of arrays and of flexmbs' own
    namedtuples, whose classes every process can import."""

    def __init__(self, tup, numba_type=None):
        self.tuple = tup
        self._given_type = numba_type
        self.numba_type = _numba_type(tup) if numba_type is None else numba_type
        self._buffer = np.zeros(_tuple_size(self.numba_type), dtype=np.uint8)
        self.address = self._buffer.ctypes.data
        _store_native_value(tup, self.numba_type, self._buffer)

    def __getattr__(self, name):
        if name == "tuple":   # not yet set (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.tuple, name)

    def __getitem__(self, i):
        return self.tuple[i]

    def __iter__(self):
        return iter(self.tuple)

    def __len__(self):
        return len(self.tuple)

    def __reduce__(self):
        """Copies and pickles store the (copied) tuple again, in a buffer of their own."""
        return (HeldTuple, (self.tuple, self._given_type))


_TYPES: dict = {}  # numba types of held tuples by _type_key


def _type_key(value):
    """What numba's type of `value` depends on, for tuples (and namedtuples) of arrays
    and floats: each array's dtype (fields included), dimensions, layout and
    writability, each tuple's
    class; None for anything else (an int's type can depend on its value)."""
    if type(value) is np.ndarray:
        return (value.dtype, value.ndim, value.flags.c_contiguous,
                value.flags.f_contiguous, value.flags.writeable, value.flags.aligned)
    if isinstance(value, tuple):
        keys = tuple(_type_key(v) for v in value)
        return None if None in keys else (type(value), keys)
    if type(value) is float:
        return float
    return None


def _numba_type(tup):
    """numba.typeof(tup), computed once for each _type_key: typing a tuple of some
    hundred arrays takes milliseconds, and a workspace is made for every call of a
    kernel from Python that needs one."""
    key = _type_key(tup)
    if key is None:
        return numba.typeof(tup)
    found = _TYPES.get(key)
    if found is None:
        try:
            found = _type_of_key(key)
        except Exception:  # a dtype numba cannot type: numba.typeof says so
            found = numba.typeof(tup)
        _TYPES[key] = found
    return found


def _type_of_key(key):
    """The numba type numba.typeof gives a value of _type_key `key`, made from the
    key as numba's typeof makes it (an array: types.Array of its dtype, dimensions,
    layout C, F or A and writability; a tuple: BaseTuple.from_types of its members'
    types and its class; a float: float64), without numba's dispatch on each member."""
    if key is float:
        return types.float64
    head, rest = key[0], key[1:]
    if isinstance(head, np.dtype):
        ndim, c_contiguous, f_contiguous, writeable, _ = rest
        layout = "C" if c_contiguous else ("F" if f_contiguous else "A")
        return types.Array(numpy_support.from_dtype(head), ndim, layout,
                           readonly=not writeable)
    return types.BaseTuple.from_types([_type_of_key(k) for k in rest[0]], head)


@typeof_impl.register(HeldTuple)
def _typeof_held_tuple(val, c):
    return TupleRef(val.numba_type)


@unbox(TupleRef)
def _unbox_held_tuple(typ, obj, c):
    address = c.pyapi.object_getattr_string(obj, "address")
    pointer = c.pyapi.long_as_voidptr(address)
    c.pyapi.decref(address)
    return NativeValue(c.builder.bitcast(pointer, c.context.get_value_type(typ)),
                       is_error=c.pyapi.c_api_error())


def held_ref(tup, numba_type=None):
    """A HeldTuple of `tup` (in Python, `tup` itself); `numba_type`: its numba type,
    for members numba cannot type from their value (first-class functions of the
    wrapper-address protocol, flexmbs.solvers.bdf)."""
    return tup if config.DISABLE_JIT else HeldTuple(tup, numba_type)


def entry_point(kernel, *args):
    """The compiled function of the numba kernel `kernel` for the types of `args`
    (compiled or loaded from the cache now), to call as `kernel` without its
    dispatcher: no conversion of a HeldTuple's members and no type resolution. It
    checks no type: every later call must pass arguments of exactly these types
    (float64 C-contiguous arrays of the same dimensions, floats, HeldTuples of the
    same tuple type). In Python, `kernel`."""
    if config.DISABLE_JIT:
        return kernel
    return kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
