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
from pathlib import Path

import numpy as np

from .compile_notice import CompileWatch
from .convergence import (
    DEFAULT_FACTOR,
    DEFAULT_LIMIT,
    Convergence,
    check_verify_settings,
    compare_runs,
)
from .dynamics import absolute as _absolute
from .dynamics import order_n as _order_n
from .dynamics import projection as _projection
from .dynamics import stick_slip as _stick_slip
from .dynamics import stick_slip_events as _stick_events
from .dynamics import switches as _switches
from .dynamics import system as _system
from .dynamics.constrained import initial_derivative, make_consistent, reselect_rows
from .dynamics.energy import ENERGY_COMPONENTS
from .dynamics.model_switches import dae_model_switch_values
from .dynamics.outputs import output_quantities
from .elements.deformation_range import DeformationWatch
from .elements.modal import basis_record
from .errors import ModelError, RunTerminated
from .failure_diagnosis import failing_force_elements, failure_states
from .instruments import InstrumentFilter
from .kinematics.singularity import SINGULAR_THRESHOLD, singularity_measure, three_rotation_joints
from .kinematics.timefunctions import evaluate_time_function
from .model.absolute import absolute_model, set_elastic_rates
from .model.compiled import compile_model
from .model.description import SOLVER_METHODS
from .model.serialize import model_to_json
from .model.timefunctions import time_function_breakpoints
from .model.units import coordinate_units, sensor_units
from .output_kernels import OutputKernelsElsewhere
from .sampled_control import SampledControllers
from .solvers.base import System
from .solvers.bdf_integrator import BdfIntegrator, GalphaIntegrator
from .solvers.ida import IdaIntegrator
from .solvers.kernel_call import KernelCall
from .solvers.scipy_ivp import SCIPY_METHODS, ScipyIntegrator

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


def build_system(cm, constraints="ggl", formulation="joint"):
    """The System (ODE right-hand side and residual) of a compiled model. A tree: in
    the joint-coordinate or the Order-N `formulation`. With cut joints or rolling
    contacts: the stabilised index-2 residual (docs/explanation/formulation.md section 5), the
    multipliers algebraic, no elimination of the positions, and a right-hand side that
    gives the consistent y' of a consistent state (the start of the DAE integrators;
    flexmbs.dynamics.constrained); or, with `constraints` = "projection", Shui and Zhang's
    projection formulation (flexmbs.dynamics.projection), whose drift correction
    `simulate` sets as the system's refresh."""
    m = cm.arrays
    ws = cm.new_workspace()
    n = cm.nstate
    columns = _system.dae_analytic_columns(n, cm.nq, cm.nactuators)
    if cm.nconstraints:
        algebraic = np.zeros(n, dtype=bool)  # the multipliers, after q, u and the works
        algebraic[2 * cm.nq + 1 + cm.nactuators :] = True
        projection = constraints == "projection"
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
                _projection.dae_projection_residual
                if projection
                else _system.dae_constrained_residual
            ),
            dae_jacobian=_system.dae_work_column,
            dae_jacobian_columns=columns,
            second_order=0,
            dae_mass=None if projection else _system.dae_constrained_mass,
            index2=not projection,
            npositions=cm.nq,
        )
        if projection:
            system.rhs = lambda t, y: _projection.projection_start(cm, system, t, y)[1]
            return _with_discontinuities(cm, system)
        system.rhs = lambda t, y: initial_derivative(cm, system, t, y)[1]
        if len(m.con_kind) > cm.nconstraints:  # redundant rows: watch the chosen ones
            system.refresh = lambda t, y: reselect_rows(cm, system, t, y)
        return _with_discontinuities(cm, system)

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
    if cm.nq == 0:
        dae_mass = None  # every coordinate driven: no rows after eliminated positions
    elastic = _elastic_speed_columns(cm) if dae_mass is not None else None
    if elastic is not None:
        dae_mass = _system.dae_mass_elastic_block
    derivative_call = KernelCall(derivative, (m, ws), n, 1)

    def rhs(t, y):
        return derivative_call(t, y).copy()

    system = System(
        n=n,
        rhs=rhs,
        residual_kernel=residual,
        m=m,
        ws=ws,
        algebraic=np.zeros(n, dtype=bool),
        dae_residual=dae_residual,
        dae_jacobian=_system.dae_work_column,
        dae_jacobian_columns=columns,
        second_order=cm.nq,
        dae_mass=dae_mass,
        npositions=cm.nq,
        dae_elastic_columns=elastic,
    )
    return _with_discontinuities(cm, system)


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
        if np.any(m.flex_d[m.flex_ptr[k, 3] : m.flex_ptr[k + 1, 3]] != 0.0):
            test[cm.nq + q0 : cm.nq + q0 + nf] = False
    return None if test.all() else test


