"""A compiled function called from Python many times with arguments of the same
types, without numba's dispatcher: finding the types of a model's arrays (tuples of
some hundred arrays) costs the dispatcher about a millisecond at every call, more
than a step of the integrator; a run stepped from Python (flexmbs.Simulator) pays
it once."""

from ..runtime.tuple_ref import entry_point

__all__ = ["TypedCall"]


class TypedCall:
    """`fn` (a numba kernel) called through its compiled function for the types of
    the arguments of its first call (flexmbs.runtime.tuple_ref.entry_point): every later
    call must pass arguments of exactly those types (C-contiguous float64 arrays of
    the same dimensions, floats, the same tuples)."""

    def __init__(self, fn):
        self.fn = fn
        self._entry = None

    def __call__(self, *args):
        if self._entry is None:
            self._entry = entry_point(self.fn, *args)
        return self._entry(*args)
