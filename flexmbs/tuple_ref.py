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
(numba's `ir_utils.alias_func_extensions`) as aliasing their first argument. `tuple_ref` is an intrinsic, lowered into its caller, so the tuple lives in
the caller's frame.

In Python (NUMBA_DISABLE_JIT=1) `tuple_ref` returns the tuple itself.
"""

from numba.core import cgutils, config, ir_utils, types
from numba.core.datamodel import models
from numba.core.extending import intrinsic, register_model
from numba.core.imputils import impl_ret_borrowed, lower_builtin, lower_getattr_generic
from numba.core.typing.templates import (AbstractTemplate, AttributeTemplate, infer,
                                         infer_getattr, signature)

__all__ = ["TupleRef", "member_ref", "tuple_ref"]


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


tuple_ref = _python_tuple_ref if config.DISABLE_JIT else _tuple_ref
tuple_ref.__doc__ = """tuple_ref(tup): a reference to the tuple `tup` (or `tup` itself if
it is one) for the callees of the calling kernel; in Python, `tup`."""


@intrinsic
def _member_ref(typingctx, ref, idx):
    if not (isinstance(ref, TupleRef) and isinstance(idx, types.IntegerLiteral)):
        return None
    members = ref.dtype.types
    i = idx.literal_value
    if not (-len(members) <= i < len(members) and isinstance(members[i], types.BaseTuple)):
        return None
    i %= len(members)

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


member_ref = _python_member_ref if config.DISABLE_JIT else _member_ref
member_ref.__doc__ = """member_ref(ref, i): a reference to member i (a constant; the member
a tuple) of the tuple that `ref` references; in Python, `ref[i]`."""


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
