"""All switch functions of a model, a block per kind of element (numba): the
actuators' torque limits, the DC motors' limits and the joint stops
(flexmbs.dynamics.switches), then the stick-slip joint frictions
(flexmbs.dynamics.stick_slip). Each block starts where the one before it
ends; flexmbs.dynamics.stick_slip_events.switch_blocks says where."""

from ..runtime.config import jit_entry, jit_inline
from ..runtime.tuple_ref import member_ref, tuple_ref
from .stick_slip import friction_switch_values
from .switches import motor_switch_count, switch_values, torque_switch_count

__all__ = ["dae_model_switch_values"]


@jit_inline
def _drive_block(m):
    """The size of flexmbs.dynamics.switches' blocks: the torque limits, the DC
    motors' limits and the joint stops (2 per stop)."""
    return torque_switch_count(m) + motor_switch_count(m) + 2 * m.stop_coord.shape[0]


@jit_inline
def _friction_block(m):
    """The size of the frictions' block: one per stick-slip friction."""
    n = 0
    for f in range(m.fric_law.shape[0]):
        if m.fric_law[f] == 1:
            n += 1
    return n


@jit_entry
def dae_model_switch_values(t, y, args, out):
    """out = every switch function of the model at (t, y), in blocks (module text);
    args = (m, ws) or a reference to it."""
    ref = tuple_ref(args)
    m, ws = member_ref(ref, 0), member_ref(ref, 1)
    na = _drive_block(m)
    if na > 0:
        switch_values(m, ws, t, y, out[:na])
    nf = _friction_block(m)
    if nf > 0:
        friction_switch_values(t, y, ref, out[na:na + nf])
