"""Which force element a failed run's last states point to: a user law whose output is
not finite there, or a spring whose markers have come together (its force has no
direction). The integrators see only a residual that is not finite or a Newton
iteration that does not converge; this names the element, for the run's message.

The states looked at are the last accepted one, the state where the right-hand side
was not finite (scipy's methods say it), and, where the integrator gives its
derivative and the time of the failed step, the state extrapolated to that time
(where the failing Newton iteration was).
"""

import numpy as np

from ..dynamics import api
from ..model.initial_state import SPRING_LENGTH_MIN

__all__ = ["failing_force_elements", "failure_states"]


def failure_states(integrator):
    """[(t, y)]: the integrator's last accepted state; the state its right-hand side
    was not finite at, when it says (scipy's methods); that state extrapolated
    linearly to the time of its failed step, when it gives both (bdf, galpha)."""
    t, y = float(integrator.t), np.asarray(integrator.y, dtype=float)
    states = [(t, y)]
    if getattr(integrator, "failed_state", None) is not None:
        states.append(integrator.failed_state)
    driver = getattr(integrator, "driver", None)
    t_fail = getattr(driver, "t_fail", None)
    if driver is not None and t_fail is not None and t_fail > t:
        states.append((t_fail, y + (t_fail - t) * driver.yp))
    return states


def failing_force_elements(cm, states):
    """Text naming the user laws with an output that is not finite, and the springs
    shorter than SPRING_LENGTH_MIN, at any of `states` [(t, y)] of the compiled model
    `cm` ("" when none): '; at t = 0.31 s the user law "stop" gives a force that is
    not finite'."""
    names = {name: k for k, name in enumerate(cm.coordinate_names)}
    for t, y in states:
        if not np.all(np.isfinite(y)):
            continue  # every element would look broken at a state that is not finite
        q, u = y[: cm.nq], y[cm.nq : 2 * cm.nq]
        found = [
            f'the user law "{law.name}" gives a force that is not finite'
            for law in cm.model.user_laws.values()
            if law.law is not None and not _law_output_finite(law, names, t, q, u)
        ]
        if cm.model.springs:
            pos = api.marker_frames(cm, q)[0]
            m = cm.arrays
            for s, name in enumerate(cm.model.springs):
                length = np.linalg.norm(pos[m.spring_marker[s, 1]] - pos[m.spring_marker[s, 0]])
                if not length >= SPRING_LENGTH_MIN:
                    found.append(
                        f'the spring "{name}" has its markers {length:.3g} m apart '
                        "(its force has no direction)"
                    )
        if found:
            return f"; at t = {t:.6g} s " + " and ".join(found)
    return ""


def _law_output_finite(law, coordinate_index, t, q, u):
    """True when the law's Python function gives finite values at (t, q, u), called
    as the kernels call it (params, then the q indices of its read_coordinates)."""
    params = np.concatenate(
        [
            np.asarray(law.params, dtype=float),
            [float(coordinate_index[c]) for c in law.read_coordinates],
        ]
    )
    out = np.zeros(1 if law.kind == "joint" else 6)
    try:
        with np.errstate(all="ignore"):
            law.law.py_func(t, q.copy(), u.copy(), params, out)
    except (ArithmeticError, ValueError):  # Python raises where the compiled law gives inf or nan
        return False
    return bool(np.all(np.isfinite(out)))
