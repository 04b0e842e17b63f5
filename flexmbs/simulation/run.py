"""Running a model: the integrator, the outputs, the result file, the progress line.

`simulate(model, path)` compiles the model, integrates it with the chosen solver and
writes the HDF5 result file while the run goes (flexmbs.io.results). Python is only
involved once per batch of outputs; the energies and sensors of a batch come from one
kernel call.
"""

import contextlib
import copy
import os
import shutil
import signal
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..checks.units import coordinate_units, sensor_units
from ..dynamics import absolute as _absolute
from ..dynamics import order_n as _order_n
from ..dynamics import projection as _projection
from ..dynamics import stick_slip as _stick_slip
from ..dynamics import stick_slip_events as _stick_events
from ..dynamics import switches as _switches
from ..dynamics import system as _system
from ..dynamics.constrained import initial_derivative, make_consistent, reselect_rows
from ..dynamics.energy import ENERGY_COMPONENTS
from ..dynamics.model_switches import dae_model_switch_values
from ..dynamics.outputs import (
    has_reaction_sensors,
    kinematic_outputs,
    output_quantities,
    reaction_outputs,
)
from ..dynamics.stop_sides import stops_on_their_limits
from ..elements.deformation_range import DeformationWatch
from ..elements.modal import basis_record
from ..errors import FlexmbsWarning, ModelError, RunTerminated
from ..formats.serialize import model_to_json
from ..kinematics.singularity import SINGULAR_THRESHOLD, singularity_measure, three_rotation_joints
from ..kinematics.timefunctions import evaluate_time_function
from ..model.absolute import absolute_model, set_elastic_rates
from ..model.compiled import compile_model
from ..model.description import SOLVER_METHODS, SolverSettings
from ..model.drive_tables import electrical_state_names
from ..model.run_work import check_run_work
from ..model.timefunctions import time_function_breakpoints
from ..runtime.compile_notice import CompileWatch
from ..runtime.tuple_ref import held_ref
from ..solvers.base import System
from ..solvers.bdf_integrator import BdfIntegrator, GalphaIntegrator
from ..solvers.ida import IdaIntegrator
from ..solvers.kernel_call import KernelCall
from ..solvers.linear_choice import banded_iteration_matrix
from ..solvers.scipy_ivp import SCIPY_METHODS, ScipyIntegrator
from ..solvers.typed_call import TypedCall
from .convergence import (
    DEFAULT_FACTOR,
    DEFAULT_LIMIT,
    Convergence,
    check_verify_settings,
    compare_runs,
)
from .failure_diagnosis import failing_force_elements, failure_states
from .instruments import InstrumentFilter
from .output_kernels import OutputKernelsElsewhere
from .sampled_control import SampledControllers

__all__ = [
    "build_system",
    "make_integrator",
    "simulate",
    "Simulation",
    "SmallDeformationWarning",
    "SOLVERS",
    "state_rest_names",
]

SOLVERS = SOLVER_METHODS
WALL_BUDGET = 0.5  # s of integration between two writes / progress updates
MAX_OUTPUT_ROWS = 1e8  # output rows of one run
OUTPUT_TIME_SLACK = 1e-9  # of a step: t_end within it of a multiple is that multiple
PROGRESS_INTERVAL = 0.25  # s between progress-line refreshes
OUTPUT_BATCH = 20_000  # output rows asked of the integrator at once (bounds the memory)


def build_system(cm, constraints="ggl", formulation="joint", linear_solver="auto"):
    """The System (ODE right-hand side and residual) of a compiled model. A tree: in
    the joint-coordinate or the Order-N `formulation`. With cut joints or rolling
    contacts: the stabilised index-2 residual (docs/explanation/formulation.md section 5), the
    multipliers algebraic, no elimination of the positions, and a right-hand side that
    gives the consistent y' of a consistent state (the start of the DAE integrators;
    flexmbs.dynamics.constrained); or, with `constraints` = "projection", Shui and Zhang's
    projection formulation (flexmbs.dynamics.projection), whose drift correction
    `simulate` sets as the system's refresh."""
    if cm.nconstraints:
        return _with_discontinuities(cm, _constrained_system(cm, constraints == "projection"))
    return _with_discontinuities(cm, _tree_system(cm, formulation, linear_solver))


def _constrained_system(cm, projection):
    """The System of a model with constraints (build_system)."""
    m = cm.arrays
    n = cm.nstate
    algebraic = np.zeros(n, dtype=bool)  # the multipliers, after q, u and the works
    algebraic[2 * cm.nq + cm.nworks :] = True
    system = System(
        n=n,
        rhs=None,
        m=m,
        ws=cm.new_workspace(),
        algebraic=algebraic,
        residual_kernel=(
            _projection.projection_residual if projection else _system.constrained_residual
        ),
        dae_residual=(
            _projection.dae_projection_residual if projection else _system.dae_constrained_residual
        ),
        dae_jacobian=_system.dae_work_column,
        dae_jacobian_columns=_system.dae_analytic_columns(n, cm.nq, cm.nactuators),
        second_order=0,
        dae_mass=None if projection else _system.dae_constrained_mass,
        index2=not projection,
        npositions=cm.nq,
    )
    if projection:
        system.rhs = lambda t, y: _projection.projection_start(cm, system, t, y)[1]
        return system
    system.rhs = lambda t, y: initial_derivative(cm, system, t, y)[1]
    if len(m.con_kind) > cm.nconstraints:  # redundant rows: watch the chosen ones
        system.refresh = lambda t, y: reselect_rows(cm, system, t, y)
    return system


