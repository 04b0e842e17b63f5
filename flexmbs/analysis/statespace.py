"""The linear model of flexmbs.analysis.linearize as a state-space system for control
design: the model's input ports (flexmbs.model.ports: actuators' commands, loads'
magnitudes) as named inputs, its sensors as named outputs, in physical coordinates.

With y the independent coordinates of the Linearization (M y'' + D y' + K y = ...;
q = q0 + J_y y), i the currents of the DC motors with an inductance and p the inputs,
about the operating point (q0, u0, i0, p0):

    x = [y, y', i],   x' = A x + B p,   outputs = C x + D p

    A = [[0,            I,            0          ],      B = [[0          ],
         [-M^-1 K,      -M^-1 D,      M^-1 J_y^T E],           [M^-1 J_y^T B_q],
         [G_q J_y,      G_u J_y,      G_i        ]]            [G_p        ]]

with B_q = dQ*/dp and E = dQ*/di (the generalized forces' dependence on the inputs
and on the currents), G the derivatives of the currents' rates di/dt (flexmbs.
dynamics.motors) and C, D those of the sensors, all by central differences about the
operating point (the inputs held there: a set-point's rate is zero, as a port holds
it). A sensor of several components gives an output per component, "name[k]".
Sensors that read the constraint forces (the reactions of cut joints and rolling
contacts) are taken with the multipliers at their nominal values.

`state_space_matrices` gives the arrays and names; `reduce_state_space` them reduced to
the slowest modes or a band of frequencies (flexmbs.analysis.reduction); `to_statespace`
the python-control StateSpace of either (the `control` extra). About a state that is
not an equilibrium they warn once (NotEquilibriumWarning, the text `flexmbs linearize`
prints).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..dynamics import api
from ..errors import ModelError, NotEquilibriumWarning
from ..model.ports import hold_value
from .linearize import equilibrium_note
from .reduction import reduce_model

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel

Linearization = Any
"""A flexmbs.analysis.linearize.Linearization (not imported: that module imports this
one for its to_statespace)."""

__all__ = [
    "StateSpaceMatrices",
    "state_space_matrices",
    "reduce_state_space",
    "to_statespace",
    "signal_name",
    "port_values",
]

FD_STEP = np.finfo(float).eps ** (1.0 / 3.0)
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass
class StateSpaceMatrices:
    """A, B, C, D (module text) and the names of the states, inputs and outputs."""

    A: NDArray[np.float64]
    B: NDArray[np.float64]
    C: NDArray[np.float64]
    D: NDArray[np.float64]
    states: list[str]
    inputs: list[str]
    outputs: list[str]
    input_values: NDArray[np.float64]  # p0, the inputs at the operating point
    output_values: NDArray[np.float64]  # the sensors there


def port_values(cm: CompiledModel, t: float) -> dict[str, float]:
    """{port: the value of its time function at t}."""
    from ..kinematics.timefunctions import evaluate_time_function

    m, out = cm.arrays, np.zeros(3)
    values = {}
    for name, port in cm.ports.items():
        evaluate_time_function(m.tf_kind, m.tf_ptr, m.tf_data, port.function, t, np.nan, out)
        values[name] = float(out[0])
    return values


def _derivative(fun: Callable[[float], NDArray[np.float64]], x0: float) -> NDArray[np.float64]:
    """d fun / dx at x0 by central differences (step FD_STEP max(|x0|, 1))."""
    h = FD_STEP * max(abs(x0), 1.0)
    return (np.asarray(fun(x0 + h)) - np.asarray(fun(x0 - h))) / (2.0 * h)


def _columns(
    fun: Callable[[NDArray[np.float64]], NDArray[np.float64]], x0: NDArray[np.float64]
) -> NDArray[np.float64]:
    """The Jacobian of fun at x0, a column per component of x0."""
    cols = []
    for k in range(len(x0)):

        def along(v: float, k: int = k) -> NDArray[np.float64]:
            x = x0.copy()
            x[k] = v
            return fun(x)

        cols.append(_derivative(along, float(x0[k])))
    if not cols:
        return np.zeros((len(np.atleast_1d(fun(x0))), 0))
    return np.stack(cols, axis=1)


class _OperatingPoint:
    """The compiled model's forces, current rates and sensors as functions of (q, u,
    i, p) about the Linearization's point, the inputs held at p and the currents at
    i (restored by `close`)."""

    def __init__(self, lin: Linearization, cm: CompiledModel, ports: Sequence[str]) -> None:
        self.lin, self.cm = lin, cm
        self.ports = [cm.ports[name] for name in ports]
        self.tables = (cm.arrays.tf_kind.copy(), cm.arrays.tf_data.copy())
        self.currents = cm.operating_currents.copy()
        m = cm.arrays
        self.inductive = [
            a for a in range(cm.nactuators) if m.act_electric[a] >= 0 and m.act_inductance[a] > 0
        ]
        self.slots = [2 * cm.nq + 1 + cm.nactuators + m.act_electric[a] + 2 for a in self.inductive]
        values = port_values(cm, lin.t)
        self.p0 = np.array([values[name] for name in ports])
        self.i0 = np.asarray(lin.currents, dtype=float)[self.inductive]
        self.multipliers = np.zeros(cm.nstate - 2 * cm.nq - cm.nworks)
        if lin.constraint_forces is not None:
            self.multipliers[: len(lin.constraint_forces)] = -lin.constraint_forces

    def _set(self, i: NDArray[np.float64], p: NDArray[np.float64]) -> None:
        self.cm.operating_currents[self.inductive] = i
        for port, value in zip(self.ports, p):
            hold_value(self.cm.arrays, port, float(value))

    def forces(self, q: NDArray, u: NDArray, i: NDArray, p: NDArray) -> NDArray[np.float64]:
        self._set(i, p)
        return api.generalized_forces(self.cm, q, u, self.lin.t)

    def current_rates(self, q: NDArray, u: NDArray, i: NDArray, p: NDArray) -> NDArray[np.float64]:
        self._set(i, p)
        return api.state_rates(self.cm, q, u, self.lin.t)[self.slots]

    def sensors(self, q: NDArray, u: NDArray, i: NDArray, p: NDArray) -> NDArray[np.float64]:
        self._set(i, p)
        rest = np.concatenate([api.operating_works(self.cm), self.multipliers])
        return api.sensor_values(self.cm, q, u, self.lin.t, rest)

    def close(self) -> None:
        self.cm.arrays.tf_kind[:], self.cm.arrays.tf_data[:] = self.tables
        self.cm.operating_currents[:] = self.currents


def _output_names(cm: CompiledModel) -> list[str]:
    names = []
    for name, size in zip(cm.sensor_names, cm.sensor_sizes):
        names += [name] if size == 1 else [f"{name}[{k}]" for k in range(size)]
    return names


def state_space_matrices(
    lin: Linearization,
    cm: CompiledModel,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
) -> StateSpaceMatrices:
    """The state-space form of `lin`, the Linearization of `cm` (module text);
    `inputs` the ports to keep (default all, in the model's order), `outputs` the
    sensor outputs to keep (default all; "name" or "name[k]"). Warns once per
    Linearization (NotEquilibriumWarning) when its state is not an equilibrium."""
    names = list(cm.ports) if inputs is None else list(inputs)
    for name in names:
        if name not in cm.ports:
            known = ", ".join(cm.ports) or "none"
            raise ModelError(f"no input port {name!r}; the model's ports are {known}", "inputs")
    every = _output_names(cm)
    wanted = every if outputs is None else list(outputs)
    for name in wanted:
        if name not in every:
            raise ModelError(
                f"no sensor output {name!r}; the outputs are {', '.join(every) or 'none'}",
                "outputs",
            )
    warn_if_not_equilibrium(lin)
    point = _OperatingPoint(lin, cm, names)
    try:
        return _assemble(lin, point, names, every, wanted)
    finally:
        point.close()


def warn_if_not_equilibrium(lin: Linearization) -> None:
    """A NotEquilibriumWarning, the first time for `lin`, when its state is not an
    equilibrium (flexmbs.analysis.linearize.equilibrium_note), shown at the caller's
    line outside flexmbs."""
    note = equilibrium_note(lin)
    if not note or getattr(lin, "equilibrium_warned", False):
        return
    lin.equilibrium_warned = True
    level, frame = 1, sys._getframe(0)
    while os.path.abspath(frame.f_code.co_filename).startswith(PACKAGE) and frame.f_back:
        frame, level = frame.f_back, level + 1
    warnings.warn(
        NotEquilibriumWarning(f"linearized about t = {lin.t:g} s, {note}"), stacklevel=level
    )


def reduce_state_space(
    s: StateSpaceMatrices, keep: Any, method: str = "residualize"
) -> StateSpaceMatrices:
    """`s` reduced to the modes `keep` keeps (an int n: the n slowest modes; (low, high):
    the poles of natural frequency in the band, Hz) by `method` ("residualize", the
    static gain of the dropped modes kept in D; "truncate"; "balanced", python-control's
    balred): flexmbs.analysis.reduction. Its states are modal coordinates."""
    r = reduce_model(s.A, s.B, s.C, s.D, keep, method)
    return replace(s, A=r.A, B=r.B, C=r.C, D=r.D, states=r.states)


def _assemble(
    lin: Linearization,
    point: _OperatingPoint,
    inputs: list[str],
    every: list[str],
    wanted: list[str],
) -> StateSpaceMatrices:
    q0, u0, i0, p0 = lin.q, lin.u, point.i0, point.p0
    jy = lin.J_y
    ny, ne, npt = jy.shape[1], len(i0), len(p0)
    minv = np.linalg.inv(lin.M)

    def at(**kw: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray, NDArray]:
        return kw.get("q", q0), kw.get("u", u0), kw.get("i", i0), kw.get("p", p0)

    bq = _columns(lambda p: point.forces(*at(p=p)), p0)
    e = _columns(lambda i: point.forces(*at(i=i)), i0)
    a = np.zeros((2 * ny + ne, 2 * ny + ne))
    b = np.zeros((2 * ny + ne, npt))
    a[:ny, ny : 2 * ny] = np.eye(ny)
    a[ny : 2 * ny, :ny] = -minv @ lin.K
    a[ny : 2 * ny, ny : 2 * ny] = -minv @ lin.D
    a[ny : 2 * ny, 2 * ny :] = minv @ jy.T @ e
    b[ny : 2 * ny] = minv @ jy.T @ bq
    if ne:
        a[2 * ny :, :ny] = _columns(lambda q: point.current_rates(*at(q=q)), q0) @ jy
        a[2 * ny :, ny : 2 * ny] = _columns(lambda u: point.current_rates(*at(u=u)), u0) @ jy
        a[2 * ny :, 2 * ny :] = _columns(lambda i: point.current_rates(*at(i=i)), i0)
        b[2 * ny :] = _columns(lambda p: point.current_rates(*at(p=p)), p0)
    keep = [every.index(name) for name in wanted]
    s0 = point.sensors(*at())[keep]
    c = np.hstack(
        [
            _columns(lambda q: point.sensors(*at(q=q))[keep], q0) @ jy,
            _columns(lambda u: point.sensors(*at(u=u))[keep], u0) @ jy,
            _columns(lambda i: point.sensors(*at(i=i))[keep], i0),
        ]
    )
    d = _columns(lambda p: point.sensors(*at(p=p))[keep], p0)
    actuators = list(point.cm.model.actuators)
    states = (
        list(lin.names)
        + [f"{n}.rate" for n in lin.names]
        + [f"{actuators[k]}.current" for k in point.inductive]
    )
    return StateSpaceMatrices(a, b, c, d, states, inputs, wanted, p0, s0)


def signal_name(port: str) -> str:
    """The name of the input port `port` as a python-control signal ("." to "_")."""
    return port.replace(".", "_")


def to_statespace(
    lin: Linearization,
    cm: CompiledModel,
    inputs: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    keep: Any = None,
    method: str = "residualize",
) -> Any:
    """The python-control StateSpace of state_space_matrices (reduced by
    reduce_state_space when `keep` is given): its outputs and states named as there,
    its inputs by their ports with "_" for "." (python-control keeps the dot for
    "system.signal": the port "servo.voltage" is the input "servo_voltage"); the
    model's name as the system's."""
    try:
        import control
    except ImportError:
        raise ImportError(
            "to_statespace needs python-control: pip install 'flexmbs[control]'"
        ) from None
    s = state_space_matrices(lin, cm, inputs, outputs)
    if keep is not None:
        s = reduce_state_space(s, keep, method)
    return control.ss(
        s.A,
        s.B,
        s.C,
        s.D,
        inputs=[signal_name(name) for name in s.inputs],
        outputs=s.outputs,
        states=s.states,
        name=getattr(cm.model, "name", "model"),
    )
