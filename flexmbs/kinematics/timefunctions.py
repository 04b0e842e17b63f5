"""Numba evaluation of the time-function laws packed by
`flexmbs.model.timefunctions.compile_time_functions`."""

import numpy as np

from ..runtime.config import jit

__all__ = ["evaluate_time_function"]

TWO_PI = 2.0 * np.pi


@jit
def _last_at_or_before(tb, t):
    """The largest j with tb[j] <= t (0 if t < tb[0]); tb increasing. O(log n)."""
    lo = 0
    hi = tb.size
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tb[mid] <= t:
            lo = mid
        else:
            hi = mid
    return lo


@jit
def evaluate_time_function(kind, ptr, data, k, t, t_piece, out):
    """out[0:3] = f(t), f'(t), f''(t) of time function k.

    A piecewise law (table, steps, trajectory) evaluates the piece in force at
    `t_piece` (s), extended to t: within an integration segment that ends on a
    breakpoint the law stays one smooth function up to that end, so a step that
    lands on the breakpoint sees the piece before it, and the next segment starts on
    the piece after it (flexmbs.model.timefunctions.time_function_breakpoints).
    t_piece = NaN: the piece in force at t (right-continuous at a breakpoint)."""
    tp = t if np.isnan(t_piece) else t_piece
    p = data[ptr[k]:ptr[k + 1]]
    code = kind[k]
    f = 0.0
    fd = 0.0
    fdd = 0.0
    if code == 0:  # constant
        f = p[0]
    elif code == 1:  # rate
        f = p[0] + p[1] * t
        fd = p[1]
    elif code == 2:  # polynomial, Horner for f, f', f''
        for i in range(p.size - 1, -1, -1):
            fdd = fdd * t + 2.0 * fd
            fd = fd * t + f
            f = f * t + p[i]
    elif code == 3:  # harmonic
        a, w, ph, off = p[0], p[1], p[2], p[3]
        s = np.sin(w * t + ph)
        c = np.cos(w * t + ph)
        f = off + a * s
        fd = a * w * c
        fdd = -a * w * w * s
    elif code == 4:  # spin-up (docs/explanation/benchmark-models.md SPIN)
        w, tt = p[0], p[1]
        if t < tt:
            c = tt / TWO_PI
            arg = TWO_PI * t / tt
            f = (w / tt) * (0.5 * t * t + c * c * (np.cos(arg) - 1.0))
            fd = (w / tt) * (t - c * np.sin(arg))
            fdd = (w / tt) * (1.0 - np.cos(arg))
        else:
            f = w * (t - 0.5 * tt)
            fd = w
    elif code == 5:  # table: [n, breakpoints (n+1), coefficients (n, 4)]
        n = int(p[0])
        tb = p[1:n + 2]
        coef = p[n + 2:]
        if tp < tb[0]:
            f = coef[0]
        elif tp > tb[n]:
            h = tb[n] - tb[n - 1]
            c = coef[4 * (n - 1):4 * n]
            f = c[0] + h * (c[1] + h * (c[2] + h * c[3]))
        else:
            lo = _last_at_or_before(tb[:n], tp)  # the last interval includes its right end
            s = t - tb[lo]
            c = coef[4 * lo:4 * lo + 4]
            f = c[0] + s * (c[1] + s * (c[2] + s * c[3]))
            fd = c[1] + s * (2.0 * c[2] + 3.0 * s * c[3])
            fdd = 2.0 * c[2] + 6.0 * s * c[3]
    elif code == 6:  # steps: [n, times (n), values (n)]; f' = f'' = 0
        n = int(p[0])
        f = p[1 + n + _last_at_or_before(p[1:n + 1], tp)]
    else:  # trajectory: [degree 3 or 5, n, times (n), values (n)]; right-continuous
        n = int(p[1])
        tb = p[2:n + 2]
        vb = p[n + 2:2 * n + 2]
        if tp < tb[0]:
            f = vb[0]
        elif tp >= tb[n - 1]:
            f = vb[n - 1]
        else:
            j = _last_at_or_before(tb, tp)
            h = tb[j + 1] - tb[j]
            dv = vb[j + 1] - vb[j]
            s = (t - tb[j]) / h
            r = 1.0 - s
            if p[0] == 3.0:  # b = 3 s^2 - 2 s^3
                b = s * s * (3.0 - 2.0 * s)
                bd = 6.0 * s * r
                bdd = 6.0 - 12.0 * s
            else:  # b = 10 s^3 - 15 s^4 + 6 s^5
                b = s * s * s * (10.0 + s * (6.0 * s - 15.0))
                bd = 30.0 * s * s * r * r
                bdd = 60.0 * s * r * (1.0 - 2.0 * s)
            f = vb[j] + dv * b
            fd = dv * bd / h
            fdd = dv * bdd / (h * h)
    out[0] = f
    out[1] = fd
    out[2] = fdd