def _tree_system(cm, formulation, linear_solver):
    """The System of a tree (build_system), in the joint-coordinate or the Order-N
    formulation, its iteration matrix dense or in the bordered band layout
    (`linear_solver`)."""
    m = cm.arrays
    ws = cm.new_workspace()
    n = cm.nstate
    derivative, residual, dae_residual, dae_mass = (
        (
            _system.state_derivative_from_ref,
            _system.residual,
            _system.dae_residual,
            _system.dae_mass_block,
        )
        if formulation == "joint"
        else (
            _order_n.order_n_state_derivative_from_ref,
            _order_n.order_n_residual,
            _order_n.dae_order_n_residual,
            None,
        )
    )
    if linear_solver == "auto" and np.any(np.asarray(m.fric_law) == 1):
        linear_solver = "dense"  # a stuck joint holds its row of the dense M*
    if cm.nq == 0:
        dae_mass = None  # every coordinate driven: no rows after eliminated positions
    elastic = _elastic_speed_columns(cm) if dae_mass is not None else None
    jacobian, layout = _system.dae_work_column, None
    if elastic is not None:
        dae_mass = _system.dae_mass_elastic_block
        if banded_iteration_matrix(m.lin_dims, linear_solver):
            # the works' columns are cj A from the mass hook, like the elastic ones
            layout, jacobian = (m.lin_pos, m.lin_dims), None
            dae_mass = _system.dae_mass_elastic_banded
            elastic = elastic.copy()
            elastic[2 * cm.nq :] = True
    derivative_call = KernelCall(derivative, (m, ws), n, 1)

    def rhs(t, y):
        return derivative_call(t, y).copy()

    return System(
        n=n,
        rhs=rhs,
        residual_kernel=residual,
        m=m,
        ws=ws,
        algebraic=np.zeros(n, dtype=bool),
        dae_residual=dae_residual,
        dae_jacobian=jacobian,
        dae_jacobian_columns=(
            None if jacobian is None else _system.dae_analytic_columns(n, cm.nq, cm.nactuators)
        ),
        second_order=cm.nq,
        dae_mass=dae_mass,
        npositions=cm.nq,
        dae_elastic_columns=elastic,
        dae_layout=layout,
    )


def _error_test(cm, n):
    """The components of the state in `bdf`'s local error test: all, but the elastic
    speeds of the flexible bodies that carry damping (structural or modal); None
    when that is all of them.

    Damping makes a body's high modes overdamped, with an eigenvalue near -1/alpha
    and one near -alpha w^2 each: their speeds follow the motion, and where h |lambda|
    is near 1 their error estimate does not fall with h as the order says, so that
    the step sat at order 1 and a few microseconds (the damped 3-D arm of the
    validation tests: 26 960 steps for 1 s at rtol 1e-8, 15 171 at order 1, its
    balance drifting by 1.3e-3 of max U; 1 887 steps and 8.5e-6 without them). The
    positions' test bounds them: a speed is the rate of its position. An undamped
    body's modes oscillate, and their speeds hold energy the positions' test does not
    see while a mode is not resolved: tested, they keep undamped H2 at 4e-10 rad of
    the exact motion at rtol 1e-8, against 9.6e-7 without them
    (benchmarks/bench_error_test.py)."""
    m = cm.arrays
    test = np.ones(n, dtype=bool)
    for k, (q0, nf) in enumerate(zip(m.flex_q, m.flex_nf)):
        blocks = m.block_d_ptr[m.flex_block_ptr[k]], m.block_d_ptr[m.flex_block_ptr[k + 1]]
        if np.any(m.block_d[blocks[0] : blocks[1]] != 0.0):  # its blocks' D
            test[cm.nq + q0 : cm.nq + q0 + nf] = False
    return None if test.all() else test


def _with_discontinuities(cm, system):
    """The system's breakpoints (the times where a time function of the model jumps
    or kinks), its segment hook (the piece of each time function in force on a
    segment: ws.segment_time) and its switch functions (flexmbs.dynamics.switches:
    the actuators' torque limits, the DC motors' limits, the joint stops; the branch
    of each held in ws; then flexmbs.dynamics.stick_slip's, the stick-slip frictions,
    their modes in ws.fric_mode), for the integrators' events
    (flexmbs.solvers.events)."""
    m, ws = cm.arrays, system.ws
    system.breakpoints = time_function_breakpoints(m.tf_kind, m.tf_ptr, m.tf_data)
    system.error_test = _error_test(cm, system.n)

    def set_segment(t_start, t_end):
        ws.segment_time[0] = 0.5 * (t_start + t_end)
        ws.kin_key[0] = 0.0  # the kinematics of a driven joint may change piece

    system.set_segment = set_segment
    blocks = _stick_events.switch_blocks(m)
    if blocks:
        friction = blocks.get("frictions")
        if friction is not None:
            masses = KernelCall(_stick_slip.coordinate_masses, (m, ws), system.n, 1)
            holding = KernelCall(_stick_slip.holding_forces, (m, ws), system.n, 1)
            fr = _stick_events.stick_slip_frictions(m)

        held = held_ref((m, ws))  # the type the step loop passes: one compilation
        first, count = _switches.switch_blocks(m)["stop"]
        stops = slice(first, first + count)

        def drive_values(t, y):
            fresh = np.zeros(system.nswitch)
            dae_model_switch_values(float(t), np.ascontiguousarray(y, dtype=float), held, fresh)
            return fresh[blocks["drives"]]

        def switched(t, y, g):
            if "drives" in blocks:
                drives = g[blocks["drives"]]
                _switches.set_branches(m, ws, t, y, drives, drive_values)
                if stops.stop > stops.start:
                    stops_on_their_limits(m, ws, y, drives[stops], lambda: system.rhs(t, y))
            if friction is not None:
                if np.all(np.isnan(ws.fric_mode[fr])):  # the start of a run
                    _stick_events.initial_friction_modes(m, ws, y, masses, holding, t)
                    g[friction] = 1.0
                else:
                    gf = g[friction]
                    _stick_events.switched_frictions(m, ws, t, y, gf, gf <= 0.0, masses, holding)
                    g[friction] = gf

        system.switches = dae_model_switch_values
        system.nswitch = max(b.stop for b in blocks.values())
        system.switched = switched
    return system


def _with_sampled_control(cm, system, t0, t_end):
    """The sampled controllers of the model (flexmbs.simulation.sampled_control) on the system:
    their instants among its breakpoints, their updates at the start of each
    segment (System.sample). Returns them (None without)."""
    m, ws = cm.arrays, system.ws
    if not np.any(np.asarray(m.ctrl_sampled) == 1):
        return None
    row = np.zeros((1, len(ENERGY_COMPONENTS)))
    values = np.zeros((1, cm.nsensor_values))
    rows = RowOutputs(m)
    t1, y1 = np.zeros(1), np.zeros((1, system.n))

    def sensors_at(t, y):
        t1[0] = t
        y1[0] = y
        rows(m, ws, t1, y1, row, values)
        return values[0]

    sampler = SampledControllers(cm, ws, t0, t_end, sensors_at)
    sampler.row_outputs = RowOutputs(m)  # its own types: the batches of outputs
    own = np.asarray(system.breakpoints if system.breakpoints is not None else [], dtype=float)
    system.breakpoints = np.union1d(own, sampler.breakpoints)
    system.held_breakpoints = sampler.held_breakpoints(own)
    system.sample = sampler.at_breakpoint
    return sampler


