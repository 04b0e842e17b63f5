"""The outputs of a batch of rows (energies and sensor values) through the output
kernels' compiled functions, and with a run's sampled controllers, the outputs each
held at its row's time."""

import numpy as np

from ..dynamics.outputs import (
    has_reaction_sensors,
    kinematic_outputs,
    output_quantities,
    reaction_outputs,
)
from ..solvers.typed_call import TypedCall

__all__ = ["RowOutputs", "sampled_output_quantities"]


class RowOutputs:
    """output_quantities(m, ws, t, y, e, sv) for one model, called per sample or per
    held value of a sampled run: through the kernels' compiled functions for the
    types of the first call (flexmbs.solvers.typed_call), without the dispatcher's
    look at the model's arrays, when the arrays are C-contiguous float64 (else
    output_quantities)."""

    def __init__(self, m):
        self._kinematic = TypedCall(kinematic_outputs)
        self._reaction = TypedCall(reaction_outputs) if has_reaction_sensors(m) else None

    def __call__(self, m, ws, t, y, e, sv):
        if not all(a.flags.c_contiguous and a.dtype == np.float64 for a in (t, y, e, sv)):
            output_quantities(m, ws, t, y, e, sv)
            return
        self._kinematic(m, ws, t, y, e, sv)
        if self._reaction is not None:
            self._reaction(m, ws, t, y, sv)


def sampled_output_quantities(cm, ws, sampler, t, y, e, sv):
    """output_quantities for rows at times t, each with the sampled controllers'
    outputs in force at its time (sampler.history), the workspace's restored
    after."""
    t = np.ascontiguousarray(t)
    y = np.ascontiguousarray(y)
    if sampler is None:
        output_quantities(cm.arrays, ws, t, y, e, sv)
        return
    now = ws.ctrl_held.copy()
    which = sampler.held_at(t)
    start = 0
    while start < len(t):
        stop = start + 1
        while stop < len(t) and which[stop] == which[start]:
            stop += 1
        ws.ctrl_held[:] = sampler.history_v[max(which[start], 0)]
        sampler.row_outputs(
            cm.arrays, ws, t[start:stop], y[start:stop], e[start:stop], sv[start:stop]
        )
        start = stop
    ws.ctrl_held[:] = now
    sampler.forget_before(t[-1])
