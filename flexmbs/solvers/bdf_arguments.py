"""The arguments of the BDF and generalized-alpha drivers (flexmbs.solvers.bdf.BDF),
checked before the state is made: each function raises ValueError naming the
argument and what was expected, or returns it in the form the state takes."""

import numpy as np

from . import bdf_kernels as _k

__all__ = ["is_jitted", "check_functions", "checked_columns", "checked_span",
           "checked_tolerance", "checked_masks", "checked_quadrature", "checked_second_order_count",
           "checked_steps", "checked_layout"]

MAX_ORDER = _k.MAXORD


def is_jitted(fn):
    """True for a numba dispatcher (it compiles and holds its Python function)."""
    return hasattr(fn, "compile") and hasattr(fn, "py_func")


def check_functions(residual, args, jacobian, mass, switches, nswitch, jit=True):
    """ValueError unless the functions are numba-jitted (when `jit`: numba compiles),
    nswitch counts the switch functions and args is a tuple."""
    if jit and not is_jitted(residual):
        raise ValueError("residual must be a numba-jitted function "
                         "(numba.njit or flexmbs.runtime.config.jit)")
    if jacobian is not None and jit and not is_jitted(jacobian):
        raise ValueError("jacobian must be None or a numba-jitted function")
    if mass is not None:
        if jit and not is_jitted(mass):
            raise ValueError("mass must be None or a numba-jitted function")
    if switches is not None and jit and not is_jitted(switches):
        raise ValueError("switches must be None or a numba-jitted function")
    if int(nswitch) != nswitch or nswitch < 0 or (nswitch and switches is None):
        raise ValueError(f"nswitch must be an integer >= 0 (> 0 with switches), "
                         f"got {nswitch}")
    if not isinstance(args, tuple):
        raise ValueError(f"args must be a tuple, got {type(args).__name__}")


def checked_columns(n, jacobian, jacobian_columns, mass, second_order,
                     elastic_columns):
    """(the hook's column mask or None, the elastic columns or None when they
    flag none), checked against n unknowns."""
    jcol = None
    if jacobian_columns is not None:
        if jacobian is None:
            raise ValueError("jacobian_columns needs a jacobian hook")
        jcol = np.asarray(jacobian_columns)
        if jcol.shape != (n,) or jcol.dtype.kind not in "biu":
            raise ValueError(f"jacobian_columns must be a bool/int mask of "
                             f"{n} values, got shape {jcol.shape}")
    if elastic_columns is not None:
        ecol = np.asarray(elastic_columns)
        if mass is None or not second_order:
            raise ValueError("elastic_columns needs a mass hook and second_order")
        if ecol.shape != (n,) or ecol.dtype.kind not in "biu" or \
                np.any(ecol[:second_order]):
            raise ValueError(f"elastic_columns must be a bool/int mask of "
                             f"{n} values, none of the positions")
        if not np.any(ecol):
            elastic_columns = None
    return jcol, elastic_columns


def checked_span(t0, t_end, y0, yp0):
    """(t0, t_end, y0, y'0) as floats and float arrays, finite, t_end after t0."""
    t0 = float(t0)
    t_end = float(t_end)
    if not np.isfinite(t0):
        raise ValueError(f"t0 must be finite, got {t0}")
    if not (np.isfinite(t_end) and t_end > t0):
        raise ValueError(f"t_end must be finite and after t0 = {t0}, got {t_end}")
    y0 = np.array(y0, dtype=float)
    if y0.ndim != 1 or y0.size == 0:
        raise ValueError(f"y0 must be a non-empty 1-D array, got shape {y0.shape}")
    n = y0.size
    if not np.all(np.isfinite(y0)):
        raise ValueError("y0 must be finite")
    yp0 = np.zeros(n) if yp0 is None else np.array(yp0, dtype=float)
    if yp0.shape != (n,) or not np.all(np.isfinite(yp0)):
        raise ValueError(f"yp0 must be {n} finite values, got shape {yp0.shape}")
    return t0, t_end, y0, yp0


def checked_quadrature(quadrature, n, algebraic):
    """The quadratures' mask of n values, none of them algebraic."""
    quad = np.asarray(quadrature)
    if quad.shape != (n,) or quad.dtype.kind not in "biu":
        raise ValueError(f"quadrature must be a bool/int mask of {n} values, "
                         f"got shape {quad.shape}")
    quad = quad != 0
    if np.any(quad & algebraic):
        raise ValueError("quadrature marks algebraic components")
    return quad


