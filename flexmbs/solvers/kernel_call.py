"""Compiled kernels called from Python per step (scipy's integrators, IDA) at the
kernel's own cost.

Through numba's dispatcher, a kernel that takes the model and workspace tuples (m, ws)
converts their ~150 arrays on every call: about 18 us, 25 times the residual of a
2-body chain and 3 times that of a 32-body one. KernelCall holds (m, ws) by reference
(flexmbs.runtime.tuple_ref.held_ref) and calls the compiled function for fixed argument types
(flexmbs.runtime.tuple_ref.entry_point), copying its array arguments into float64 buffers
first so that those types always hold.
"""

import numpy as np

from ..runtime.tuple_ref import entry_point, held_ref

__all__ = ["KernelCall"]


class KernelCall:
    """call(t, a_1, ..., a_k) -> out: `kernel`(t, a_1, ..., a_k, ref, out) with ref a
    reference to `args` (the (m, ws) tuples) and a_i, out arrays of size n; out is this
    object's buffer, overwritten by the next call. Resolved (compiled, or loaded from
    the cache) at the first call."""

    def __init__(self, kernel, args, n, narrays):
        self.kernel = kernel
        self.ref = held_ref(args)
        self._buffers = [np.zeros(n) for _ in range(narrays)]
        self.out = np.zeros(n)
        self._call = None

    def __call__(self, t, *arrays):
        for buffer, a in zip(self._buffers, arrays):
            buffer[:] = a
        if self._call is None:
            self._call = entry_point(self.kernel, 0.0, *self._buffers, self.ref,
                                     self.out)
        self._call(float(t), *self._buffers, self.ref, self.out)
        return self.out
