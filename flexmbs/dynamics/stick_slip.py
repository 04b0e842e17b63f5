"""Stick-slip friction as state events: the switch functions of the joints whose
friction law is "stick-slip" (flexmbs.model.friction), and the discrete state they
set (ws.fric_mode: +1 or -1 sliding that way, 0 stuck; flexmbs.dynamics.friction).

Friction f has one switch function, its meaning set by its mode:

    sliding with sign s:   g_f = s v                  (v the coordinate's rate)
    stuck:                 g_f = F_s - |f_hold|       (f_hold the force that holds it)

A sliding joint's g reaches 0 where it stops; a stuck joint's where the load on it
reaches the static level F_s. At the event (`switched_frictions`) a stopping joint
sticks if the force that would hold it still is at most F_s, else it slides on
the way that force's opposite pushes it; a stuck joint breaks away the same way.
f_hold is the stuck coordinate's row of M* u' - Q* at the accelerations of the
system with that coordinate held (`holding_forces`): a state derivative and a
residual per evaluation, only while some joint is stuck. The decisions at an event
are flexmbs.dynamics.stick_slip_events'.
"""

import numpy as np

from ..runtime.config import jit_entry
from ..runtime.tuple_ref import member_ref
from .system import mass_block_from_ref, residual_from_ref, state_derivative_from_ref

__all__ = ["friction_switch_values", "holding_forces", "coordinate_masses"]


@jit_entry
def holding_forces(t, y, ref, out):
    """ws.fric_hold of the stuck joints at (t, y): the state derivative with them held
    (ws.fric_mode 0) into out, then the residual at it, whose stuck rows record the
    force that holds each one (flexmbs.dynamics.friction.hold_stuck_rows). out (n,)
    the state derivative; ws.stick_scratch[0] holds the residual (n = 2 nq + nw:
    a tree's state, nw its works and electrical states)."""
    ws = member_ref(ref, 1)
    state_derivative_from_ref(t, y, ref, out)
    residual_from_ref(t, y, out, ref, ws.stick_scratch[0])


@jit_entry
def coordinate_masses(t, y, ref, out):
    """out[:nq] = the diagonal of M*(q) (kg or kg m^2) at (t, y)."""
    ws = member_ref(ref, 1)
    nq = ws.mass.shape[0]
    mass_block_from_ref(t, y, ref, ws.mass)
    for k in range(nq):
        out[k] = ws.mass[k, k]


@jit_entry
def friction_switch_values(t, y, ref, out):
    """out[k] = the switch function of the k-th stick-slip friction (module text) at
    (t, y), y = [q, u, ...]; 1 for a joint outside a run (mode NaN)."""
    m, ws = member_ref(ref, 0), member_ref(ref, 1)
    nq = ws.mass.shape[0]
    stuck = False
    for f in range(m.fric_coord.shape[0]):
        if m.fric_law[f] == 1 and ws.fric_mode[f] == 0.0:
            stuck = True
    if stuck:
        holding_forces(t, y, ref, ws.stick_scratch[1])
    k = 0
    for f in range(m.fric_coord.shape[0]):
        if m.fric_law[f] != 1:
            continue
        mode = ws.fric_mode[f]
        if np.isnan(mode):
            out[k] = 1.0
        elif mode == 0.0:
            out[k] = m.fric_data[f, 1] - abs(ws.fric_hold[f])
        else:
            out[k] = mode * y[nq + m.coord_qindex[m.fric_coord[f]]]
        k += 1
