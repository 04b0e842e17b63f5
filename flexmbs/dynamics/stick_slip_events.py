"""The decisions of stick-slip friction at its state events (in Python, between the
integrator's segments; the switch functions are flexmbs.dynamics.stick_slip's):
which joints stick, which slide and which way, and the modes at the start of a run.
"""

import numpy as np

from .switches import switch_count

__all__ = ["stick_slip_frictions", "switched_frictions", "initial_friction_modes",
           "switch_blocks", "STUCK", "BREAKAWAY_MARGIN"]

STUCK = 0.0
BREAKAWAY_MARGIN = np.finfo(float).tiny
"""The switch value a joint that starts to slide is given (its g = s v is 0 at the
start): positive, so that a rate turning back at once is an event too."""


def switch_blocks(m):
    """{kind: slice of the model's switch functions}: "drives" (the actuators' torque
    limits, the DC motors' limits and the joint stops, flexmbs.dynamics.switches'
    blocks), then "frictions" (one per stick-slip friction), the kinds a model has
    (flexmbs.dynamics.model_switches)."""
    ndrive = switch_count(m)
    blocks, start = {}, 0
    for kind, size in (("drives", ndrive), ("frictions", len(stick_slip_frictions(m)))):
        if size:
            blocks[kind] = slice(start, start + size)
            start += size
    return blocks


def stick_slip_frictions(m):
    """The indices of the frictions whose law is stick-slip (their switch functions'
    order)."""
    return np.flatnonzero(np.asarray(m.fric_law) == 1)


def switched_frictions(m, ws, t, y, g, crossed, masses_at, holding_at):
    """Set ws.fric_mode of the stick-slip frictions whose switch functions g (their
    block, values just after the crossing) crossed (`crossed`, a mask): a joint
    that stops sticks if |f_hold| <= F_s, else slides the way -f_hold pushes it; a
    stuck joint whose load reached F_s breaks away that way. A joint that sticks has
    its rate set to 0 in y and its row's scale m_c set (ws.fric_scale). g is set, in
    place, to each changed function's value in its new mode. masses_at(t, y) -> the
    diagonal of M*; holding_at(t, y) fills ws.fric_hold (the kernels above)."""
    nq = len(ws.mass)
    for k, f in enumerate(stick_slip_frictions(m)):
        if not crossed[k]:
            continue
        qc = int(m.coord_qindex[m.fric_coord[f]])
        static = float(m.fric_data[f, 1])
        if ws.fric_mode[f] != STUCK:  # it stopped: try it stuck
            ws.fric_scale[f] = masses_at(t, y)[qc]
            was = ws.fric_mode[f]
            ws.fric_mode[f] = STUCK
            rate = y[nq + qc]
            y[nq + qc] = 0.0
            holding_at(t, y)
            hold = float(ws.fric_hold[f])
            if abs(hold) <= static:
                g[k] = static - abs(hold)
                continue
            ws.fric_mode[f] = -np.sign(hold) if hold != 0.0 else was
            y[nq + qc] = rate
        else:
            holding_at(t, y)
            hold = float(ws.fric_hold[f])
            ws.fric_mode[f] = -np.sign(hold) if hold != 0.0 else 1.0
        g[k] = BREAKAWAY_MARGIN


def initial_friction_modes(m, ws, y, masses_at, holding_at, t):
    """ws.fric_mode at the start of a run: a moving joint slides with the sign of
    its rate; the joints at rest start stuck, and while one of them is loaded past
    its static level F_s, the most overloaded breaks away the way its load pushes
    it (the others' holding forces then change), until every stuck joint holds."""
    nq = len(ws.mass)
    fr = stick_slip_frictions(m)
    for f in fr:
        qc = int(m.coord_qindex[m.fric_coord[f]])
        v = y[nq + qc]
        ws.fric_mode[f] = np.sign(v) if v != 0.0 else STUCK
        if v == 0.0:
            ws.fric_scale[f] = masses_at(t, y)[qc]
    for _ in range(len(fr)):
        stuck = [f for f in fr if ws.fric_mode[f] == STUCK]
        if not stuck:
            return
        holding_at(t, y)
        over = [abs(ws.fric_hold[f]) - m.fric_data[f, 1] for f in stuck]
        worst = int(np.argmax(over))
        if over[worst] <= 0.0:
            return
        f = stuck[worst]
        ws.fric_mode[f] = -np.sign(ws.fric_hold[f])