def checked_masks(algebraic, error_test, n):
    """(algebraic, in the error test) as bool masks of n values."""
    if algebraic is None:
        alg = np.zeros(n, dtype=bool)
    else:
        alg = np.asarray(algebraic)
        if alg.shape != (n,) or alg.dtype.kind not in "biu":
            raise ValueError(f"algebraic must be a bool/int mask of {n} values, "
                             f"got shape {alg.shape}, dtype {alg.dtype}")
        alg = alg != 0
    if error_test is None:
        return alg, ~alg
    etest = np.asarray(error_test)
    if etest.shape != (n,) or etest.dtype.kind not in "biu":
        raise ValueError(f"error_test must be a bool/int mask of {n} values, "
                         f"got shape {etest.shape}")
    etest = (etest != 0) & ~alg
    if not np.any(etest):
        raise ValueError("error_test leaves no differential component in the "
                         "error test")
    return alg, etest


def checked_second_order_count(second_order, n, alg, jcol):
    """The number of positions ns, checked against the masks."""
    ns = int(second_order)
    if ns != second_order or not 0 <= 2 * ns <= n:
        raise ValueError(f"second_order must be an integer in 0..{n // 2}, got "
                         f"{second_order}")
    if ns and np.any(alg[:2 * ns]):
        raise ValueError("second_order: the positions and speeds (the first "
                         f"{2 * ns} unknowns) cannot be algebraic")
    if jcol is not None and ns and np.any(jcol[:ns]):
        raise ValueError("second_order: the position columns are eliminated; "
                         "flag the speed column u_j for an analytic q_j, u_j pair")
    return ns


def checked_steps(max_order, h0, h_max, h_min, epcon, fixed_step, history, n):
    """The step settings checked; the start's history (k, n) (k = 0 without)."""
    if int(max_order) != max_order or not 1 <= max_order <= MAX_ORDER:
        raise ValueError(f"max_order must be an integer in 1..{MAX_ORDER}, "
                         f"got {max_order}")
    if h0 is not None and not (np.isfinite(h0) and h0 > 0):
        raise ValueError(f"h0 must be None or a positive number, got {h0}")
    if not h_max > 0:
        raise ValueError(f"h_max must be positive, got {h_max}")
    if not (np.isfinite(h_min) and 0 <= h_min < h_max):
        raise ValueError(f"h_min must be >= 0 and below h_max, got {h_min}")
    if not (np.isfinite(epcon) and epcon > 0):
        raise ValueError(f"epcon must be positive, got {epcon}")
    if fixed_step is not None and not (np.isfinite(fixed_step) and fixed_step > 0):
        raise ValueError(f"fixed_step must be None or positive, got {fixed_step}")
    hist = np.zeros((0, n))
    if history is not None:
        if fixed_step is None:
            raise ValueError("history needs fixed_step")
        hist = np.array(history, dtype=float)
        if hist.ndim != 2 or hist.shape[1] != n or not 1 <= len(hist) <= max_order:
            raise ValueError(f"history must have shape (k, {n}) with 1 <= k <= "
                             f"max_order = {max_order}, got {hist.shape}")
    return hist


def checked_layout(layout, n, ns, elastic_columns, jacobian):
    """(pos, dims) as int64 arrays, or ValueError naming what is wrong."""
    if not ns or elastic_columns is None:
        raise ValueError("layout needs second_order and elastic_columns")
    if jacobian is not None:
        raise ValueError("layout takes no jacobian hook: its analytic columns come "
                         "from the mass hook (elastic_columns)")
    try:
        pos = np.asarray(layout[0], dtype=np.int64)
        dims = np.asarray(layout[1], dtype=np.int64)
    except (TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"layout must be (pos, dims), got {layout!r}") from exc
    nr = n - ns
    if pos.shape != (nr,) or dims.shape != (3,) or np.any(dims < 0) or \
            dims[0] + dims[1] != nr or \
            not np.array_equal(np.sort(pos), np.arange(nr)):
        raise ValueError(f"layout: pos must order the {nr} unknowns after the "
                         f"positions and dims = [ni, nb, kd] with ni + nb = {nr}")
    interior = pos < dims[0]
    if np.any(interior & (np.asarray(elastic_columns)[ns:] == 0)):
        raise ValueError("layout: every interior unknown must be an elastic column")
    return pos, dims


def checked_tolerance(v, n, name):
    """`v` (a number or n numbers) as n finite floats, or ValueError naming `name`."""
    a = np.asarray(v, dtype=float)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be a finite scalar or {n} finite values, "
                         f"got shape {a.shape}")
    return a