def _check_discrete_state(model, settings, constrained):
    """ModelError unless the run's settings can hold the model's stick-slip friction
    and sampled controllers: they are discrete state, which the integrators "bdf"
    and "galpha" keep between their segments; a stuck joint's row is the joint
    formulation's, on a tree, in the dense iteration matrix."""
    sticky = [f.name for f in getattr(model, "frictions", {}).values() if f.law == "stick-slip"]
    sampled = [c.name for c in getattr(model, "controllers", {}).values() if c.sampled]
    if not sticky and not sampled:
        return
    what = f'friction "{sticky[0]}"' if sticky else f'controller "{sampled[0]}"'
    kind = "stick-slip friction" if sticky else "a sampled controller"
    if settings.method not in ("bdf", "galpha"):
        raise ModelError(
            f'{what}: {kind} is discrete state that the solvers "bdf" and "galpha" '
            f'hold between their segments; got "{settings.method}"',
            "solver",
            "method",
        )
    if sticky and settings.linear_solver == "banded":
        raise ModelError(
            f'friction "{sticky[0]}": a stuck joint\'s row replaces its row of the dense '
            'mass matrix; use linear_solver = "dense" or "auto" with stick-slip friction',
            "solver",
            "linear_solver",
        )
    if sticky and (settings.formulation != "joint" or constrained):
        raise ModelError(
            f'friction "{sticky[0]}": stick-slip friction holds a stuck joint by its row '
            'of the joint formulation of a tree; use law = "regularized" for this model',
            f'friction "{sticky[0]}"',
            "law",
        )


class RowOutputs:
    """output_quantities(m, ws, t, y, e, sv) for one model, called per sample or per
    held value of a sampled run: through the kernels' compiled functions for the
    types of the first call (flexmbs.solvers.typed_call), without the dispatcher's
    look at the model's arrays, when the arrays are C-contiguous float64 (else
    output_quantities)."""

    def __init__(self, m):
        self._kinematic = TypedCall(kinematic_outputs)
        self._reaction = TypedCall(reaction_outputs) if has_reaction_sensors(m) else None

    def __call__(self, m, ws, t, y, e, sv):
        if not all(a.flags.c_contiguous and a.dtype == np.float64 for a in (t, y, e, sv)):
            output_quantities(m, ws, t, y, e, sv)
            return
        self._kinematic(m, ws, t, y, e, sv)
        if self._reaction is not None:
            self._reaction(m, ws, t, y, sv)


def _output_quantities(cm, ws, sampler, t, y, e, sv):
    """output_quantities for rows at times t, each with the sampled controllers'
    outputs in force at its time (sampler.history), the workspace's restored
    after."""
    t = np.ascontiguousarray(t)
    y = np.ascontiguousarray(y)
    if sampler is None:
        output_quantities(cm.arrays, ws, t, y, e, sv)
        return
    now = ws.ctrl_held.copy()
    which = sampler.held_at(t)
    start = 0
    while start < len(t):
        stop = start + 1
        while stop < len(t) and which[stop] == which[start]:
            stop += 1
        ws.ctrl_held[:] = sampler.history_v[max(which[start], 0)]
        sampler.row_outputs(
            cm.arrays, ws, t[start:stop], y[start:stop], e[start:stop], sv[start:stop]
        )
        start = stop
    ws.ctrl_held[:] = now
    sampler.forget_before(t[-1])


def _elastic_speed_columns(cm):
    """Mask of the state's elastic speeds (the u of every flexible body's elastic
    coordinates), or None without flexible bodies."""
    if not len(cm.arrays.flex_nf):
        return None
    mask = np.zeros(cm.nstate, dtype=bool)
    for q0, nf in zip(cm.arrays.flex_q, cm.arrays.flex_nf):
        mask[cm.nq + q0 : cm.nq + q0 + nf] = True
    return mask


def compile_absolute(model):
    """The compiled absolute-coordinate form of `model` (flexmbs.model.absolute),
    started from the model's initial state made consistent with its own loops."""
    plain = copy.copy(model)
    plain.sensors = {}  # they are for the absolute form (a cut joint's, say)
    cm = compile_model(plain)
    if cm.has_constraints:
        make_consistent(cm)
    absolute, rates, placing = absolute_model(model, cm.q0, cm.u0, cm)
    cm = compile_model(absolute, absolute_joints=placing)
    set_elastic_rates(cm, rates)
    return cm


def _with_rebasing(cm, system):
    """Chain `flexmbs.dynamics.absolute.rebase_frames` before the system's refresh;
    system.reference_moves counts the refreshes that moved a reference."""
    slots = _absolute.reference_slots(cm)
    if system.index2:

        def restart(t, y):
            return initial_derivative(cm, system, t, y)
    else:

        def restart(t, y):
            return _projection.projection_start(cm, system, t, y)

    then = system.refresh
    system.reference_moves = 0

    def refresh(t, y):
        moved, y, yp = _absolute.rebase_frames(cm, slots, t, y, restart)
        system.reference_moves += moved
        if then is not None:
            changed, y2, yp2 = then(t, y)
            if changed:
                return True, y2, yp2
        return moved, y, yp

    system.refresh = refresh


def make_integrator(
    method, system, t0, y0, t_end, rtol, atol, max_step=np.inf, rho_inf=0.9, fixed_step=None
):
    """The Integrator called `method` (one of SOLVERS); `rho_inf` and `fixed_step`
    are galpha's."""
    if method == "galpha":
        return GalphaIntegrator(
            system, t0, y0, t_end, rtol, atol, max_step, rho_inf=rho_inf, fixed_step=fixed_step
        )
    if method in SCIPY_METHODS:
        return ScipyIntegrator(system, t0, y0, t_end, rtol, atol, max_step, method)
    if method == "bdf":
        return BdfIntegrator(system, t0, y0, t_end, rtol, atol, max_step)
    if method == "ida":
        return IdaIntegrator(system, t0, y0, t_end, rtol, atol, max_step)
    raise ValueError(f"unknown solver {method!r}; expected one of {', '.join(SOLVERS)}")


class OutputTimes:
    """The output times after t0: multiples of `step`, then t_end exactly (s), made
    a slice at a time (`times[a:b]`, an array; `len(times)`), so that a run's memory
    does not grow with its number of outputs."""

    def __init__(self, t0, t_end, step):
        n_out = (t_end - t0) / step
        if n_out > MAX_OUTPUT_ROWS:
            raise ModelError(
                f"{t_end - t0:g} s at a step of {step:g} s would make "
                f"{n_out:.3g} output rows (at most {MAX_OUTPUT_ROWS:.0e}): "
                "expected a larger step",
                "output",
                "step",
            )
        self.t0, self.t_end, self.step = t0, t_end, step
        self.n_steps = int(np.floor(n_out + OUTPUT_TIME_SLACK))
        last = t0 + step * self.n_steps
        self.extra = self.n_steps == 0 or t_end - last > OUTPUT_TIME_SLACK * step

    def __len__(self):
        return self.n_steps + self.extra

    def __getitem__(self, index):
        a, b, _ = index.indices(len(self))
        out = self.t0 + self.step * np.arange(a + 1, max(a, b) + 1, dtype=float)
        if self.extra and b == len(self) and b > a:
            out[-1] = self.t_end
        if b == len(self) and b > a:
            out[-1] = min(out[-1], self.t_end)
        return out


