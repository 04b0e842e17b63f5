"""The side of a joint stop whose coordinate is exactly on its limit where a segment
starts (pure Python, at the integrators' restarts; flexmbs.dynamics.stops).

The stops' switch functions, upper - x and x - lower (flexmbs.dynamics.switches), are
positive while the stop is free, and the integrators count a crossing when one
reaches zero, not when one leaves it (flexmbs.solvers.events). A run that starts on a
limit (a robot description's zero pose at the end of a joint's range), or a crossing
located exactly on it, has g = 0 there: by its sign alone the stop is free, and a
coordinate that then moves into it never crosses, so the stop does not push back
while its spring's energy k d^2 / 2 is counted in V_s (by value, at the outputs), and
the balance breaks by that energy. Here the side is that of the motion instead.
"""

import numpy as np

__all__ = ["stops_on_their_limits", "TINY"]

TINY = float(np.finfo(float).tiny)
"""A switch function's value just off zero, on the side its branch holds."""


def stops_on_their_limits(m, ws, y, g, accelerations):
    """Set the side of each stop whose switch function is zero in g.

    The coordinate heads into the stop by its rate x' (rad/s or m/s, from the state
    y = [q, u, ...]) or, at rest, by its acceleration x'' with the stop free
    (`accelerations`(): the state's derivative y' under the branches as they are,
    called once at most). Heading in: touched (ws.stop_branch[s] = +1 at the upper
    limit, -1 at the lower), and g = -TINY, so that leaving again is a crossing;
    heading away: free, and g = +TINY, so that a return is one. At rest with no
    acceleration the stop stays free with g = 0.

    g: the stops' block of switch functions (2 per stop, upper - x then x - lower),
    rewritten in place. Returns the indices into g that were zero."""
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
            g[i] = -TINY
        elif heading < 0.0:
            g[i] = TINY
    return zero
