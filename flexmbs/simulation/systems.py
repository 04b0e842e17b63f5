"""The System a run's integrator steps, built from a compiled model.

`build_system` makes the ODE right-hand side and the residual of a tree (the joint
coordinates or the Order-N formulation) or of a model with constraints (the
stabilised index-2 form or the projection formulation), with its breakpoints, the
time functions' segments and the switch functions of the integrators' events; the
sampled controllers and the absolute coordinates' rebasing are added to it by the
run (`with_sampled_control`, `with_rebasing`).
"""

import copy

import numpy as np

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
from ..dynamics.stop_sides import stops_on_their_limits
from ..model.absolute import absolute_model, set_elastic_rates
from ..model.compiled import compile_model
from ..model.timefunctions import time_function_breakpoints
from ..runtime.tuple_ref import held_ref
from ..solvers.base import System
from ..solvers.kernel_call import KernelCall
from ..solvers.linear_choice import banded_iteration_matrix
from .row_outputs import RowOutputs
from .sampled_control import SampledControllers

__all__ = ["build_system", "compile_absolute", "with_rebasing", "with_sampled_control"]


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


def _quadratures(cm, n):
    """The works in the state (W_nc and each actuator's work, flexmbs.model.arrays):
    quadratures, W' = P(q, u), that no other row reads; not the DC motors'
    electrical states, which drive their torques."""
    quad = np.zeros(n, dtype=bool)
    quad[2 * cm.nq : 2 * cm.nq + 1 + cm.nactuators] = True
    return quad


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
    system.quadrature = _quadratures(cm, system.n)

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


def with_sampled_control(cm, system, t0, t_end):
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


def with_rebasing(cm, system):
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