def output_times(t0, t_end, step):
    """All the output times after t0 (OutputTimes) as one array (s)."""
    times = OutputTimes(t0, t_end, step)
    return times[0 : len(times)]


class _SingularityWatch:
    """The smallest singularity measure of each three-rotation joint along the run."""

    def __init__(self, cm):
        self.cm = cm
        self.joints = three_rotation_joints(cm)
        self.worst = {name: (np.inf, 0.0) for name, _ in self.joints}

    def update(self, t, y):
        m = self.cm.arrays

        def angles_of(c):
            k = m.coord_qindex[c]
            if k >= 0:
                return y[:, k]
            out = np.zeros(3)
            vals = []
            for tk in t:
                evaluate_time_function(
                    m.tf_kind, m.tf_ptr, m.tf_data, m.coord_function[c], float(tk), np.nan, out
                )
                vals.append(out[0])
            return np.array(vals)

        for name, first in self.joints:
            s = singularity_measure(self.cm, angles_of, first)
            k = int(np.argmin(s))
            if s[k] < self.worst[name][0]:
                self.worst[name] = (float(s[k]), float(t[k]))

    def report(self):
        """Text for the joints that came near their singular configuration, or ''."""
        near = [
            f'joint "{n}" (|det G| = {s:.2g} at t = {t:.6g} s)'
            for n, (s, t) in self.worst.items()
            if s < SINGULAR_THRESHOLD
        ]
        if not near:
            return ""
        return (
            "near the singular configuration of its three sequential rotations "
            "(the middle rotation at +-90 deg for x-y-z axes): " + "; ".join(near)
        )


class SmallDeformationWarning(FlexmbsWarning):
    """A beam of the run left the small-deformation range of the floating-frame beam
    (flexmbs.elements.deformation_range): its results no longer describe the beam.
    Issued by a run without a log; a run with one (the command line's) says it there."""


class Simulation:
    """What `simulate` returns: the outputs and the run's outcome.

    t (n,) s, y (n, nstate) the states [q, u, w, lambda, mu] at the outputs, energy
    (n, 7) (ENERGY_COMPONENTS), sensors (n, number of sensor values); status
    ("finished" or "failed"), message, statistics, path (the result file or None);
    small_deformation: the text saying which beam left the small-deformation range
    and how far (None if none did; a SmallDeformationWarning was issued then);
    convergence: the convergence check of simulate(..., verify=True) (a
    flexmbs.simulation.convergence.Convergence; None without it). sensor_names, sensor_sizes:
    the sensors' names and numbers of values, in the columns' order of `sensors`;
    sensor(name) the columns of one by its name.
    A run that kept no history in memory (simulate's `history`) reads each of t, y,
    energy and sensors from its result file when it is first asked for.
    """

    def __init__(
        self, t, y, energy, sensors, coordinate_names, status, message, statistics, path=None
    ):
        self._arrays = {"t": t, "y": y, "energy": energy, "sensors": sensors}
        self.coordinate_names = coordinate_names
        self.status = status
        self.message = message
        self.statistics = statistics
        self.path = path
        self.small_deformation: str | None = None
        self.convergence: Convergence | None = None
        self.sensor_names: list[str] = []
        self.sensor_sizes: list[int] = []

    def sensor(self, name):
        """The values of sensor `name` at the outputs: (n,) for a sensor of one value,
        (n, k) for one of k (a marker's position: x, y, z)."""
        if name not in self.sensor_names:
            known = ", ".join(self.sensor_names) or "(none)"
            raise KeyError(f'no sensor "{name}"; the sensors are {known}')
        k = self.sensor_names.index(name)
        start = int(sum(self.sensor_sizes[:k]))
        size = int(self.sensor_sizes[k])
        columns = self.sensors[:, start : start + size]
        return columns[:, 0] if size == 1 else columns

    def _get(self, name):
        if self._arrays[name] is None:
            self._arrays[name] = _read_outputs(self.path, name)
        return self._arrays[name]

    t = property(lambda self: self._get("t"))
    y = property(lambda self: self._get("y"))
    energy = property(lambda self: self._get("energy"))
    sensors = property(lambda self: self._get("sensors"))

    @property
    def success(self):
        return self.status == "finished"


def state_rest_names(cm):
    """Names of the state's columns after q and u: W_nc, each actuator's work
    W_<actuator>, the DC motors' electrical states (W_source_<actuator>,
    W_resistive_<actuator>, i_<actuator>), then lambda_<row> and mu_<row> of each
    active constraint row."""
    rows = range(cm.nconstraints)
    actuators = getattr(cm.model, "actuators", {})
    return (
        ["W_nc"]
        + [f"W_{a}" for a in actuators]
        + electrical_state_names(actuators.values())
        + [f"lambda_{k}" for k in rows]
        + [f"mu_{k}" for k in rows]
    )


def _read_outputs(path, name):
    """One of Simulation's arrays (t, y, energy, sensors) from the result file."""
    import h5py

    with h5py.File(path, "r", locking=False) as f:
        if name == "t":
            return f["time"][:]
        if name == "y":
            return np.hstack([f["q"][:], f["u"][:], f["state_rest"][:]])
        if name == "energy":
            return np.stack([f[f"energy/{c}"][:] for c in ENERGY_COMPONENTS], axis=1)
        names = [
            n.decode() if isinstance(n, bytes) else str(n) for n in f["sensors"].attrs["names"]
        ]
        n = f["time"].shape[0]
        parts = [f[f"sensors/{k}"][:].reshape(n, -1) for k in names]
        return np.hstack(parts) if parts else np.zeros((n, 0))


