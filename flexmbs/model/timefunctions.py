"""Scalar functions of time: drivers (prescribed joint motion) and load histories.

Each law is a small data class; `compile_time_functions` packs a list of them into the
flat arrays that the numba kernel `flexmbs.kinematics.timefunctions.evaluate` reads.
Values are in the unit of what they drive (rad or m for a joint coordinate, a
dimensionless multiplier for a load), time in s.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from ..solvers.events import sorted_times

__all__ = [
    "Constant",
    "ConstantRate",
    "Polynomial",
    "Harmonic",
    "SpinUp",
    "Table",
    "Steps",
    "Trajectory",
    "TIME_FUNCTION_LAWS",
    "LAW_CODES",
    "compile_time_functions",
    "time_function_breakpoints",
]


@dataclass(frozen=True)
class Constant:
    """f(t) = value."""

    value: float = 0.0
    law = "constant"


@dataclass(frozen=True)
class ConstantRate:
    """f(t) = value + rate t (a joint driven at a constant rate)."""

    value: float = 0.0
    rate: float = 0.0
    law = "rate"


@dataclass(frozen=True)
class Polynomial:
    """f(t) = sum_k coefficients[k] t^k."""

    coefficients: tuple = (0.0,)
    law = "polynomial"


@dataclass(frozen=True)
class Harmonic:
    """f(t) = offset + amplitude sin(omega t + phase); omega in rad/s."""

    amplitude: float = 1.0
    omega: float = 1.0
    phase: float = 0.0
    offset: float = 0.0
    law = "harmonic"


@dataclass(frozen=True)
class SpinUp:
    """The smooth spin-up law of docs/explanation/benchmark-models.md SPIN (Kane, Ryan and
    Banerjee 1987).

    f(t) = (W/T) (t^2/2 + (T/(2 pi))^2 (cos(2 pi t/T) - 1))   for t < T,
    f(t) = W (t - T/2)                                       for t >= T;
    W = `rate` (rad/s after the spin-up), T = `duration` (s).
    """

    rate: float = 1.0
    duration: float = 1.0
    law = "spinup"


@dataclass(frozen=True)
class Table:
    """Interpolation of tabulated values: a C2 cubic spline (not-a-knot ends) or linear.

    Outside the table the end values are held (zero rate): a table whose end rates
    are not zero makes a jump in the rate there. With "linear" the rate is
    piecewise constant and the acceleration zero: use "cubic" for prescribed motion
    whose reaction work must balance the energy.
    """

    time: tuple = (0.0, 1.0)
    value: tuple = (0.0, 0.0)
    interpolation: str = "cubic"
    law = "table"


@dataclass(frozen=True)
class Steps:
    """Piecewise constant set-points (a staircase), for joint controllers and loads.

    f(t) = values[j] for times[j] <= t < times[j+1]; values[0] before times[0] and
    values[-1] from times[-1] on; f' = f'' = 0. `times` (s) strictly increasing, at
    least one entry, `values` of the same length.

    The set-point changes instantly at each time: a PD controller then sees an
    instantaneous jump in its error (its torque jumps by kp times the step), so the
    acceleration jumps. Each time is a breakpoint of the run (time_function_breakpoints):
    `bdf` and `galpha` step onto it and start again there (flexmbs.solvers.events).
    Not meant for a driver (prescribed motion would jump with f' = 0): use
    `Trajectory` for a smooth motion between set-points.
    """

    times: tuple = (0.0,)
    values: tuple = (0.0,)
    law = "steps"


@dataclass(frozen=True)
class Trajectory:
    """Point-to-point motion through set-points, at rest at each of them.

    On [t_j, t_{j+1}], with h = t_{j+1} - t_j and tau = (t - t_j)/h:
        f(t) = v_j + (v_{j+1} - v_j) b(tau),
        f'(t) = (v_{j+1} - v_j) b'(tau)/h,  f''(t) = (v_{j+1} - v_j) b''(tau)/h^2,
    with b(tau) = 3 tau^2 - 2 tau^3 for profile "cubic" (zero rate at every
    set-point; the acceleration jumps there) and b(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5
    for "quintic" (zero rate and acceleration at every set-point: f is C2).
    f = values[0] before times[0], values[-1] after times[-1], with f' = f'' = 0.
    `times` (s) strictly increasing, at least two entries, `values` of the same length.
    """

    times: tuple = (0.0, 1.0)
    values: tuple = (0.0, 0.0)
    profile: str = "quintic"
    law = "trajectory"


MAX_MAGNITUDE = 1e100
"""The largest number a time-function law takes (its value and rates multiply them)."""

TimeFunction: TypeAlias = (
    Constant | ConstantRate | Polynomial | Harmonic | SpinUp | Table | Steps | Trajectory
)
"""Any of the time-function laws."""

TIME_FUNCTION_LAWS: dict[str, type[TimeFunction]] = {
    cls.law: cls
    for cls in (Constant, ConstantRate, Polynomial, Harmonic, SpinUp, Table, Steps, Trajectory)
}
LAW_CODES = {
    "constant": 0,
    "rate": 1,
    "polynomial": 2,
    "harmonic": 3,
    "spinup": 4,
    "table": 5,
    "steps": 6,
    "trajectory": 7,
}
# Trajectory profile -> the number packed for the kernel (the degree of b(tau))
TRAJECTORY_PROFILES = {"cubic": 3, "quintic": 5}


def _time_function_hint(value: object) -> str:
    """What was given instead of a time function, and the helper of flexmbs.model
    that makes one from it."""
    classes = ", ".join(cls.__name__ for cls in TIME_FUNCTION_LAWS.values())
    if isinstance(value, dict) and value.get("law") in TIME_FUNCTION_LAWS:
        cls = TIME_FUNCTION_LAWS[value["law"]].__name__
        return (
            f"got a table of a model file ({value!r}): in Python, write "
            f"flexmbs.model.{cls}(...) with the same fields"
        )
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return f"got the number {value!r}: write flexmbs.model.Constant({value!r})"
    if isinstance(value, (list, tuple, np.ndarray, dict)):
        return (
            f"got {type(value).__name__} {value!r}: values at times are "
            "flexmbs.model.Steps(times, values) (held), flexmbs.model.Table(time, "
            "value) (interpolated) or flexmbs.model.Trajectory(times, values) "
            "(smooth segments)"
        )
    return f"got {type(value).__name__} {value!r}: write one of flexmbs.model's {classes}"


def check_time_function(fn: TimeFunction, item: str, field: str) -> None:
    """Raise ModelError unless `fn` is a usable time-function law."""
    if not isinstance(fn, tuple(TIME_FUNCTION_LAWS.values())):
        raise ModelError(f"expected a time function; {_time_function_hint(fn)}", item, field)
    if not isinstance(fn, (Table, Steps, Trajectory)):
        for f in fields(fn):
            values = np.atleast_1d(getattr(fn, f.name))
            if values.dtype.kind not in "if" or not np.all(np.isfinite(values)):
                raise ModelError(
                    f"expected finite numbers, got {getattr(fn, f.name)!r}",
                    item,
                    f"{field}.{f.name}",
                )
            if np.abs(values).max(initial=0.0) > MAX_MAGNITUDE:
                raise ModelError(
                    f"expected numbers of magnitude at most {MAX_MAGNITUDE:g} (the law's "
                    f"values and rates are products of them, which pass the float64 "
                    f"limit 1.8e308), got {getattr(fn, f.name)!r}",
                    item,
                    f"{field}.{f.name}",
                )
    if isinstance(fn, Polynomial) and len(fn.coefficients) == 0:
        raise ModelError(
            "expected at least one polynomial coefficient", item, field + ".coefficients"
        )
    if isinstance(fn, SpinUp) and not fn.duration > 0:
        raise ModelError(
            f"expected a positive spin-up duration, got {fn.duration}", item, field + ".duration"
        )
    if isinstance(fn, Table):
        try:
            t = np.asarray(fn.time, dtype=float)
            v = np.asarray(fn.value, dtype=float)
        except (TypeError, ValueError):
            raise ModelError("expected 'time' and 'value' lists of numbers", item, field) from None
        if t.ndim != 1 or t.size < 2 or v.shape != t.shape:
            raise ModelError("expected 'time' and 'value' lists of equal length >= 2", item, field)
        if not np.all(np.isfinite(t)) or not np.all(np.isfinite(v)):
            raise ModelError("expected finite table entries", item, field)
        if np.any(np.diff(t) <= 0):
            raise ModelError("expected strictly increasing table times", item, field + ".time")
        if fn.interpolation not in ("cubic", "linear"):
            raise ModelError(
                f"expected interpolation 'cubic' or 'linear', got {fn.interpolation!r}",
                item,
                field + ".interpolation",
            )
    if isinstance(fn, (Steps, Trajectory)):
        _check_set_points(fn, item, field)


def _numbers(raw: Iterable[object]) -> NDArray[np.float64] | None:
    """`raw` as a 1-D float array; None unless it is a sequence of real numbers."""
    if isinstance(raw, (str, bytes)):
        return None
    try:
        items = list(raw)
    except TypeError:
        return None
    if any(
        isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating))
        for x in items
    ):
        return None
    return np.array(items, dtype=float)


def _check_set_points(fn: Steps | Trajectory, item: str, field: str) -> None:
    """`times` and `values` of a Steps or Trajectory law, and the profile."""
    least = 1 if isinstance(fn, Steps) else 2
    arrays = {}
    for name in ("times", "values"):
        raw = getattr(fn, name)
        a = _numbers(raw)
        if a is None:
            raise ModelError(f"expected a list of numbers, got {raw!r}", item, f"{field}.{name}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"expected finite numbers, got {raw!r}", item, f"{field}.{name}")
        arrays[name] = a
    t, v = arrays["times"], arrays["values"]
    if t.size < least:
        raise ModelError(
            f"expected at least {least} set-point time{'s' if least > 1 else ''}, got {t.size}",
            item,
            field + ".times",
        )
    if v.size != t.size:
        raise ModelError(
            f"expected as many values as times ({t.size}), got {v.size}", item, field + ".values"
        )
    if np.any(np.diff(t) <= 0):
        raise ModelError(
            f"expected strictly increasing times, got {fn.times!r}", item, field + ".times"
        )
    if isinstance(fn, Trajectory) and (
        not isinstance(fn.profile, str) or fn.profile not in TRAJECTORY_PROFILES
    ):
        raise ModelError(
            f"expected profile 'cubic' or 'quintic', got {fn.profile!r}", item, field + ".profile"
        )


def _pack(fn: TimeFunction) -> list[float]:
    """Parameters of one law as a flat float array (layout read by the kernel)."""
    if isinstance(fn, Constant):
        return [fn.value]
    if isinstance(fn, ConstantRate):
        return [fn.value, fn.rate]
    if isinstance(fn, Polynomial):
        return list(fn.coefficients)
    if isinstance(fn, Harmonic):
        return [fn.amplitude, fn.omega, fn.phase, fn.offset]
    if isinstance(fn, SpinUp):
        return [fn.rate, fn.duration]
    if isinstance(fn, Steps):  # [n, times (n), values (n)]
        return [float(len(fn.times))] + [float(x) for x in fn.times] + [float(x) for x in fn.values]
    if isinstance(fn, Trajectory):  # [degree 3 or 5, n, times (n), values (n)]
        return (
            [float(TRAJECTORY_PROFILES[fn.profile]), float(len(fn.times))]
            + [float(x) for x in fn.times]
            + [float(x) for x in fn.values]
        )
    # Table: [n_intervals, breakpoints (n+1), then 4 coefficients per interval]
    t = np.asarray(fn.time, dtype=float)
    v = np.asarray(fn.value, dtype=float)
    n = t.size - 1
    if fn.interpolation == "cubic" and t.size >= 3:
        from scipy.interpolate import CubicSpline  # heavy: imported when used

        c = CubicSpline(t, v, bc_type="not-a-knot").c  # (4, n), highest power first
        coef = c[::-1].T  # (n, 4): a0 + a1 s + a2 s^2 + a3 s^3, s = t - t_k
    else:
        coef = np.zeros((n, 4))
        coef[:, 0] = v[:-1]
        coef[:, 1] = np.diff(v) / np.diff(t)
    return [float(n)] + list(t) + list(coef.ravel())


def compile_time_functions(
    functions: Sequence[TimeFunction],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
    """Flat arrays (kind, ptr, data) for the numba evaluator.

    kind[k] is the law code of function k, its parameters are data[ptr[k]:ptr[k+1]].
    """
    kind = np.array([LAW_CODES[f.law] for f in functions], dtype=np.int64)
    packs = [np.asarray(_pack(f), dtype=float) for f in functions]
    ptr = np.zeros(len(functions) + 1, dtype=np.int64)
    if packs:
        ptr[1:] = np.cumsum([p.size for p in packs])
        data = np.concatenate(packs)
    else:
        data = np.zeros(0)
    return kind, ptr, data


def time_function_breakpoints(
    kind: NDArray[np.int64], ptr: NDArray[np.int64], data: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The times (s, sorted, unique) where a packed time function (the arrays of
    compile_time_functions; entries of other kinds, the user laws, are skipped) or one
    of its first two derivatives jumps, which the integrators step onto and restart
    at (flexmbs.solvers.events):

    * steps: every time (the value jumps);
    * table: its first and last time (the rate jumps where the held end values
      begin), and every time of a "linear" table (the rate jumps); a "cubic" spline is
      C2 inside;
    * trajectory: every set-point time (a "cubic" profile's acceleration jumps there,
      a "quintic" one's jerk).

    Constant, rate, polynomial and harmonic laws are smooth, and the spin-up law is C3
    at the end of its spin-up.
    """
    times: list[float] = []
    for k, code in enumerate(kind):
        p = data[ptr[k] : ptr[k + 1]]
        if code == LAW_CODES["steps"]:
            n = int(p[0])
            times += list(p[1 : n + 1])
        elif code == LAW_CODES["trajectory"]:
            n = int(p[1])
            times += list(p[2 : n + 2])
        elif code == LAW_CODES["table"]:
            n = int(p[0])
            knots = p[1 : n + 2]
            coef = p[n + 2 :].reshape(n, 4)
            linear = bool(np.all(coef[:, 2:] == 0.0))
            times += list(knots) if linear else [knots[0], knots[-1]]
    return sorted_times(times)
