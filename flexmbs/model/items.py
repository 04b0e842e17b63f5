"""The items of a model description: markers, rigid and beam bodies, joints, drivers,
actuators, forces, springs, contacts, sensors and the solver and output settings.
Plain data, made and checked by flexmbs.model.description.Model's add_* methods; a beam
body's invariants and mode basis are derived from its description where first used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .field_checks import _relative_tolerance, _scalar
from .vocabulary import (
    CONSTRAINT_FORMULATIONS,
    FORMULATIONS,
    GROUND,
    LINEAR_SOLVERS,
    NODE_DOFS,
    SOLVER_METHODS,
)

if TYPE_CHECKING:
    from ..elements.invariants import Invariants
    from ..elements.materials import Material
    from ..elements.modal import ModalBasis
    from ..elements.sections import Section
    from .timefunctions import TimeFunction


@dataclass
class Marker:
    """A frame fixed on a body: origin `position` (m) and axes `orientation` (3x3, the
    columns are the marker axes in body coordinates). On a beam body a marker sits on
    node `node` and follows it."""

    name: str
    body: str
    position: np.ndarray
    orientation: np.ndarray
    node: int | None = None


@dataclass
class RigidBody:
    """A rigid body. `com` (m) in the body frame; `inertia` (kg m^2) about the centre of
    mass in body axes (the file may give it about the frame origin; it is converted).
    A body given by its `density` (kg/m^3) and `shapes` (flexmbs.model.solid_shapes)
    keeps them; its mass, centre of mass and inertia are theirs."""

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    markers: dict = field(default_factory=dict)
    density: float | None = None
    shapes: list = field(default_factory=list)

    @property
    def inertia_about_origin(self) -> NDArray[np.float64]:
        """I_O = I_C + m (|c|^2 I - c c^T) (parallel-axis theorem)."""
        c = self.com
        return self.inertia + self.mass * (c @ c * np.eye(3) - np.outer(c, c))


@dataclass
class BeamBody:
    """A flexible body of 3-D Euler-Bernoulli beam elements (docs/explanation/formulation.md
    sections 2-3) in a floating frame: a polyline `points` (k, 3) in body axes (m), meshed
    into `elements[s]` equal elements along segment s; `nodes` (n, 3) and `connectivity` (n
    - 1, 2) result. `section` (flexmbs.elements.Section) and `material`
    (flexmbs.elements.Material) are shared by the elements; `reference` is the body-axes
    vector whose component normal to each element gives its section y axis. `free` lists the
    body coordinates 6 node + dof (dof in NODE_DOFS order) left free by the reference
    conditions (by default node 0 is clamped); `node_masses` maps a node to a point mass
    (kg), `node_inertias` to a rotary inertia (3 x 3, kg m^2, body axes, about the node; it
    turns with the node's rotation: a rigid body of no mass fixed to the node,
    docs/explanation/formulation.md section 2). `geometric` selects the geometric stiffness
    (docs/explanation/formulation.md section 6, `flexmbs.elements.geometric`): "consistent"
    (the default), "none", "huang-axial" or "huang-foreshortening". Structural damping D =
    alpha K + beta M_ff (alpha in s, beta in 1/s). The elastic coordinates qf are the free
    nodal coordinates; `initial` is their initial state: "undeformed" (qf = 0, the thesis's
    choice), "static" (in equilibrium with gravity at the initial joint state, joints held),
    "quasi-static" (the elastic accelerations vanish at t = 0 with the joints free and
    moving at their initial rates, and the elastic rates are the rate of change of that
    state: a start that excites no high mode) or the values of qf themselves (m and rad;
    modal amplitudes when reduced), in the order of the body's coordinate names, as `flexmbs
    equilibrium` writes them. `initial_rates`: the elastic rates at t = 0 (m/s and rad/s, in
    the same order; None: zero, or those of "quasi-static"). `modal_damping`: damping ratios
    of the body's own modes (of its elastic coordinates, reduced or nodal;
    flexmbs.elements.damping): one for every mode, a list with one per mode in order of
    frequency, or "bands" (1 % below 100 Hz, 10 % below 1 kHz, critical above); None: none
    beyond alpha and beta.

    Modal reduction (docs/explanation/formulation.md section 8, flexmbs.elements.modal): `modes` is
    "all" (the elastic coordinates are the free nodal ones) or n, the number of lowest
    natural modes kept; `modes_below` (Hz) keeps the modes below that frequency (of the
    lowest n when `modes` is n too); `correction_modes` adds static correction modes at
    the nodes that carry markers; `modal_derivatives` adds the modal derivatives of the
    kept modes (None: when `geometric` is "consistent"). Then qf = Phi eta with Phi =
    `basis.vectors` (a ModalBasis) and
    `invariants` are the projected ones of eta; `nodal_invariants` are always those of
    the free nodal coordinates (the same object when not reduced).

    The body holds only its description: `nodal_invariants`, `basis` and `invariants`
    are derived from it where first used (compiling the model, or reading `mass` or
    `nf`), and derived again when what they depend on has changed (the mesh, section,
    material, free coordinates, node masses, `geometric`, the reduction's fields and,
    with correction modes, the nodes that carry markers)."""

    name: str
    points: np.ndarray
    elements: tuple
    section: Section
    material: Material
    reference: np.ndarray
    nodes: np.ndarray
    connectivity: np.ndarray
    free: np.ndarray
    node_masses: dict
    alpha: float
    beta: float
    initial: str | NDArray[np.float64] | list[float] = (
        "undeformed"  # a BEAM_INITIAL_STATES name or qf (nf,)
    )
    markers: dict = field(default_factory=dict)
    node_inertias: dict = field(default_factory=dict)
    geometric: str = "consistent"
    modes: str | int = "all"
    correction_modes: bool = False
    initial_rates: NDArray[np.float64] | list[float] | None = (
        None  # None or the elastic rates (nf,)
    )
    modal_damping: float | str | NDArray[np.float64] | None = (
        None  # None, a ratio, ratios per mode, or "bands"
    )
    modes_below: float | None = None
    initial_modes: tuple | None = None  # ((mode, amplitude, rate), ...): a start in modes
    modal_derivatives: bool | None = None

    @property
    def reduced(self) -> bool:
        """Whether the elastic coordinates are modal (`modes` a number, or
        `modes_below` given) rather than the free nodal ones."""
        return self.modes != "all" or self.modes_below is not None

    @property
    def with_modal_derivatives(self) -> bool:
        """Whether a reduced basis holds the modal derivatives of its modes:
        `modal_derivatives`, or when None, whether the geometric stiffness is
        "consistent" (the thesis's variants keep their bases as the thesis had them);
        never with geometric = "none", which has no second-order terms."""
        if self.geometric == "none":
            return False
        if self.modal_derivatives is None:
            return self.geometric == "consistent"
        return bool(self.modal_derivatives)

    @property
    def nodal_invariants(self) -> Invariants:
        """Invariants of the free nodal coordinates (flexmbs.elements.invariants)."""
        return self._derived()[0]

    @property
    def basis(self) -> ModalBasis | None:
        """The ModalBasis (flexmbs.elements.modal), None when `modes` is "all"."""
        return self._derived()[1]

    @property
    def invariants(self) -> Invariants:
        """Invariants of the elastic coordinates: the nodal ones, or their projection
        on the basis."""
        return self._derived()[2]

    def _derived(self) -> tuple[Invariants, ModalBasis | None, Invariants]:
        """(nodal invariants, basis, invariants), computed from the description and
        kept with the key of what they depend on (_derivation_key)."""
        key = _derivation_key(self)
        held = self.__dict__.get("_derived_from")
        if held is None or held[0] != key:
            held = (key, _derive_beam(self))
            self.__dict__["_derived_from"] = held
        return held[1]

    @property
    def mass(self) -> float:
        return self.invariants.mass

    @property
    def com(self) -> NDArray[np.float64]:
        return self.invariants.first_moment / self.invariants.mass

    @property
    def inertia_about_origin(self) -> NDArray[np.float64]:
        """I_O of the undeformed beam: tr(Th0) I - Th0 (docs/explanation/formulation.md section
        2)."""
        th0 = self.invariants.th0
        return np.trace(th0) * np.eye(3) - th0

    @property
    def inertia(self) -> NDArray[np.float64]:
        c = self.com
        return self.inertia_about_origin - self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    @property
    def nf(self) -> int:
        """Number of elastic coordinates qf: the free nodal coordinates, or the
        columns of the mode basis."""
        return len(self.free) if self.basis is None else self.basis.nm

    def coordinate_names(self) -> list[str]:
        """`BODY.nNODE.DOF` of each nodal elastic coordinate; `BODY.modeK` and
        `BODY.correctionK` of the modal ones."""
        if self.basis is not None:
            return list(self.basis.names)
        return [f"{self.name}.n{k // 6}.{NODE_DOFS[k % 6]}" for k in self.free]

    def node_columns(self, node: int) -> NDArray[np.int64]:
        """Indices into the free nodal coordinates (qf itself when not reduced) of the
        node's 6 coordinates (-1 where fixed)."""
        where = {int(k): j for j, k in enumerate(self.free)}
        return np.array([where.get(6 * node + d, -1) for d in range(6)], dtype=np.int64)

    def node_rows(self, node: int) -> NDArray[np.float64]:
        """(6, nf): the node's translations u, v, w (m) and small rotations tx, ty, tz
        (rad), body axes, as linear forms of qf (S_k and PS_k of docs/explanation/formulation.md
        section 4; times the mode basis Phi when reduced, section 8)."""
        rows = np.zeros((6, len(self.free)))
        for d, j in enumerate(self.node_columns(node)):
            if j >= 0:
                rows[d, j] = 1.0
        return rows if self.basis is None else rows @ self.basis.vectors


@dataclass
class Joint:
    """A joint from a marker on the parent body to a marker on the child body.

    Its coordinates are the translations along `translation_axes`, then the rotations
    about `rotation_axes` (unit vectors in the parent marker's frame; each rotation
    about its axis in the frame turned by the previous ones).
    """

    name: str
    type: str
    parent: str
    child: str
    parent_marker: str
    child_marker: str
    translation_axes: np.ndarray
    rotation_axes: np.ndarray
    initial: np.ndarray
    initial_rate: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    rest: np.ndarray
    cut: bool = False
    # joint stops (flexmbs.dynamics.stops): (ndof, 2) lower and upper limits (m or rad,
    # -inf / inf where there is none), their contact stiffness and damping per
    # coordinate; None: no limits
    limits: np.ndarray | None = None
    limit_stiffness: np.ndarray | None = None
    limit_damping: np.ndarray | None = None

    @property
    def ndof(self) -> int:
        return len(self.translation_axes) + len(self.rotation_axes)

    def coordinate_names(self) -> list[str]:
        if self.ndof == 1:
            return [self.name]
        return [f"{self.name}[{k}]" for k in range(self.ndof)]


@dataclass
class Driver:
    """Prescribed motion of one joint coordinate: x(t) = function(t)."""

    name: str
    joint: str
    coordinate: int
    function: TimeFunction


@dataclass
class Actuator:
    """A motor on one joint coordinate, through a gear of ratio n (motor turns per
    joint turn), with rotor inertia J_r (kg m^2) and viscous resistance b_m (N m s/rad,
    at the motor). Its motor torque is `torque(t)` (type "torque") or the PD law
    (kp (x_ref - x) + kd (x_ref' - x')) / n on the joint error (type "pd"; kp in N m/rad
    or N/m, kd in N m s/rad or N s/m, x_ref = setpoint(t)), limited to |tau_m| <=
    max_torque (N m). On the joint: n tau_m - n^2 b_m x', and the reflected inertia
    n^2 J_r (Huang's motor model, H3.3).

    A "dc_motor" is driven by the voltage of an amplifier of gain `amplifier_gain`
    (V/V) whose input is `voltage(t)` (V), limited to `max_voltage` (V): its armature
    of resistance `resistance` (ohm) and inductance `inductance` (H, 0: none) carries
    the current i, limited to `max_current` (A), with
    L di/dt = V - R i - k_e n x', and its torque is tau_m = eta k_t i (k_t
    `torque_constant` N m/A, k_e `back_emf_constant` V s/rad, eta the gear's
    `efficiency`); flexmbs.dynamics.motors."""

    name: str
    joint: str
    coordinate: int
    type: str
    kp: float
    kd: float
    setpoint: TimeFunction | None
    torque: TimeFunction | None
    max_torque: float
    gear_ratio: float
    rotor_inertia: float
    motor_damping: float
    voltage: TimeFunction | None = None
    amplifier_gain: float = 1.0
    max_voltage: float = np.inf
    resistance: float = 0.0
    inductance: float = 0.0
    torque_constant: float = 0.0
    back_emf_constant: float = 0.0
    max_current: float = np.inf
    efficiency: float = 1.0

    @property
    def command(self) -> TimeFunction:
        """The time function of its command: the set-point, torque or voltage."""
        fn = {"pd": self.setpoint, "torque": self.torque, "dc_motor": self.voltage}[self.type]
        assert fn is not None  # the builder requires it
        return fn


@dataclass
class Force:
    """A point force or a torque on a marker: `vector(t) = vector * function(t)`, in
    global axes (`frame = "global"`) or in the marker's axes (`frame = "marker"`,
    a follower load). N for a force, N m for a torque."""

    name: str
    type: str
    body: str
    marker: str
    vector: np.ndarray
    frame: str
    function: TimeFunction


@dataclass
class Spring:
    """A spring and damper between two markers (point to point): the force
    f = k (L - L0) + c dL/dt along the line between them pulls them together when
    positive (L = |p2 - p1|; k N/m, c N s/m, L0 m)."""

    name: str
    body1: str
    marker1: str
    body2: str
    marker2: str
    stiffness: float
    damping: float
    rest_length: float | None


@dataclass
class Contact:
    """A rolling contact (docs/explanation/formulation.md section 5;
    flexmbs.dynamics.constraints): the thin disk of radius `radius` (m) centred at marker
    `disk_marker` of body `disk`, its axle `axis` (unit, in that marker's axes), rolls
    without slipping on the plane through marker `plane_marker` of body `plane` (the ground
    or a moving body) with normal `normal` (unit, in that marker's axes, pointing to the
    disk's side). It gives one position equation (the disk's lowest point stays on the
    plane) and two velocity (nonholonomic) equations (no slip in the plane's two tangent
    directions). A knife edge (type "knife_edge", radius 0) is the point `disk_marker` of
    body `disk` with the blade along `axis`: the point stays on the plane and does
    not move across the blade (one position and one velocity equation)."""

    name: str
    type: str
    disk: str
    plane: str
    radius: float
    axis: np.ndarray
    normal: np.ndarray
    disk_marker: str = "origin"
    plane_marker: str = "origin"


@dataclass
class Sensor:
    """A recorded output. Joint sensors name `joint` (and `coordinate` for a joint with
    several); marker sensors name `body` and `marker` and are expressed in the frame of
    body `frame` (the ground by default). As an instrument gives it: a first-order
    `lag` (s), a `dead_time` (s) and a `resolution` (0: none; flexmbs.simulation.instruments);
    as a sampled controller reads it, the `controller_` ones (None: the same)."""

    name: str
    type: str
    joint: str | None = None
    coordinate: int | None = None
    body: str | None = None
    marker: str | None = None
    frame: str = GROUND
    actuator: str | None = None
    element: int | None = None
    at: str | float | None = None
    point: np.ndarray | None = None
    subdivisions: int | None = None
    contact: str | None = None
    coupler: str | None = None
    dead_time: float = 0.0
    lag: float = 0.0
    resolution: float = 0.0
    controller_dead_time: float | None = None
    controller_lag: float | None = None
    controller_resolution: float | None = None

    def controller_instrument(self) -> tuple[float, float, float]:
        """(dead time, lag, resolution) of what a sampled controller reads: the
        `controller_` settings where given, else the record's."""
        return (
            self.dead_time if self.controller_dead_time is None else self.controller_dead_time,
            self.lag if self.controller_lag is None else self.controller_lag,
            self.resolution if self.controller_resolution is None else self.controller_resolution,
        )


# The settings a method keeps for itself: its tolerances (each method's own, since
# each controls a different error), and the fields only `galpha` reads.
METHOD_FIELDS = ("rtol", "atol")
GALPHA_FIELDS = ("rho_inf", "fixed_step")


def method_fields(method: str) -> tuple[str, ...]:
    """The fields of a method's own table, [solver.METHOD]."""
    return METHOD_FIELDS + GALPHA_FIELDS * (method == "galpha")


def default_tolerances(method: str, fixed_step: float | None = None) -> tuple[float, float]:
    """(rtol, atol) of `method` where the model gives none for it: `galpha` 1e-5 and
    1e-7 under error control (the positions' local error: the loosest of the range the
    solvers guide recommends for flexible arms), 1e-8 and 1e-10 with a fixed step
    (there the Newton iteration's tolerances alone); every other method 1e-6 and 1e-8."""
    if method == "galpha":
        return (1e-8, 1e-10) if fixed_step is not None else (1e-5, 1e-7)
    return 1e-6, 1e-8


@dataclass(frozen=True)
class SolverSettings:
    """Integration settings: `method` (one of SOLVER_METHODS), end time `t_end` (s),
    tolerances `rtol`, `atol`, largest step `max_step` (s), `formulation` (one of
    FORMULATIONS: "joint", M* u' = Q* solved whole, or "order-n", the tip-to-base
    elimination of flexmbs.dynamics.order_n, trees only, or "absolute", every body on
    its own six coordinates and every joint a constraint, flexmbs.model.absolute, bdf
    only), and the formulation of the
    constraints of closed loops and rolling contacts, `constraints` (one of
    CONSTRAINT_FORMULATIONS: "ggl", the stabilised index-2 form; "projection", Shui
    and Zhang's projection onto the null space of the constraint matrix, bdf only).
    `rho_inf` in [0, 1] is the spectral radius at infinity of `galpha` (the amplitude
    factor per step of a mode its step does not resolve) and `fixed_step` (s), when
    set, its constant step without error control.

    Each method keeps its own tolerances: `given` holds, per method, the fields given
    for it (method_fields); `rtol` and `atol` are those of `method`, or its
    default_tolerances where none were given. Changing the method takes the new
    method's own, never the old one's.

    `linear_solver` (one of LINEAR_SOLVERS) says how `bdf` and `galpha` store and factor
    their iteration matrix: "dense", "banded" (the bordered band layout of a model with
    long beams, flexmbs.model.band_layout) or "auto" (banded from a measured size on)."""

    method: str = "bdf"
    t_end: float = 1.0
    rtol: float = 1e-6
    atol: float = 1e-8
    max_step: float = np.inf
    formulation: str = "joint"
    constraints: str = "ggl"
    rho_inf: float = 0.9
    fixed_step: float | None = None
    linear_solver: str = "auto"
    given: tuple[tuple[str, tuple[tuple[str, float], ...]], ...] = ()

    @property
    def per_method(self) -> dict[str, dict[str, float]]:
        """The fields given for each method, {method: {field: value}}."""
        return {m: dict(fields) for m, fields in self.given}

    def with_changes(
        self,
        method: str | None = None,
        t_end: float | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        max_step: float | None = None,
        formulation: str | None = None,
        constraints: str | None = None,
        rho_inf: float | None = None,
        fixed_step: float | None = None,
        methods: dict[str, dict[str, float]] | None = None,
        linear_solver: str | None = None,
    ) -> SolverSettings:
        """A validated copy with the given values changed (ModelError if bad). `rtol`
        and `atol` are the settings of the method the copy runs (`method`, or this
        one's); `methods` gives further methods' own, {method: {field: value}}
        (method_fields; as [solver.METHOD] in a model file)."""
        item = "solver"
        if method is not None and method not in SOLVER_METHODS:
            raise ModelError(
                f"expected one of {', '.join(SOLVER_METHODS)}, got {method!r}", item, "method"
            )
        if formulation is not None and formulation not in FORMULATIONS:
            raise ModelError(
                f"expected one of {', '.join(FORMULATIONS)}, got {formulation!r}",
                item,
                "formulation",
            )
        if constraints is not None and constraints not in CONSTRAINT_FORMULATIONS:
            raise ModelError(
                f"expected one of {', '.join(CONSTRAINT_FORMULATIONS)}, got {constraints!r}",
                item,
                "constraints",
            )
        if linear_solver is not None and linear_solver not in LINEAR_SOLVERS:
            raise ModelError(
                f"expected one of {', '.join(LINEAR_SOLVERS)}, got {linear_solver!r}",
                item,
                "linear_solver",
            )
        run = self.method if method is None else method
        per = self.per_method
        for name, fields in _checked_methods(methods or {}).items():
            per.setdefault(name, {}).update(fields)
        top = {"rtol": rtol, "atol": atol, "rho_inf": rho_inf, "fixed_step": fixed_step}
        for key, value in top.items():
            if value is None:
                continue
            if key in (methods or {}).get(run if key in METHOD_FIELDS else "galpha", {}):
                table = run if key in METHOD_FIELDS else "galpha"
                raise ModelError(
                    f'"{key}" is given both in [solver] and in [solver.{table}]; give it once',
                    item,
                    key,
                )
            if key in METHOD_FIELDS:
                per.setdefault(run, {})[key] = _method_value(key, value, item, key)
        galpha = per.get("galpha", {})
        for key in GALPHA_FIELDS:  # given in [solver]: no longer [solver.galpha]'s
            if top[key] is not None and "galpha" not in (methods or {}):
                galpha.pop(key, None)
        if rho_inf is None:
            rho_inf = galpha.get("rho_inf", self.rho_inf)
        rho_inf = _method_value("rho_inf", rho_inf, item, "rho_inf")
        if fixed_step is None:
            fixed_step = galpha.get("fixed_step", self.fixed_step)
        else:
            fixed_step = _method_value("fixed_step", fixed_step, item, "fixed_step")
        own = per.get(run, {})
        default_rtol, default_atol = default_tolerances(run, fixed_step)
        return SolverSettings(
            rho_inf=rho_inf,
            fixed_step=fixed_step,
            formulation=self.formulation if formulation is None else formulation,
            constraints=self.constraints if constraints is None else constraints,
            method=run,
            t_end=self.t_end if t_end is None else _scalar(t_end, item, "t_end", positive=True),
            rtol=own.get("rtol", default_rtol),
            atol=own.get("atol", default_atol),
            max_step=self.max_step
            if max_step is None
            else _scalar(max_step, item, "max_step", positive=True),
            given=tuple((m, tuple(sorted(f.items()))) for m, f in sorted(per.items()) if f),
            linear_solver=self.linear_solver if linear_solver is None else linear_solver,
        )

    def summary(self) -> str:
        """What a run with these settings uses, in a line: the method, its tolerances
        and whether they were given for it or are its defaults, galpha's own settings,
        and the tolerances given for other methods that it leaves aside."""
        own = self.per_method.get(self.method, {})
        origin = {
            2: "given for it",
            1: f"{'rtol' if 'rtol' in own else 'atol'} given for it, the other its default",
            0: f"{self.method}'s defaults",
        }[sum(k in own for k in METHOD_FIELDS)]
        text = f"{self.method}, rtol {self.rtol:g}, atol {self.atol:g} ({origin})"
        if self.method == "galpha":
            text += f", rho_inf {self.rho_inf:g}, " + (
                f"fixed step {self.fixed_step:g} s"
                if self.fixed_step is not None
                else "steps under error control"
            )
        others = [
            f"{m}'s rtol {f['rtol']:g}" if "rtol" in f else f"{m}'s atol {f['atol']:g}"
            for m, f in self.per_method.items()
            if m != self.method and ("rtol" in f or "atol" in f)
        ]
        if others:
            text += f"; not used: {', '.join(others)}"
        return text

    def galpha_settings_unused(self) -> str:
        """galpha's own settings given to a run of another method as its own (in
        [solver], not in [solver.galpha]), as text ("" if none)."""
        if self.method == "galpha":
            return ""
        galpha = self.per_method.get("galpha", {})
        given = [f"rho_inf = {self.rho_inf:g}"] * (
            self.rho_inf != SolverSettings.rho_inf and "rho_inf" not in galpha
        )
        if self.fixed_step is not None and "fixed_step" not in galpha:
            given.append(f"fixed_step = {self.fixed_step:g} s")
        return " and ".join(given)


def _method_value(key: str, value: object, item: str, field: str) -> float:
    """A checked value of a method's own field (method_fields)."""
    if key == "rtol":
        return _relative_tolerance(value, item)
    if key == "rho_inf":
        rho = _scalar(value, item, field, nonnegative=True)
        if rho > 1.0:
            raise ModelError(f"expected a number in [0, 1], got {rho!r}", item, field)
        return rho
    return _scalar(value, item, field, positive=True)


def _checked_methods(methods: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The tables [solver.METHOD], checked: known methods, their own fields, valid
    values."""
    checked = {}
    for name, fields in methods.items():
        item = f"solver.{name}"
        if name not in SOLVER_METHODS:
            raise ModelError(
                f"expected a method, one of {', '.join(SOLVER_METHODS)}; got {name!r}", "solver"
            )
        allowed = method_fields(name)
        for key in fields:
            if key not in allowed:
                raise ModelError(
                    f'unknown field "{key}"; allowed fields: {", ".join(allowed)}', item, key
                )
        checked[name] = {k: _method_value(k, v, item, k) for k, v in fields.items()}
    return checked


@dataclass(frozen=True)
class OutputSettings:
    """Output settings: `step`, the time between two recorded samples (s); `vtk`: also
    write the deformed shape at every sample to a VTKHDF file beside the result file
    (flexmbs.io.vtkhdf)."""

    step: float = 0.01
    vtk: bool = False

    def with_changes(self, step: float | None = None, vtk: bool | None = None) -> OutputSettings:
        """A validated copy with the given values changed (ModelError if bad)."""
        if vtk is not None and not isinstance(vtk, (bool, np.bool_)):
            raise ModelError(f"expected true or false, got {vtk!r}", "output", "vtk")
        return OutputSettings(
            self.step if step is None else _scalar(step, "output", "step", positive=True),
            self.vtk if vtk is None else bool(vtk),
        )


class _Nodal:
    """A beam body seen with the given nodal invariants, for the basis that its own
    derivation is making (the body's attributes otherwise)."""

    def __init__(self, body: BeamBody, nodal_invariants: Invariants) -> None:
        self._body = body
        self.nodal_invariants = nodal_invariants

    def __getattr__(self, name: str) -> object:
        return getattr(self._body, name)


def _derivation_key(body: BeamBody) -> tuple[object, ...]:
    """What a beam body's derived data depend on, comparable with ==."""
    key: tuple[object, ...] = (
        body.nodes.tobytes(),
        body.connectivity.tobytes(),
        body.reference.tobytes(),
        body.section,
        body.material,
        body.free.tobytes(),
        tuple(sorted(body.node_masses.items())),
        tuple((k, np.asarray(v).tobytes()) for k, v in sorted(body.node_inertias.items())),
        body.modes,
        body.correction_modes,
        body.modes_below,
        body.with_modal_derivatives,
    )
    if body.correction_modes:
        key += (
            tuple(sorted((m.node, m.name) for m in body.markers.values() if m.node is not None)),
        )
    return key


def _derive_beam(body: BeamBody) -> tuple[Invariants, ModalBasis | None, Invariants]:
    """(nodal invariants, basis, invariants) of a beam body: the invariants of its free
    nodal coordinates (flexmbs.elements.invariants) and, when reduced, the mode basis
    of its `modes` with the correction modes at the nodes that carry markers and the
    projected invariants (flexmbs.elements.modal; docs/explanation/formulation.md
    section 8)."""
    from ..elements.invariants import beam_body_invariants
    from ..elements.modal import modal_basis, project_invariants

    item = f'body "{body.name}"'
    per_node = np.zeros(len(body.nodes))
    for node, mass in body.node_masses.items():
        per_node[node] = mass
    nodal = beam_body_invariants(
        body.nodes,
        body.connectivity,
        body.reference,
        body.section,
        body.material,
        body.free,
        node_masses=per_node,
        item=item,
    )
    if not body.reduced:
        return nodal, None, nodal
    names: dict[int, list[str]] = {}
    for marker in body.markers.values():
        if marker.node is not None:
            names.setdefault(marker.node, []).append(marker.name)
    nodes = sorted(names) if body.correction_modes else ()
    basis = modal_basis(
        _Nodal(body, nodal),
        body.modes,
        nodes,
        names,
        item,
        modes_below=body.modes_below,
        derivatives=body.with_modal_derivatives,
    )
    return nodal, basis, project_invariants(nodal, basis.vectors)