class _Progress:
    """The progress bar of a run on a terminal (tqdm): simulated time against t_end,
    the rate (simulated s per wall s, the compilation reported by `watch`, a
    CompileWatch, left out) and the steps taken."""

    def __init__(self, enabled, t0, t_end, watch):
        self.enabled = enabled
        self.t0, self.t_end = t0, t_end
        self.watch = watch
        self.compiled = watch.elapsed()
        self.start = time.perf_counter()
        self.last = -1.0
        self.bar = None
        if enabled:
            from tqdm import tqdm

            size = shutil.get_terminal_size(fallback=(100, 24))
            self.bar = tqdm(  # a terminal of unknown size (0 x 0) gets 100 x 24
                total=t_end - t0,
                file=sys.stderr,
                ncols=size.columns if size.columns > 40 else 100,
                nrows=size.lines if size.lines > 0 else 24,
                bar_format="{percentage:3.0f}%|{bar}| {desc}",
                leave=True,
            )

    def update(self, t, nsteps, force=False):
        now = time.perf_counter()
        if self.bar is None or (not force and now - self.last < PROGRESS_INTERVAL):
            return
        self.last = now
        wall = now - self.start - (self.watch.elapsed() - self.compiled)
        rate = (t - self.t0) / wall if wall > 0 else 0.0
        self.bar.n = min(t - self.t0, self.t_end - self.t0)
        self.bar.set_description_str(
            f"t = {t:.4g}/{self.t_end:.4g} s, {rate:.3g} s/s, {nsteps} steps", refresh=False
        )
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def simulate(
    model,
    path=None,
    *,
    t_end=None,
    rtol=None,
    atol=None,
    method=None,
    output_step=None,
    max_step=None,
    formulation=None,
    constraints=None,
    rho_inf=None,
    fixed_step=None,
    progress=False,
    log=None,
    history=None,
    compile_elsewhere=False,
    verify=False,
    verify_factor=DEFAULT_FACTOR,
    verify_limit=DEFAULT_LIMIT,
    verify_window=None,
):
    """Integrate `model` (a Model) and write the result file `path` (None: no file).
    `formulation`: "joint", "order-n" (trees) or "absolute" (every joint a
    constraint, flexmbs.model.absolute); `constraints`: the formulation of
    closed loops and rolling contacts ("ggl" or "projection"); see SolverSettings.

    Settings not given come from the model's [solver] and [output] sections. Returns
    a Simulation. A failure of the integrator is a status ("failed") with a message,
    recorded in the file; an interrupt (Ctrl-C) is recorded and then re-raised.
    The time spent compiling kernels (statistics["compile_time"], s) is left out of
    the progress line's rate.

    `history`: keep every output row in memory (True) or only the last (False: the
    memory of a run does not grow with its outputs; the Simulation then reads them
    from the result file when asked). Default: True without a file, False with one.

    `compile_elsewhere`: on an empty kernel cache with a second core free, compile the
    output quantities in another process while this one compiles the equations of
    motion and the integrator (flexmbs.simulation.output_kernels; the command line does).

    `verify`: also run the model at rtol and atol divided by `verify_factor` (no file)
    and compare the two runs, output group by output group, each against its own
    scale (flexmbs.simulation.convergence); the Simulation's `convergence` then holds the
    outcome (None without `verify`), `passed` when every group changed by less than
    `verify_limit` of its scale; `verify_window` (t0, t1): only the outputs from t0
    to t1 s are compared.

    The result file is locked from the start until it is closed: while another run
    (or ResultWriter) writes to `path`, this one is refused before any work with
    flexmbs.io.output_lock.OutputLocked, which names it.
    """
    keep = path is None if history is None else bool(history)
    if not keep and path is None:
        raise ValueError("history=False needs a result file (path) to keep the outputs")
    if verify:
        check_verify_settings(verify_factor, verify_limit)
        keep = True
    settings = dict(
        zip(
            RUN_SETTINGS,
            (t_end, rtol, atol, method, output_step, max_step)
            + (formulation, constraints, rho_inf, fixed_step),
        )
    )
    lock = None if path is None else _locked_result_file(path, log)
    start = time.perf_counter()
    try:
        with CompileWatch() as compiling, _signals_end_the_run():
            sim = _simulate(
                model, path, settings, progress, log, compiling, keep, compile_elsewhere, lock
            )
    finally:
        if lock is not None:
            lock.release()  # the writer lets go of it first, at its close
    if not verify:
        return sim
    wall = time.perf_counter() - start
    return _verified(model, sim, settings, wall, verify_factor, verify_limit, log, verify_window)


def _locked_result_file(path, log):
    """The OutputLock of the result file `path`, taken before any work (one writer per
    file: flexmbs.io.output_lock.OutputLocked, naming the other, when it is held); a
    lock a finished process left behind is taken over and `log` told."""
    from ..io.output_lock import OutputLock

    lock = OutputLock(path).acquire()
    if lock.stale is not None and log is not None:
        log(
            f"{path}: taking over the lock that pid {lock.stale.get('pid')} on "
            f"{lock.stale.get('host')} left (that run is gone)"
        )
    return lock


def _verified(model, sim, settings, wall, factor, limit, log, window=None):
    """`sim` (which took `wall` s) with its convergence check: the same run at
    `settings`' rtol and atol divided by `factor`, compared output group by group
    (flexmbs.simulation.convergence.compare_runs, against `limit`)."""
    s = model.solver.with_changes(
        settings["method"], settings["t_end"], settings["rtol"], settings["atol"]
    )
    tight = dict(settings, rtol=s.rtol / factor, atol=s.atol / factor)
    if log is not None:
        log(f"verifying: the same run at rtol {tight['rtol']:g}, atol {tight['atol']:g}")
    start = time.perf_counter()
    with CompileWatch() as compiling, _signals_end_the_run():
        fine = _simulate(model, None, tight, False, None, compiling, True, False)
    sim.convergence = Convergence(
        s.method,
        float(s.rtol),
        float(s.atol),
        float(factor),
        float(limit),
        statistics=(sim.statistics, fine.statistics),
        wall_time=(wall, time.perf_counter() - start),
        status=(sim.status, fine.status),
        message=sim.message or fine.message,
        window=None if window is None else (float(window[0]), float(window[1])),
    )
    if sim.status == fine.status == "finished":
        sim.convergence.groups = compare_runs(model, sim, fine, limit, window)
    return sim


TERMINATING_SIGNALS = ("SIGTERM", "SIGHUP")
"""Signals that end a run as Ctrl-C does (RunTerminated), the last state written."""