def _with_discontinuities(cm, system):
    """The system's breakpoints (the times where a time function of the model jumps
    or kinks), its segment hook (the piece of each time function in force on a
    segment: ws.segment_time) and the actuators' torque limits as switch functions
    (flexmbs.dynamics.switches; ws.act_branch), for the integrators' events
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

        def switched(t, y, g):
            if "actuators" in blocks:
                ws.act_branch[:] = _switches.actuator_branches(g[blocks["actuators"]])
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
    """The sampled controllers of the model (flexmbs.sampled_control) on the system:
    their instants among its breakpoints, their updates at the start of each
    segment (System.sample). Returns them (None without)."""
    m, ws = cm.arrays, system.ws
    if not np.any(np.asarray(m.ctrl_sampled) == 1):
        return None
    row = np.zeros((1, len(ENERGY_COMPONENTS)))
    values = np.zeros((1, cm.nsensor_values))

    def sensors_at(t, y):
        output_quantities(
            m, ws, np.array([float(t)]), np.ascontiguousarray(y)[None, :], row, values
        )
        return values[0]

    sampler = SampledControllers(cm, ws, t0, t_end, sensors_at)
    system.breakpoints = np.union1d(
        np.asarray(system.breakpoints if system.breakpoints is not None else [], dtype=float),
        sampler.breakpoints,
    )
    system.sample = sampler.at_breakpoint
    return sampler


def _check_discrete_state(model, settings, constrained):
    """ModelError unless the run's settings can hold the model's stick-slip friction
    and sampled controllers: they are discrete state, which the integrators "bdf"
    and "galpha" keep between their segments; a stuck joint's row is the joint
    formulation's, on a tree."""
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
    if sticky and (settings.formulation != "joint" or constrained):
        raise ModelError(
            f'friction "{sticky[0]}": stick-slip friction holds a stuck joint by its row '
            'of the joint formulation of a tree; use law = "regularized" for this model',
            f'friction "{sticky[0]}"',
            "law",
        )


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
        output_quantities(
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


class SmallDeformationWarning(UserWarning):
    """A beam of the run left the small-deformation range of the floating-frame beam
    (flexmbs.elements.deformation_range): its results no longer describe the beam."""


class Simulation:
    """What `simulate` returns: the outputs and the run's outcome.

    t (n,) s, y (n, nstate) the states [q, u, w, lambda, mu] at the outputs, energy
    (n, 7) (ENERGY_COMPONENTS), sensors (n, number of sensor values); status
    ("finished" or "failed"), message, statistics, path (the result file or None);
    small_deformation: the text saying which beam left the small-deformation range
    and how far (None if none did; a SmallDeformationWarning was issued then);
    convergence: the convergence check of simulate(..., verify=True) (a
    flexmbs.convergence.Convergence; None without it). sensor_names, sensor_sizes:
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
    W_<actuator>, then lambda_<row> and mu_<row> of each active constraint row."""
    rows = range(cm.nconstraints)
    return (
        ["W_nc"]
        + [f"W_{a}" for a in getattr(cm.model, "actuators", {})]
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
    motion and the integrator (flexmbs.output_kernels; the command line does).

    `verify`: also run the model at rtol and atol divided by `verify_factor` (no file)
    and compare the two runs, output group by output group, each against its own
    scale (flexmbs.convergence); the Simulation's `convergence` then holds the
    outcome (None without `verify`), `passed` when every group changed by less than
    `verify_limit` of its scale.
    """
    keep = path is None if history is None else bool(history)
    if not keep and path is None:
        raise ValueError("history=False needs a result file (path) to keep the outputs")
    if verify:
        check_verify_settings(verify_factor, verify_limit)
        keep = True
    settings = (
        t_end,
        rtol,
        atol,
        method,
        output_step,
        max_step,
        formulation,
        constraints,
        rho_inf,
        fixed_step,
    )
    start = time.perf_counter()
    with CompileWatch() as compiling, _signals_end_the_run():
        sim = _simulate(model, path, *settings, progress, log, compiling, keep, compile_elsewhere)
    if not verify:
        return sim
    wall = time.perf_counter() - start
    s = model.solver.with_changes(method, t_end, rtol, atol)
    tight = dict(
        zip(
            (
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
            ),
            settings,
        )
    )
    tight.update(rtol=s.rtol / verify_factor, atol=s.atol / verify_factor)
    if log is not None:
        log(f"verifying: the same run at rtol {tight['rtol']:g}, atol {tight['atol']:g}")
    start = time.perf_counter()
    with CompileWatch() as compiling, _signals_end_the_run():
        fine = _simulate(model, None, *tight.values(), False, None, compiling, True, False)
    sim.convergence = Convergence(
        s.method,
        float(s.rtol),
        float(s.atol),
        float(verify_factor),
        float(verify_limit),
        statistics=(sim.statistics, fine.statistics),
        wall_time=(wall, time.perf_counter() - start),
        status=(sim.status, fine.status),
        message=sim.message or fine.message,
    )
    if sim.status == fine.status == "finished":
        sim.convergence.groups = compare_runs(model, sim, fine, verify_limit)
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


def _named_failing_elements(cm, integ):
    """flexmbs.failure_diagnosis's text for a failed run; "" if the diagnosis itself
    fails (it must not hide the failure it explains)."""
    try:
        return failing_force_elements(cm, failure_states(integ))
    except Exception:  # noqa: BLE001 - a diagnosis, never the cause of another failure
        return ""


def _galpha_settings_unused(settings):
    """The `galpha` settings given to another solver, as text ("" if none): rho_inf
    other than its default, and fixed_step, given in [solver] (not [solver.galpha])."""
    return settings.galpha_settings_unused()


def _simulate(
    model,
    path,
    t_end,
    rtol,
    atol,
    method,
    output_step,
    max_step,
    formulation,
    constraints,
    rho_inf,
    fixed_step,
    progress,
    log,
    compiling,
    keep,
    compile_elsewhere,
):
    source = model.source_path or "<python>"
    try:
        s = model.solver.with_changes(
            method, t_end, rtol, atol, max_step, formulation, constraints, rho_inf, fixed_step
        )
        out = model.output.with_changes(output_step)
        t0 = 0.0
        t_out = OutputTimes(t0, s.t_end, out.step)
        cm = compile_absolute(model) if s.formulation == "absolute" else compile_model(model)
        report = make_consistent(cm) if cm.has_constraints else None
        quasi = [
            b.name
            for _, b in cm.beams
            if isinstance(b.initial, str) and b.initial == "quasi-static"
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
                f'a DAE: expected the solver "bdf" or "ida", got '
                f'"{s.method}"',
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
                f"the absolute-coordinate formulation runs with the solver "
                f'"bdf" (moving its references restarts it), got '
                f'"{s.method}"',
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
        _check_discrete_state(model, s, report is not None)
    except ModelError as exc:
        raise exc.with_source(source) from None
    method, t_end, rtol, atol, max_step = s.method, s.t_end, s.rtol, s.atol, s.max_step
    output_step = out.step
    if log is not None:
        for text in cm.warnings:
            log("warning: " + text)
        if out.step >= t_end - t0:
            log(
                f"warning: the output step ({out.step:g} s) is not shorter than the run "
                f"({t_end - t0:g} s): only its start and its end are recorded"
            )
        unused = _galpha_settings_unused(s)
        if unused:
            log(
                f'warning: {unused} set, which only the solver "galpha" uses; '
                f'"{method}" runs without'
            )
    projection = report is not None and s.constraints == "projection"
    system = build_system(cm, s.constraints, s.formulation)
    sampler = _with_sampled_control(cm, system, t0, t_end)
    instruments = InstrumentFilter(
        [model.sensors[n] for n in cm.sensor_names], cm.arrays.sensor_offset
    )
    y0 = cm.initial_state()
    if projection:
        y0, _ = _projection.projection_start(cm, system, t0, y0)
        system.refresh = lambda t, y: _projection.correct_drift(cm, system, t, y, rtol, atol)
    elif report is not None:
        y0, _ = initial_derivative(cm, system, t0, y0)
    if s.formulation == "absolute":
        _with_rebasing(cm, system)
    if sampler is not None:  # the first samples, so that the first output holds them
        sampler.at_breakpoint(t0, y0)
    if report is not None and log is not None:
        log(
            report.text()
            + ("\nconstraints: Shui and Zhang's projection formulation" if projection else "")
        )

    writer = None
    if path is not None:
        from .io.results import ResultWriter

        writer = ResultWriter(
            path,
            model_text=model.source_text or "",
            model_json=model_to_json(model),
            topology=cm.topology,
            coordinate_names=cm.coordinate_names,
            sensor_names=cm.sensor_names,
            sensor_sizes=cm.sensor_sizes,
            solver_name=method,
            overrides=model.overrides,
            modes={
                name: b.basis_record() if hasattr(b, "basis_record") else basis_record(b)
                for name, b in model.bodies.items()
                if getattr(b, "basis", None) is not None
            },
            state_rest_names=state_rest_names(cm),
            coordinate_units=coordinate_units(model, cm.coordinate_names),
            sensor_units=[
                sensor_units(model, n, k) for n, k in zip(cm.sensor_names, cm.sensor_sizes)
            ],
            settings={
                "t_end": t_end,
                "rtol": rtol,
                "atol": atol,
                "formulation": s.formulation,
                "output_step": output_step,
                "model_folder": os.path.dirname(os.path.abspath(model.source_path))
                if model.source_path
                else "",
                "max_step": max_step,
                **(
                    {"rho_inf": s.rho_inf, "fixed_step": s.fixed_step or 0.0}
                    if method == "galpha"
                    else {}
                ),
            },
        )
    shapes = None  # the VTKHDF file beside the result file ([output] vtk = true)
    if path is not None and out.vtk:
        from .io.deformed_shape import DeformedShape
        from .io.vtkhdf import VtkHdfWriter

        shapes = VtkHdfWriter(Path(path).with_suffix(".vtkhdf"), DeformedShape(cm))
    ts, ys, es, ss = [], [], [], []
    # the outputs' own workspace: the system's holds the integrator's discrete state
    # (the segment's pieces, the motors' branches), which belongs to the segment the
    # integrator is on, not always to the outputs' times; here each time law takes its
    # piece at t and each motor is limited by value, which a run between its events
    # gives as well
    out_ws = cm.new_workspace()

    def emit(t, y):
        e = np.zeros((len(t), len(ENERGY_COMPONENTS)))
        sv = np.zeros((len(t), cm.nsensor_values))
        _output_quantities(cm, out_ws, sampler, t, y, e, sv)
        if instruments:
            sv = instruments.apply(t, sv)
        nq = cm.nq
        if keep or not ts:
            ts.append(t)
            ys.append(y)
            es.append(e)
            ss.append(sv)
        else:
            ts[0], ys[0], es[0], ss[0] = t[-1:], y[-1:], e[-1:], sv[-1:]
        nonlocal shapes
        if shapes is not None:
            try:
                for tk, yk in zip(t, y):
                    shapes.append(float(tk), yk[: cm.nq])
                shapes.flush()
            except OSError as exc:  # the run goes on: the result file is what counts
                if log is not None:
                    log(f"warning: {shapes.path} ends at t = {shapes.t_last:g} s: {exc}")
                shapes.close()
                shapes = None
        watch.update(t, y)
        deformation.update(t, y)
        if not deformation_said and deformation.report():
            if log is not None:
                log("warning: a beam is " + deformation.report())
            warnings.warn(
                "a beam is " + deformation.report(), SmallDeformationWarning, stacklevel=3
            )
            if writer is not None:  # in the file from the next commit: a killed run
                writer.set_solver_statistics(  # keeps it for `flexmbs energy`
                    {"small_deformation": deformation.report()}
                )
            deformation_said.append(True)
        if writer is not None:
            writer.append(t, y[:, :nq], y[:, nq : 2 * nq], e, sv, y[:, 2 * nq :])

    watch = _SingularityWatch(cm)
    deformation, deformation_said = DeformationWatch(cm), []
    watch.update(np.array([t0]), y0[None, :])
    if log is not None and watch.report():
        log("warning: the initial state is " + watch.report())
    bar = _Progress(progress, t0, t_end, compiling)
    integ = None
    helper = OutputKernelsElsewhere.start_if_useful() if compile_elsewhere else None
    if helper is not None and log is not None:
        log("compiling the output quantities in a second process, the rest here")
    try:
        if helper is None:
            emit(np.array([t0]), y0[None, :])
        try:
            integ = make_integrator(
                method, system, t0, y0, t_end, rtol, atol, max_step, s.rho_inf, s.fixed_step
            )
        except BaseException:
            if helper is not None:
                helper.stop()
            raise
        if helper is not None:
            helper.wait()  # the output kernels are in the cache now, or compile here
            emit(np.array([t0]), y0[None, :])
        done = 0
        while integ.status == "running" and done < len(t_out):
            n, y = integ.advance(t_out[done : done + OUTPUT_BATCH], WALL_BUDGET)
            if n:
                emit(t_out[done : done + n], y)
                done += n
            if writer is not None:
                writer.commit_if_due(integ.t)
            bar.update(integ.t, integ.statistics()["nsteps"])
        bar.update(integ.t, integ.statistics()["nsteps"], force=True)
        if integ.status == "failed" and integ.t > ts[-1][-1]:
            emit(np.array([integ.t]), integ.y[None, :])  # the state at the failure
        status = integ.status if integ.status != "running" else "finished"
        message = integ.message
        if status == "failed" and not message:
            message = "the integrator stopped"
        if status == "failed":
            message += _named_failing_elements(cm, integ)
    except KeyboardInterrupt as exc:
        bar.close()
        if writer is not None:
            if integ is not None:
                try:  # the signal may have come inside the integrator's Python side
                    stats = integ.statistics()
                except Exception:  # noqa: BLE001 - the file is closed with the signal all the same
                    stats = {}
                if deformation.report():
                    stats["small_deformation"] = deformation.report()
                writer.set_solver_statistics(stats)
            writer.close(
                f"failed: {exc}"
                if isinstance(exc, RunTerminated)
                else "failed: interrupted by the user"
            )
        raise
    except BaseException as exc:
        bar.close()
        if writer is not None:
            writer.close(f"failed: {type(exc).__name__}: {exc}")
        raise
    finally:
        if shapes is not None:
            shapes.close()
    bar.close()
    stats = integ.statistics()
    stats["compile_time"] = compiling.seconds
    if s.formulation == "absolute":
        stats["reference_moves"] = system.reference_moves
    if deformation.report():
        stats["small_deformation"] = deformation.report()
    if watch.report():
        stats["joint_singularity"] = watch.report()
        if log is not None:
            log("warning: the motion came " + watch.report())
    if writer is not None:
        writer.set_solver_statistics(stats)
        writer.close("finished" if status == "finished" else f"failed: {message}")
    arrays = (
        [np.concatenate(a) for a in (ts, ys, es, ss)] if keep else [None] * 4
    )  # read from the file when asked for
    sim = Simulation(
        *arrays,
        coordinate_names=cm.coordinate_names,
        status=status,
        message=message,
        statistics=stats,
        path=None if path is None else str(path),
    )
    sim.small_deformation = deformation.report() or None
    sim.sensor_names = list(cm.sensor_names)
    sim.sensor_sizes = [int(k) for k in cm.sensor_sizes]
    return sim
