"""The side of a joint stop whose coordinate is exactly on its limit where a segment
starts (pure Python, at the integrators' restarts; flexmbs.dynamics.stops).

The stops' switch functions, upper - x and x - lower (flexmbs.dynamics.switches), are
positive while the stop is free, and the integrators count a crossing when one
reaches zero, not when one leaves it (flexmbs.solvers.events). A run that starts on a
limit (a robot description's zero pose at the end of a joint's range), or a crossing
located exactly on it, has g = 0 there: by its sign alone the stop is free, and a
coordinate that then moves into it never crosses, so the stop does not push back
while its spring's energy k d^2 / 2 is counted in V_s (by value, at the outputs), and
the balance breaks by that energy. Here the side is that of the motion instead, and
g stays zero: leaving zero is no crossing, so the first steps, which may move the
coordinate by less than its rounding, do not count as one either way.
"""

import numpy as np

__all__ = ["stops_on_their_limits"]


def stops_on_their_limits(m, ws, y, g, accelerations):
    """Set ws.stop_branch of each stop whose switch function is zero in g: touched
    (+1 at the upper limit, -1 at the lower) where the coordinate heads into the stop,
    by its rate x' (rad/s or m/s, from the state y = [q, u, ...]) or, at rest, by its
    acceleration x'' with the stop free (`accelerations`(): the state's derivative y'
    under the branches as they are, called once at most); free otherwise.

    g: the stops' block of switch functions (2 per stop, upper - x then x - lower).
    Returns the indices into g that are zero."""
    zero = np.flatnonzero(np.asarray(g) == 0.0)
    nq = ws.mass.shape[0]
    yp = None
    for i in zero:
        s = i // 2
        side = 1.0 if i % 2 == 0 else -1.0
        col = nq + m.coord_qindex[m.stop_coord[s]]
        heading = side * y[col]
        if heading == 0.0:
            if yp is None:
                yp = accelerations()
            heading = side * yp[col]
        if heading > 0.0:
            ws.stop_branch[s] = side
    return zero