@contextlib.contextmanager
def _signals_end_the_run():
    """While a run goes: TERMINATING_SIGNALS raise RunTerminated (in the main thread;
    elsewhere the handlers cannot be set and the signals keep theirs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise RunTerminated(signum)

    previous = {}
    for name in TERMINATING_SIGNALS:
        if hasattr(signal, name):
            sig = getattr(signal, name)
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _check_finite_start(cm, y0, source):
    """ModelError naming the first coordinate (or the multipliers) whose initial value
    or rate is not finite: a value of the model, or of a driver at t = 0, overflows."""
    bad = np.flatnonzero(~np.isfinite(y0))
    if not bad.size:
        return
    k, nq = int(bad[0]), cm.nq
    if k < 2 * nq:
        item = f'coordinate "{cm.coordinate_names[k % nq]}"'
        fld = "initial" if k < nq else "initial_rate"
    else:
        item, fld = "the initial state", None
        if k >= 2 * nq + cm.nworks:
            item = "the constraint forces of the initial state"
    raise ModelError(
        f"is {y0[k]} at t = 0: a value of the model, or a driver's value or rate at t = 0, "
        "overflows the floating-point range (numbers near 1e308?)",
        item,
        fld,
        source,
    )


def _named_failing_elements(cm, integ):
    """flexmbs.simulation.failure_diagnosis's text for a failed run; "" if the diagnosis itself
    fails (it must not hide the failure it explains)."""
    try:
        return failing_force_elements(cm, failure_states(integ))
    except Exception:  # noqa: BLE001 - a diagnosis, never the cause of another failure
        return ""


def _galpha_settings_unused(settings):
    """The `galpha` settings given to another solver, as text ("" if none): rho_inf
    other than its default, and fixed_step, given in [solver] (not [solver.galpha])."""
    return settings.galpha_settings_unused()


# --------------------------------------------------------------------------------------
# The run, step by step: prepare_run, start_state, open_result, OutputRecorder,
# build_integrator, run_batches, finish_run (docs/development.md, "The path of a run").

RUN_SETTINGS = (
    "t_end",
    "rtol",
    "atol",
    "method",
    "output_step",
    "max_step",
    "formulation",
    "constraints",
    "rho_inf",
    "fixed_step",
)
"""The settings a run may take in place of the model file's [solver] and [output]."""


@dataclass
class PreparedRun:
    """A model made ready to integrate: `cm` the compiled model (consistent with its
    loops), `settings` the solver's (SolverSettings), `output` the output's
    (OutputSettings), `report` the consistency report of a model with constraints
    (None for a tree), `times` its output times (OutputTimes from t = 0), `sampler`
    its sampled controllers (flexmbs.simulation.sampled_control; None without, set by
    start_state)."""

    model: object
    cm: object
    settings: SolverSettings
    output: object
    report: object = None
    times: object = None
    sampler: object = None

    @property
    def projection(self):
        """The constraints in Shui and Zhang's projection formulation."""
        return self.report is not None and self.settings.constraints == "projection"


def prepare_run(model, overrides=None):
    """The model's settings with `overrides` ({name: value} of RUN_SETTINGS, None for
    the model file's), its compiled form made consistent, and the check that the
    solver fits the model: a PreparedRun. A ModelError names the model file."""
    values = {name: None for name in RUN_SETTINGS}
    values.update(overrides or {})
    output_step = values.pop("output_step")
    try:
        s = model.solver.with_changes(**values)
        out = model.output.with_changes(output_step)
        times = OutputTimes(0.0, s.t_end, out.step)
        check_run_work(model, s, s.t_end)
        cm = compile_absolute(model) if s.formulation == "absolute" else compile_model(model)
        report = make_consistent(cm) if cm.has_constraints else None
        check_solver_fits(model, cm, s, report)
        _check_discrete_state(model, s, report is not None)
    except ModelError as exc:
        raise exc.with_source(model.source_path or "<python>") from None
    return PreparedRun(model, cm, s, out, report, times)


def check_solver_fits(model, cm, s, report):
    """ModelError unless the solver settings `s` can run the compiled model: a
    quasi-static start only for trees, closed loops only with the DAE solvers, the
    projection and the absolute coordinates only with `bdf`, `galpha` only with some
    free coordinate, the Order-N formulation only for trees."""
    quasi = [
        b.name for _, b in cm.beams if isinstance(b.initial, str) and b.initial == "quasi-static"
    ]
    if report is not None and quasi:
        raise ModelError(
            "a quasi-static start is for trees: with closed loops or rolling "
            "contacts the constraints hold part of the elastic accelerations, "
            "which the elastic coordinates alone cannot zero; use initial = "
            '"static" or "undeformed"',
            f'body "{quasi[0]}"',
            "initial",
        )
    if report is not None and s.method in SCIPY_METHODS:
        what = ", ".join(
            [f"cut joints {', '.join(cm.topology.cut_joint_names)}"]
            * bool(cm.topology.cut_joint_names)
            + [f"rolling contacts {', '.join(model.contacts)}"] * bool(cm.ncontacts)
        )
        raise ModelError(
            f"a model with closed loops or rolling contacts ({what}) is "
            f'a DAE: expected the solver "bdf" or "ida", got "{s.method}"',
            "solver",
            "method",
        )
    if report is not None and s.constraints == "projection" and s.method != "bdf":
        raise ModelError(
            f'the projection formulation runs with the solver "bdf" '
            f'(its drift correction restarts it), got "{s.method}"',
            "solver",
            "method",
        )
    if cm.nq == 0 and s.method == "galpha":
        raise ModelError(
            "every joint coordinate of the model is driven: it has no "
            'position whose error galpha could control; use "bdf"',
            "solver",
            "method",
        )
    if s.formulation == "absolute" and s.method != "bdf":
        raise ModelError(
            f'the absolute-coordinate formulation runs with the solver "bdf" '
            f'(moving its references restarts it), got "{s.method}"',
            "solver",
            "method",
        )
    if report is not None and s.formulation == "order-n":
        raise ModelError(
            "the Order-N formulation is for trees without constraints; "
            "this model has closed loops or rolling contacts",
            "solver",
            "formulation",
        )


def log_run_warnings(run, t0, log):
    """What the user should know before the run goes: the model's warnings, an output
    step as long as the run, galpha's settings given to another solver."""
    if log is None:
        return
    s, out = run.settings, run.output
    for text in run.cm.warnings:
        log("warning: " + text)
    if out.step >= s.t_end - t0:
        log(
            f"warning: the output step ({out.step:g} s) is not shorter than the run "
            f"({s.t_end - t0:g} s): only its start and its end are recorded"
        )
    unused = _galpha_settings_unused(s)
    if unused:
        log(
            f'warning: {unused} set, which only the solver "galpha" uses; "{s.method}" runs without'
        )


def start_state(run, t0, log=None):
    """(system, y0): the System the integrator steps (build_system) and the state it
    starts from, consistent with the constraints (the projection's start, or the
    multipliers and y' of the index-2 form), with the projection's drift correction
    and the absolute coordinates' rebasing as the system's refresh; the sampled
    controllers' first samples taken at t0 (run.sampler)."""
    cm, s = run.cm, run.settings
    system = build_system(cm, s.constraints, s.formulation, s.linear_solver)
    run.sampler = _with_sampled_control(cm, system, t0, s.t_end)
    y0 = cm.initial_state()
    if run.projection:
        y0, _ = _projection.projection_start(cm, system, t0, y0)
        system.refresh = lambda t, y: _projection.correct_drift(cm, system, t, y, s.rtol, s.atol)
    elif run.report is not None:
        y0, _ = initial_derivative(cm, system, t0, y0)
    if s.formulation == "absolute":
        _with_rebasing(cm, system)
    _check_finite_start(cm, y0, run.model.source_path or "<python>")
    if run.sampler is not None:  # the first samples, so that the first output holds them
        run.sampler.at_breakpoint(t0, y0)
    if run.report is not None and log is not None:
        log(
            run.report.text()
            + ("\nconstraints: Shui and Zhang's projection formulation" if run.projection else "")
        )
    return system, y0


def result_settings(run, output_step):
    """The run's settings as the result file records them (/solver)."""
    s, model = run.settings, run.model
    folder = os.path.dirname(os.path.abspath(model.source_path)) if model.source_path else ""
    galpha = {"rho_inf": s.rho_inf, "fixed_step": s.fixed_step or 0.0}
    return {
        "t_end": s.t_end,
        "rtol": s.rtol,
        "atol": s.atol,
        "formulation": s.formulation,
        "output_step": output_step,
        "model_folder": folder,
        "max_step": s.max_step,
        **(galpha if s.method == "galpha" else {}),
    }


def open_result(path, run, settings, lock=None):
    """The ResultWriter of the result file `path` (None: no file) for the run, with
    the model, its topology, names, units and modes, and `settings`
    (result_settings); `lock` the file's OutputLock, held since the run began
    (flexmbs.io.output_lock), which the writer releases at its close."""
    if path is None:
        return None
    from ..io.results import ResultWriter

    model, cm = run.model, run.cm
    return ResultWriter(
        path,
        lock=lock,
        model_text=model.source_text or "",
        model_json=model_to_json(model),
        topology=cm.topology,
        coordinate_names=cm.coordinate_names,
        sensor_names=cm.sensor_names,
        sensor_sizes=cm.sensor_sizes,
        solver_name=run.settings.method,
        overrides=model.overrides,
        modes={
            name: b.basis_record() if hasattr(b, "basis_record") else basis_record(b)
            for name, b in model.bodies.items()
            if getattr(b, "basis", None) is not None
        },
        state_rest_names=state_rest_names(cm),
        coordinate_units=coordinate_units(model, cm.coordinate_names),
        sensor_units=[sensor_units(model, n, k) for n, k in zip(cm.sensor_names, cm.sensor_sizes)],
        settings=settings,
    )


class OutputRecorder:
    """Where the outputs of a run go: the energies and sensors computed for a batch of
    states (`emit`), the result file's rows, the VTKHDF shapes beside it, the watches
    of the joints' singular configurations and of the beams' small-deformation range,
    and the rows kept in memory (all of them with `keep`, else the last).

    The outputs are computed in a workspace of their own, whose discrete state is that
    of each output's time (the pieces of the time laws in force then, each motor
    limited by value): the integrator's holds the segment it steps, which a state
    event may already have changed when outputs before it are filled from the
    interpolant; the sampled controllers' outputs (`sampler`, flexmbs.simulation.sampled_control)
    are those in force at each output's time. `vtk_path` the VTKHDF file ([output]
    vtk = true), None for none. The sensors are recorded as their instruments give
    them (dead time, lag, resolution: flexmbs.simulation.instruments)."""

    def __init__(self, cm, writer, keep, log=None, vtk_path=None, sampler=None):
        self.cm, self.writer, self.keep, self.log = cm, writer, keep, log
        self.ws = cm.new_workspace()
        self.sampler = sampler
        self.instruments = InstrumentFilter(
            [cm.model.sensors[n] for n in cm.sensor_names], cm.arrays.sensor_offset
        )
        self.rows = ([], [], [], [])  # t, y, energy, sensors
        self.shapes = None
        if vtk_path is not None:
            from ..io.deformed_shape import DeformedShape
            from ..io.vtkhdf import VtkHdfWriter

            self.shapes = VtkHdfWriter(vtk_path, DeformedShape(cm))
        self.singularity = _SingularityWatch(cm)
        self.deformation = DeformationWatch(cm)
        self.deformation_said = False

    def outputs(self, t, y):
        """(energy (k, 7), sensors (k, nsensor_values)) at the states y (k, n) at the
        times t (k,)."""
        e = np.zeros((len(t), len(ENERGY_COMPONENTS)))
        sv = np.zeros((len(t), self.cm.nsensor_values))
        _output_quantities(self.cm, self.ws, self.sampler, t, y, e, sv)
        if self.instruments:
            sv = self.instruments.apply(t, sv)
        return e, sv

    def emit(self, t, y):
        """Record the outputs at the states y (k, n) at the times t (k,)."""
        self.record(t, y, *self.outputs(t, y))

    def record(self, t, y, e, sv):
        """Record rows whose energies e and sensors sv are known."""
        ts, ys, es, ss = self.rows
        if self.keep or not ts:
            ts.append(t)
            ys.append(y)
            es.append(e)
            ss.append(sv)
        else:
            ts[0], ys[0], es[0], ss[0] = t[-1:], y[-1:], e[-1:], sv[-1:]
        self._append_shapes(t, y)
        self.singularity.update(t, y)
        self.deformation.update(t, y)
        if not self.deformation_said and self.deformation.report():
            self._say_small_deformation()
        if self.writer is not None:
            nq = self.cm.nq
            self.writer.append(t, y[:, :nq], y[:, nq : 2 * nq], e, sv, y[:, 2 * nq :])

    @property
    def t_last(self):
        """The time of the last row recorded (s)."""
        return float(self.rows[0][-1][-1])

    def arrays(self):
        """(t, y, energy, sensors) of the rows kept (None each without `keep`: the
        Simulation reads them from the file)."""
        if not self.keep:
            return [None] * 4
        return [np.concatenate(a) for a in self.rows]

    def _append_shapes(self, t, y):
        if self.shapes is None:
            return
        try:
            for tk, yk in zip(t, y):
                self.shapes.append(float(tk), yk[: self.cm.nq])
            self.shapes.flush()
        except OSError as exc:  # the run goes on: the result file is what counts
            if self.log is not None:
                self.log(f"warning: {self.shapes.path} ends at t = {self.shapes.t_last:g} s: {exc}")
            self.shapes.close()
            self.shapes = None

    def _say_small_deformation(self):
        text = "a beam is " + self.deformation.report()
        if self.log is not None:  # the run's warnings go to its log, once
            self.log("warning: " + text)
        else:
            warnings.warn(text, SmallDeformationWarning, stacklevel=4)
        if self.writer is not None:  # in the file from the next commit: a killed run
            self.writer.set_solver_statistics(  # keeps it for `flexmbs energy`
                {"small_deformation": self.deformation.report()}
            )
        self.deformation_said = True

    def close(self):
        """Close the VTKHDF file."""
        if self.shapes is not None:
            self.shapes.close()

    def statistics(self):
        """The watches' findings for the run's statistics."""
        out = {}
        if self.deformation.report():
            out["small_deformation"] = self.deformation.report()
        if self.singularity.report():
            out["joint_singularity"] = self.singularity.report()
        return out


def build_integrator(run, system, t0, y0, first_output, compile_elsewhere=False, log=None):
    """The integrator of the run (make_integrator) from (t0, y0); `first_output()`
    records the state at t0, before the integrator is built, or after it when the
    output kernels compile in a second process meanwhile (`compile_elsewhere`,
    flexmbs.cli.precompile)."""
    s = run.settings
    helper = OutputKernelsElsewhere.start_if_useful() if compile_elsewhere else None
    if helper is None:
        first_output()
    elif log is not None:
        log("compiling the output quantities in a second process, the rest here")
    try:
        integ = make_integrator(
            s.method, system, t0, y0, s.t_end, s.rtol, s.atol, s.max_step, s.rho_inf, s.fixed_step
        )
    except BaseException:
        if helper is not None:
            helper.stop()
        raise
    if helper is not None:
        helper.wait()  # the output kernels are in the cache now, or compile here
        first_output()
    return integ


def run_batches(integ, times, recorder, writer=None, bar=None):
    """Integrate through the output times (OutputTimes) a batch at a time, each batch
    recorded; the result file committed and the progress shown between batches.
    Returns (status, message): "finished", or "failed" with why (and the force
    elements that failed, flexmbs.simulation.failure_diagnosis), the state at a failure
    recorded."""
    done = 0
    while integ.status == "running" and done < len(times):
        n, y = integ.advance(times[done : done + OUTPUT_BATCH], WALL_BUDGET)
        if n:
            recorder.emit(times[done : done + n], y)
            done += n
        if writer is not None:
            writer.commit_if_due(integ.t)
        if bar is not None:
            bar.update(integ.t, integ.statistics()["nsteps"])
    if bar is not None:
        bar.update(integ.t, integ.statistics()["nsteps"], force=True)
    if integ.status == "failed" and integ.t > recorder.t_last:
        recorder.emit(np.array([integ.t]), integ.y[None, :])  # the state at the failure
    status = integ.status if integ.status != "running" else "finished"
    message = integ.message
    if status == "failed":
        message = (message or "the integrator stopped") + _named_failing_elements(
            recorder.cm, integ
        )
    return status, message


def close_failed_run(writer, integ, recorder, exc):
    """Close the result file of a run that an exception ended, the integrator's
    statistics and the reason kept (an interrupt, a signal, an error)."""
    if writer is None:
        return
    if isinstance(exc, KeyboardInterrupt):
        if integ is not None:
            try:  # the signal may have come inside the integrator's Python side
                stats = integ.statistics()
            except Exception:  # noqa: BLE001 - the file is closed with the signal all the same
                stats = {}
            stats.update(recorder.statistics())
            stats.pop("joint_singularity", None)
            writer.set_solver_statistics(stats)
        writer.close(
            f"failed: {exc}"
            if isinstance(exc, RunTerminated)
            else "failed: interrupted by the user"
        )
    else:
        writer.close(f"failed: {type(exc).__name__}: {exc}")


def finish_run(run, integ, recorder, status, message, path=None, compile_time=0.0, log=None):
    """The Simulation of a run that ended with `status` and `message`: its statistics
    (the integrator's, the compile time, the watches'), the result file closed with
    the status."""
    stats = integ.statistics()
    stats["compile_time"] = compile_time
    if run.settings.formulation == "absolute":
        stats["reference_moves"] = integ.system.reference_moves
    stats.update(recorder.statistics())
    if "joint_singularity" in stats and log is not None:
        log("warning: the motion came " + stats["joint_singularity"])
    writer = recorder.writer
    if writer is not None:
        writer.set_solver_statistics(stats)
        writer.close("finished" if status == "finished" else f"failed: {message}")
    sim = Simulation(
        *recorder.arrays(),
        coordinate_names=run.cm.coordinate_names,
        status=status,
        message=message,
        statistics=stats,
        path=None if path is None else str(path),
    )
    sim.small_deformation = recorder.deformation.report() or None
    sim.sensor_names = list(run.cm.sensor_names)
    sim.sensor_sizes = [int(k) for k in run.cm.sensor_sizes]
    return sim


def _simulate(model, path, overrides, progress, log, compiling, keep, compile_elsewhere, lock=None):
    """A run of `model` (simulate's arguments; `overrides` {name: value} of
    RUN_SETTINGS; `lock` the result file's OutputLock), in the steps of the module's
    run path."""
    t0 = 0.0
    run = prepare_run(model, overrides)
    times = run.times
    log_run_warnings(run, t0, log)
    system, y0 = start_state(run, t0, log)
    writer = open_result(path, run, result_settings(run, run.output.step), lock)
    vtk = Path(path).with_suffix(".vtkhdf") if path is not None and run.output.vtk else None
    recorder = OutputRecorder(run.cm, writer, keep, log, vtk, run.sampler)
    recorder.singularity.update(np.array([t0]), y0[None, :])
    if log is not None and recorder.singularity.report():
        log("warning: the initial state is " + recorder.singularity.report())
    bar = _Progress(progress, t0, run.settings.t_end, compiling)
    integ = None
    try:
        integ = build_integrator(
            run,
            system,
            t0,
            y0,
            lambda: recorder.emit(np.array([t0]), y0[None, :]),
            compile_elsewhere,
            log,
        )
        status, message = run_batches(integ, times, recorder, writer, bar)
    except BaseException as exc:
        bar.close()
        close_failed_run(writer, integ, recorder, exc)
        raise
    finally:
        recorder.close()
    bar.close()
    return finish_run(run, integ, recorder, status, message, path, compiling.seconds, log)
