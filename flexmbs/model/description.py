"""The model description: bodies, markers, joints, drivers, forces, sensors, settings.

Plain Python objects, validated as they are added; nothing here knows about numba.
The TOML reader (`flexmbs.model.toml_reader`) and the Python builder API share this
vocabulary: a model file is a list of calls to the `Model.add_*` methods.

Units are SI (m, kg, s, rad, N, N m). Vectors of a marker or a joint are given in the
frame of the body (or marker) that owns them.
"""

import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from .timefunctions import Constant, check_time_function

__all__ = [
    "GROUND", "JOINT_TYPES", "SENSOR_TYPES", "BEAM_SECTION_SENSORS", "FORCE_TYPES",
    "SOLVER_METHODS",
    "CONSTRAINT_FORMULATIONS",
    "ACTUATOR_TYPES", "NODE_DOFS", "Marker", "RigidBody", "BeamBody", "Joint", "Driver",
    "Actuator", "Force", "Spring", "Sensor", "Contact", "CONTACT_TYPES",
    "SolverSettings", "OutputSettings", "Model", "rotation_from_euler_xyz",
]

GROUND = "ground"
JOINT_TYPES = ("revolute", "prismatic", "cylindrical", "universal", "spherical",
               "planar", "free", "fixed", "general")
SENSOR_TYPES = ("joint_coordinate", "joint_rate", "marker_position",
                "marker_orientation", "marker_velocity", "marker_angular_velocity",
                "actuator_torque", "actuator_work", "beam_strain", "marker_deflection",
                "beam_curvature", "beam_section_forces", "beam_centerline",
                "joint_reaction", "constraint_residual", "contact_reaction")
CONTACT_TYPES = ("rolling_disk", "knife_edge")
BEAM_SECTION_SENSORS = ("beam_strain", "beam_curvature", "beam_section_forces")
ACTUATOR_TYPES = ("pd", "torque")
FORCE_TYPES = ("force", "torque")
SOLVER_METHODS = ("bdf", "galpha", "ida", "scipy-radau", "scipy-bdf", "dop853", "rk45")
# docs/explanation/formulation.md sections 5 and 10; Schwab 2009
FORMULATIONS = ("joint", "order-n", "absolute")
CONSTRAINT_FORMULATIONS = ("ggl", "projection")
ORIGIN = "origin"  # every body (and the ground) has this marker: its own frame

_EX, _EY, _EZ = np.eye(3)
AXIS_NORM_MIN = 1e-12  # an axis shorter than this is zero
ORTHONORMAL_TOL = 1e-9  # |C^T C - I| of a marker orientation
INDEPENDENT_AXES_TOL = 1e-6  # smallest singular value / |a x b| of independent axes


def rotation_from_euler_xyz(angles):
    """Rotation matrix of sequential rotations about x, then the new y, then the new z."""
    a, b, c = angles
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return rx @ ry @ rz


def _vector(value, n, item, fld, what="a"):
    try:
        v = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"expected {what} {n}-vector of numbers, got {value!r}",
                         item, fld) from None
    if v.shape != (n,):
        raise ModelError(f"expected {what} {n}-vector of numbers, got {value!r}", item, fld)
    if not np.all(np.isfinite(v)):
        raise ModelError(f"expected finite numbers, got {value!r}", item, fld)
    return v


def _axis(value, item, fld):
    v = _vector(value, 3, item, fld, "an axis as a")
    n = np.linalg.norm(v)
    if not n > AXIS_NORM_MIN:
        raise ModelError(f"expected a non-zero axis, got {value!r}", item, fld)
    return v / n


def _axes(value, item, fld, count=None):
    try:
        rows = list(value)
    except TypeError:
        raise ModelError(f"expected a list of 3-vectors, got {value!r}", item, fld) from None
    if count is not None and len(rows) != count:
        raise ModelError(f"expected {count} axes, got {len(rows)}", item, fld)
    return np.array([_axis(r, item, f"{fld}[{k}]") for k, r in enumerate(rows)]).reshape(-1, 3)


def _node_index(node, n):
    """A node index 0..n-1 from an int or a string of digits (TOML keys); negative
    indices count from the last node (-1). None if it is not one."""
    text = str(node)
    if isinstance(node, bool) or not text.lstrip("-").isdigit():
        return None
    k = int(text)
    k = k + n if k < 0 else k
    return k if 0 <= k < n else None


def _scalar(value, item, fld, positive=False, nonnegative=False):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ModelError(f"expected a number, got {value!r}", item, fld)
    v = float(value)
    if not np.isfinite(v):
        raise ModelError(f"expected a finite number, got {value!r}", item, fld)
    if positive and not v > 0:
        raise ModelError(f"expected a positive number, got {value!r}", item, fld)
    if nonnegative and v < 0:
        raise ModelError(f"expected a number >= 0, got {value!r}", item, fld)
    return v


def _rotation(value, item, fld):
    try:
        c = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"expected a 3x3 rotation matrix, got {value!r}", item, fld) from None
    if c.shape != (3, 3) or not np.all(np.isfinite(c)):
        raise ModelError(f"expected a 3x3 rotation matrix, got {value!r}", item, fld)
    if np.abs(c.T @ c - np.eye(3)).max() > ORTHONORMAL_TOL or np.linalg.det(c) < 0:
        raise ModelError("expected a proper orthonormal matrix (C^T C = I, det C = +1)",
                         item, fld)
    return c


def _inertia_matrix(value, item, fld):
    """Accepts [Ixx, Iyy, Izz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] or a 3x3 matrix."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        a = None
    if a is None or not np.all(np.isfinite(a)):
        raise ModelError("expected 3 (diagonal), 6 (Ixx Iyy Izz Ixy Ixz Iyz) or 3x3 "
                         f"finite numbers, got {value!r}", item, fld)
    if a.shape == (3,):
        return np.diag(a)
    if a.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = a
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if a.shape == (3, 3):
        if np.abs(a - a.T).max() > 1e-12 * max(1.0, np.abs(a).max()):
            raise ModelError("expected a symmetric inertia matrix", item, fld)
        return 0.5 * (a + a.T)
    raise ModelError("expected 3 (diagonal), 6 (Ixx Iyy Izz Ixy Ixz Iyz) or 3x3 numbers, "
                     f"got {value!r}", item, fld)


def _per_coordinate(value, n, item, fld):
    """A scalar (the same for every coordinate) or a list of n numbers."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return _vector(value, n, item, fld, "a")
    return np.full(n, _scalar(value, item, fld))


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
    mass in body axes (the file may give it about the frame origin; it is converted)."""
    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    markers: dict = field(default_factory=dict)

    @property
    def inertia_about_origin(self):
        """I_O = I_C + m (|c|^2 I - c c^T) (parallel-axis theorem)."""
        c = self.com
        return self.inertia + self.mass * (c @ c * np.eye(3) - np.outer(c, c))


NODE_DOFS = ("u", "v", "w", "tx", "ty", "tz")  # nodal coordinates, body axes
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
GENERATED_PREFIX = "@"   # flexmbs.model.absolute's PREFIX
SENSOR_NAME_PATTERN = re.compile(r"[^\s/]+")
"""Sensor names: anything but spaces and '/' (a sensor may be named after a
coordinate, "joint.rz")."""
"""The names of bodies, joints, markers, sensors and the other items."""
BEAM_DENSE_MATRICES = 8
"""Dense (nf x nf) float64 matrices that building a beam body and integrating it hold
at once (its invariants, stiffness, mass and the iteration matrix's block), nf its
nodal coordinates: what `_check_beam_memory` weighs against the machine's memory."""


def _physical_memory():
    """Bytes of physical memory of this machine (inf where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return float("inf")


def _check_beam_memory(elements, item):
    """ModelError (field "elements") when a beam of that many elements would need more
    memory for its dense matrices than the machine has: 6 (elements + 1) coordinates,
    BEAM_DENSE_MATRICES of their square."""
    nf = 6 * (elements + 1)
    need = BEAM_DENSE_MATRICES * 8.0 * nf * nf
    have = _physical_memory()
    if need > have:
        raise ModelError(f"{elements} elements make {nf} nodal coordinates, whose dense "
                         f"matrices need about {need / 2**30:.3g} GiB, more than this "
                         f"machine's {have / 2**30:.3g} GiB: expected fewer elements (or "
                         f"modal reduction of a coarser mesh)", item, "elements")

BEAM_INITIAL_STATES = ("undeformed", "static", "quasi-static")


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
    natural modes kept; `correction_modes` adds static correction modes at the nodes
    that carry markers. Then qf = Phi eta with Phi = `basis.vectors` (a ModalBasis) and
    `invariants` are the projected ones of eta; `nodal_invariants` are always those of
    the free nodal coordinates (the same object when not reduced).

    The body holds only its description: `nodal_invariants`, `basis` and `invariants`
    are derived from it where first used (compiling the model, or reading `mass` or
    `nf`), and derived again when what they depend on has changed (the mesh, section,
    material, free coordinates, node masses, `modes`, `correction_modes` and, with
    correction modes, the nodes that carry markers)."""
    name: str
    points: np.ndarray
    elements: tuple
    section: object
    material: object
    reference: np.ndarray
    nodes: np.ndarray
    connectivity: np.ndarray
    free: np.ndarray
    node_masses: dict
    alpha: float
    beta: float
    initial: object = "undeformed"  # a BEAM_INITIAL_STATES name or qf (nf,)
    markers: dict = field(default_factory=dict)
    node_inertias: dict = field(default_factory=dict)
    geometric: str = "consistent"
    modes: object = "all"
    correction_modes: bool = False
    initial_rates: object = None  # None or the elastic rates (nf,)
    modal_damping: object = None  # None, a ratio, ratios per mode, or "bands"

    @property
    def nodal_invariants(self):
        """Invariants of the free nodal coordinates (flexmbs.elements.invariants)."""
        return self._derived()[0]

    @property
    def basis(self):
        """The ModalBasis (flexmbs.elements.modal), None when `modes` is "all"."""
        return self._derived()[1]

    @property
    def invariants(self):
        """Invariants of the elastic coordinates: the nodal ones, or their projection
        on the basis."""
        return self._derived()[2]

    def _derived(self):
        """(nodal invariants, basis, invariants), computed from the description and
        kept with the key of what they depend on (_derivation_key)."""
        key = _derivation_key(self)
        held = self.__dict__.get("_derived_from")
        if held is None or held[0] != key:
            held = (key, _derive_beam(self))
            self.__dict__["_derived_from"] = held
        return held[1]

    @property
    def mass(self):
        return self.invariants.mass

    @property
    def com(self):
        return self.invariants.first_moment / self.invariants.mass

    @property
    def inertia_about_origin(self):
        """I_O of the undeformed beam: tr(Th0) I - Th0 (docs/explanation/formulation.md section
        2)."""
        th0 = self.invariants.th0
        return np.trace(th0) * np.eye(3) - th0

    @property
    def inertia(self):
        c = self.com
        return self.inertia_about_origin - self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    @property
    def nf(self):
        """Number of elastic coordinates qf: the free nodal coordinates, or the
        columns of the mode basis."""
        return len(self.free) if self.basis is None else self.basis.nm

    def coordinate_names(self):
        """`BODY.nNODE.DOF` of each nodal elastic coordinate; `BODY.modeK` and
        `BODY.correctionK` of the modal ones."""
        if self.basis is not None:
            return list(self.basis.names)
        return [f"{self.name}.n{k // 6}.{NODE_DOFS[k % 6]}" for k in self.free]

    def node_columns(self, node):
        """Indices into the free nodal coordinates (qf itself when not reduced) of the
        node's 6 coordinates (-1 where fixed)."""
        where = {int(k): j for j, k in enumerate(self.free)}
        return np.array([where.get(6 * node + d, -1) for d in range(6)], dtype=np.int64)

    def node_rows(self, node):
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

    @property
    def ndof(self):
        return len(self.translation_axes) + len(self.rotation_axes)

    def coordinate_names(self):
        if self.ndof == 1:
            return [self.name]
        return [f"{self.name}[{k}]" for k in range(self.ndof)]


@dataclass
class Driver:
    """Prescribed motion of one joint coordinate: x(t) = function(t)."""
    name: str
    joint: str
    coordinate: int
    function: object


@dataclass
class Actuator:
    """A motor on one joint coordinate, through a gear of ratio n (motor turns per
    joint turn), with rotor inertia J_r (kg m^2) and viscous resistance b_m (N m s/rad,
    at the motor). Its motor torque is `torque(t)` (type "torque") or the PD law
    (kp (x_ref - x) + kd (x_ref' - x')) / n on the joint error (type "pd"; kp in N m/rad
    or N/m, kd in N m s/rad or N s/m, x_ref = setpoint(t)), limited to |tau_m| <=
    max_torque (N m). On the joint: n tau_m - n^2 b_m x', and the reflected inertia
    n^2 J_r (Huang's motor model, H3.3)."""
    name: str
    joint: str
    coordinate: int
    type: str
    kp: float
    kd: float
    setpoint: object
    torque: object
    max_torque: float
    gear_ratio: float
    rotor_inertia: float
    motor_damping: float


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
    function: object


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
    rest_length: float


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
    body `frame` (the ground by default)."""
    name: str
    type: str
    joint: str | None = None
    coordinate: int | None = None
    body: str | None = None
    marker: str | None = None
    frame: str = GROUND
    actuator: str | None = None
    element: int | None = None
    at: object = None
    point: np.ndarray | None = None
    subdivisions: int | None = None
    contact: str | None = None


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
    set, its constant step without error control."""
    method: str = "bdf"
    t_end: float = 1.0
    rtol: float = 1e-6
    atol: float = 1e-8
    max_step: float = np.inf
    formulation: str = "joint"
    constraints: str = "ggl"
    rho_inf: float = 0.9
    fixed_step: float | None = None

    def with_changes(self, method=None, t_end=None, rtol=None, atol=None, max_step=None,
                     formulation=None, constraints=None, rho_inf=None, fixed_step=None):
        """A validated copy with the given values changed (ModelError if bad)."""
        item = "solver"
        if method is not None and method not in SOLVER_METHODS:
            raise ModelError(f"expected one of {', '.join(SOLVER_METHODS)}, got "
                             f"{method!r}", item, "method")
        if formulation is not None and formulation not in FORMULATIONS:
            raise ModelError(f"expected one of {', '.join(FORMULATIONS)}, got "
                             f"{formulation!r}", item, "formulation")
        if constraints is not None and constraints not in CONSTRAINT_FORMULATIONS:
            raise ModelError(f"expected one of {', '.join(CONSTRAINT_FORMULATIONS)}, got "
                             f"{constraints!r}", item, "constraints")
        if rho_inf is not None:
            rho_inf = _scalar(rho_inf, item, "rho_inf", nonnegative=True)
            if rho_inf > 1.0:
                raise ModelError(f"expected a number in [0, 1], got {rho_inf!r}", item,
                                 "rho_inf")
        return SolverSettings(
            rho_inf=self.rho_inf if rho_inf is None else rho_inf,
            fixed_step=self.fixed_step if fixed_step is None else _scalar(
                fixed_step, item, "fixed_step", positive=True),
            formulation=self.formulation if formulation is None else formulation,
            constraints=self.constraints if constraints is None else constraints,
            method=self.method if method is None else method,
            t_end=self.t_end if t_end is None else _scalar(t_end, item, "t_end",
                                                           positive=True),
            rtol=self.rtol if rtol is None else _relative_tolerance(rtol, item),
            atol=self.atol if atol is None else _scalar(atol, item, "atol", positive=True),
            max_step=self.max_step if max_step is None else _scalar(
                max_step, item, "max_step", positive=True))


RTOL_RANGE = (100 * np.finfo(float).eps, 0.1)
"""The relative tolerances a run accepts: below 100 ulps the error test asks for what
float64 cannot resolve (scipy's integrators raise theirs to it); above 0.1 no digit
of the result is controlled."""


def _relative_tolerance(value, item):
    """rtol, checked to lie in RTOL_RANGE (ModelError naming the field otherwise)."""
    rtol = _scalar(value, item, "rtol", positive=True)
    low, high = RTOL_RANGE
    if not low <= rtol <= high:
        raise ModelError(f"expected a relative tolerance between {low:.1e} (100 times "
                         f"the float64 resolution) and {high:g}, got {rtol:g}", item,
                         "rtol")
    return rtol


@dataclass(frozen=True)
class OutputSettings:
    """Output settings: `step`, the time between two recorded samples (s)."""
    step: float = 0.01

    def with_changes(self, step=None):
        """A validated copy with the given values changed (ModelError if bad)."""
        if step is None:
            return self
        return OutputSettings(_scalar(step, "output", "step", positive=True))


def _check_independent(tr, ro, item, tr_field, ro_field):
    """Translation axes linearly independent; consecutive rotation axes not parallel
    (either would make M* singular in every configuration)."""
    if len(tr) > 1 and np.linalg.svd(tr, compute_uv=False).min() < INDEPENDENT_AXES_TOL:
        raise ModelError("expected linearly independent translation axes", item, tr_field)
    for k in range(len(ro) - 1):
        if np.linalg.norm(np.cross(ro[k], ro[k + 1])) < INDEPENDENT_AXES_TOL:
            raise ModelError(f"rotation axes {k} and {k + 1} are parallel: two consecutive "
                             "rotations about the same axis are one degree of freedom",
                             item, ro_field)


def _joint_axes(jtype, item, axis=None, axes=None, translation_axes=None,
                rotation_axes=None):
    """(translation_axes, rotation_axes) of a joint type, from its `axis`/`axes` fields."""
    def need_none(**kw):
        for k, v in kw.items():
            if v is not None:
                raise ModelError(f"a {jtype} joint takes no '{k}'", item, k)

    if jtype != "general":
        need_none(translation_axes=translation_axes, rotation_axes=rotation_axes)
    empty = np.zeros((0, 3))
    if jtype in ("revolute", "prismatic", "cylindrical", "planar"):
        need_none(axes=axes)
        a = _EZ if axis is None else _axis(axis, item, "axis")
        if jtype == "revolute":
            return empty, a[None, :]
        if jtype == "prismatic":
            return a[None, :], empty
        if jtype == "cylindrical":
            return a[None, :], a[None, :]
        # planar: two in-plane translations, then the rotation about the normal a
        e1 = _EX - (_EX @ a) * a
        if np.linalg.norm(e1) < INDEPENDENT_AXES_TOL:
            e1 = _EY - (_EY @ a) * a
        e1 /= np.linalg.norm(e1)
        return np.array([e1, np.cross(a, e1)]), a[None, :]
    if jtype in ("universal", "spherical"):
        need_none(axis=axis)
        n = 2 if jtype == "universal" else 3
        default = np.eye(3)[:n]
        rot = default if axes is None else _axes(axes, item, "axes", n)
        _check_independent(empty, rot, item, "axes", "axes")
        return empty, rot
    if jtype in ("free", "fixed"):
        need_none(axis=axis, axes=axes)
        return (np.eye(3), np.eye(3)) if jtype == "free" else (empty, empty)
    # general
    need_none(axis=axis, axes=axes)
    tr = empty if translation_axes is None else _axes(translation_axes, item,
                                                      "translation_axes")
    ro = empty if rotation_axes is None else _axes(rotation_axes, item, "rotation_axes")
    if len(tr) > 3:
        raise ModelError(f"expected 0 to 3 translation axes, got {len(tr)}", item,
                         "translation_axes")
    if len(ro) > 3:
        raise ModelError(f"expected 0 to 3 rotation axes, got {len(ro)}", item,
                         "rotation_axes")
    if len(tr) + len(ro) == 0:
        raise ModelError("expected at least one translation or rotation axis (1 to 6 "
                         "coordinates in all)", item, "rotation_axes")
    _check_independent(tr, ro, item, "translation_axes", "rotation_axes")
    return tr, ro


class Model:
    """A multibody model under construction (the builder API).

    >>> m = Model("pendulum", gravity=(0, 0, -9.81))
    >>> m.add_rigid_body("rod", mass=1.0, com=(0.25, 0, 0), inertia=(1e-4, 0.0052, 0.0052),
    ...                  inertia_about="com")
    >>> m.add_joint("j1", "revolute", parent="ground", child="rod", axis=(0, 1, 0))

    Every body, and the ground, has a marker named "origin" at its frame.
    """

    def __init__(self, name="model", gravity=(0.0, 0.0, -9.81)):
        if not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name:
            raise ModelError("expected a non-empty name without '/' or '\\' (it names the "
                             f"default result file), got {name!r}", "model", "name")
        self.name = name
        self.gravity = _vector(gravity, 3, "model", "gravity")
        self.bodies = {}
        self.ground_markers = {ORIGIN: Marker(ORIGIN, GROUND, np.zeros(3), np.eye(3))}
        self.joints = {}
        self.drivers = {}
        self.actuators = {}
        self.forces = {}
        self.springs = {}
        self.user_laws = {}
        self.sensors = {}
        self.contacts = {}
        self.solver = SolverSettings()
        self.output = OutputSettings()
        self.source_path = None
        self.source_text = None
        self.overrides = []

    # ----------------------------------------------------------------- bodies
    def add_rigid_body(self, name, mass, inertia, inertia_about, com=(0.0, 0.0, 0.0)):
        """Add a rigid body; `inertia_about` is "com" or "origin" (of the body frame)."""
        item = f'body "{name}"'
        self._new_name(name, self.bodies, item, self.joints, "joint")
        if name == GROUND:
            raise ModelError(f'"{GROUND}" is reserved for the fixed frame', item, "name")
        m = _scalar(mass, item, "mass", positive=True)
        c = _vector(com, 3, item, "com")
        inertia_in = _inertia_matrix(inertia, item, "inertia")
        if inertia_about not in ("com", "origin"):
            raise ModelError(f"expected 'com' or 'origin', got {inertia_about!r}", item,
                             "inertia_about")
        i_c = inertia_in if inertia_about == "com" else (
            inertia_in - m * (c @ c * np.eye(3) - np.outer(c, c)))
        _check_inertia(i_c, m, item, inertia_about)
        body = RigidBody(name, m, c, i_c)
        body.markers[ORIGIN] = Marker(ORIGIN, name, np.zeros(3), np.eye(3))
        self.bodies[name] = body
        return body

    def add_beam_body(self, name, points, section, material, elements=1, reference=None,
                      fixed=None, node_masses=None, alpha=0.0, beta=0.0,
                      initial="undeformed", node_inertias=None, geometric="consistent",
                      modes="all", correction_modes=False, initial_rates=None,
                      modal_damping=None):
        """Add a flexible beam body (see BeamBody). `elements`: an integer per segment
        of the polyline (or one for all); `fixed`: {node: dofs} of the reference
        conditions, dofs a list of NODE_DOFS names or "all" (default: node 0 clamped;
        node indices may count from the end, -1 the last); `node_masses` {node: kg};
        `node_inertias` {node: inertia} with an inertia as for a rigid body (3, 6 or
        3 x 3 numbers, kg m^2, body axes, about the node); `geometric`: the geometric
        stiffness, one of GEOMETRIC_OPTIONS;
        `reference`: section-y reference vector in body axes (default: the body axis,
        of x, y, z, most normal to the first segment); `initial`: "undeformed",
        "static" or the elastic coordinates qf (their number is checked when the model
        is compiled, after modal reduction); `initial_rates`: None or the elastic
        rates at t = 0, as many as `initial`; `modal_damping`: None, a damping ratio
        of every mode, one per mode, or "bands" (see BeamBody); `modes`: "all" (nodal
        coordinates) or the number of lowest natural modes kept; `correction_modes`: add
        static correction modes at the nodes that
        carry markers. The invariants and the mode basis are made when the model is
        compiled (BeamBody)."""
        from ..elements.beam import element_frame
        item = f'body "{name}"'
        self._new_name(name, self.bodies, item, self.joints, "joint")
        if name == GROUND:
            raise ModelError(f'"{GROUND}" is reserved for the fixed frame', item, "name")
        try:
            pts = np.array(points, dtype=float)
        except (TypeError, ValueError):
            pts = None
        if pts is None or pts.ndim != 2 or pts.shape[1] != 3 or len(pts) < 2 or \
                not np.all(np.isfinite(pts)):
            raise ModelError(f"expected two or more points [x, y, z] (m), got {points!r}",
                             item, "points")
        nseg = len(pts) - 1
        counts = [elements] * nseg if np.ndim(elements) == 0 else list(elements)
        if len(counts) != nseg or any(isinstance(c, bool) or not isinstance(
                c, (int, np.integer)) or c < 1 for c in counts):
            raise ModelError(f"expected a positive integer per segment ({nseg}), got "
                             f"{elements!r}", item, "elements")
        _check_beam_memory(sum(counts), item)
        nodes = [pts[0]]
        for sgm, count in enumerate(counts):
            a, b = pts[sgm], pts[sgm + 1]
            if np.linalg.norm(b - a) == 0.0:
                raise ModelError(f"segment {sgm} has zero length", item, "points")
            nodes += [a + (b - a) * (k + 1) / count for k in range(count)]
        nodes = np.array(nodes)
        conn = np.array([[k, k + 1] for k in range(len(nodes) - 1)], dtype=np.int64)
        if reference is None:
            axis = (pts[1] - pts[0]) / np.linalg.norm(pts[1] - pts[0])
            reference = np.eye(3)[int(np.argmin(np.abs(axis)))]
        ref = _vector(reference, 3, item, "reference")
        fixed = {0: "all"} if fixed is None else fixed
        if not isinstance(fixed, dict):
            raise ModelError(f"expected a table node -> dofs, got {fixed!r}", item, "fixed")
        held = set()
        for node, dofs in fixed.items():
            node_k = _node_index(node, len(nodes))
            if node_k is None:
                raise ModelError(f"expected a node index 0..{len(nodes) - 1}, got "
                                 f"{node!r}", item, "fixed")
            names = NODE_DOFS if dofs == "all" else dofs
            if isinstance(names, str) or any(d not in NODE_DOFS for d in names):
                raise ModelError(f'expected "all" or a list of {", ".join(NODE_DOFS)}, '
                                 f"got {dofs!r}", item, f"fixed.{node}")
            held |= {6 * node_k + NODE_DOFS.index(d) for d in names}
        free = np.array([k for k in range(6 * len(nodes)) if k not in held], dtype=np.int64)
        masses = {}
        for node, mass in (node_masses or {}).items():
            node_k = _node_index(node, len(nodes))
            if node_k is None:
                raise ModelError(f"expected a node index 0..{len(nodes) - 1}, got "
                                 f"{node!r}", item, "node_masses")
            masses[node_k] = _scalar(mass, item, f"node_masses.{node}", positive=True)
        per_node = np.zeros(len(nodes))
        for node_k, mass in masses.items():
            per_node[node_k] = mass
        inertias = {}
        for node, inertia in (node_inertias or {}).items():
            node_k = _node_index(node, len(nodes))
            if node_k is None:
                raise ModelError(f"expected a node index 0..{len(nodes) - 1}, got "
                                 f"{node!r}", item, "node_inertias")
            j = _inertia_matrix(inertia, item, f"node_inertias.{node}")
            _check_inertia(j, 0.0, item, "node", positive_definite=False,
                           fld=f"node_inertias.{node}")
            inertias[node_k] = j
        for a, b in conn:
            element_frame(nodes[a], nodes[b], ref, item)  # the reference is not an axis
        from ..elements.geometric import GEOMETRIC_OPTIONS
        if geometric not in GEOMETRIC_OPTIONS:
            raise ModelError(f"expected one of {', '.join(GEOMETRIC_OPTIONS)}, got "
                             f"{geometric!r}", item, "geometric")
        initial = _beam_initial_state(initial, item)
        rates = None
        if initial_rates is not None:
            rates = _beam_initial_state(initial_rates, item, "initial_rates")
        if not (modes == "all" if isinstance(modes, str) else (
                isinstance(modes, (int, np.integer)) and not isinstance(modes, bool)
                and modes >= 1)):
            raise ModelError(f'expected a positive integer or "all", got {modes!r}',
                             item, "modes")
        if not isinstance(correction_modes, (bool, np.bool_)):
            raise ModelError(f"expected true or false, got {correction_modes!r}", item,
                             "correction_modes")
        if correction_modes and modes == "all":
            raise ModelError('correction modes complete a mode basis: give the number '
                             'of modes too (modes = n), or leave them out with modes = '
                             '"all" (the nodal coordinates represent every load)', item,
                             "correction_modes")
        body = BeamBody(name, pts, tuple(counts), section, material, ref, nodes, conn,
                        free, masses, _scalar(alpha, item, "alpha", nonnegative=True),
                        _scalar(beta, item, "beta", nonnegative=True), initial,
                        node_inertias=inertias, geometric=geometric,
                        modes=modes if isinstance(modes, str) else int(modes),
                        correction_modes=bool(correction_modes),
                        initial_rates=rates, modal_damping=_modal_damping(
                            modal_damping, item))
        body.markers[ORIGIN] = Marker(ORIGIN, name, np.zeros(3), np.eye(3))
        self.bodies[name] = body
        return body

    def add_marker(self, body, name, position=(0.0, 0.0, 0.0), orientation=None,
                   euler_xyz=None, node=None):
        """Add a marker frame on `body` ("ground" for the fixed frame).

        `orientation`: 3x3 matrix whose columns are the marker axes in body axes; or
        `euler_xyz`: three sequential rotation angles about x, y', z'' (rad). On a beam
        body a marker sits on a node (`node`, its index) and follows it.
        """
        item = f'marker "{name}" on body "{body}"'
        markers = self._markers_of(body, item)
        self._new_name(name, markers, item)
        beam = body != GROUND and isinstance(self.bodies[body], BeamBody)
        if beam:
            nodes = self.bodies[body].nodes
            index = None if isinstance(node, bool) or not isinstance(
                node, (int, np.integer)) else _node_index(node, len(nodes))
            if index is None:
                raise ModelError(f"a marker on a beam body sits on a node: expected a "
                                 f"node index 0..{len(nodes) - 1} (or -1 for the last), "
                                 f"got {node!r}", item, "node")
            node = index
            position = nodes[node]
        elif node is not None:
            raise ModelError("only markers on beam bodies sit on nodes", item, "node")
        p = _vector(position, 3, item, "position")
        if orientation is not None and euler_xyz is not None:
            raise ModelError("give 'orientation' or 'euler_xyz', not both", item,
                             "euler_xyz")
        if euler_xyz is not None:
            c = rotation_from_euler_xyz(_vector(euler_xyz, 3, item, "euler_xyz"))
        elif orientation is not None:
            c = _rotation(orientation, item, "orientation")
        else:
            c = np.eye(3)
        markers[name] = Marker(name, body, p, c, None if node is None else int(node))
        return markers[name]

    # ----------------------------------------------------------------- joints
    def add_joint(self, name, type, parent, child, parent_marker=ORIGIN,
                  child_marker=ORIGIN, axis=None, axes=None, translation_axes=None,
                  rotation_axes=None, initial=0.0, initial_rate=0.0, stiffness=0.0,
                  damping=0.0, rest=0.0, cut=False):
        """Add a joint from `parent_marker` on `parent` to `child_marker` on `child`.

        Types and their axes (unit vectors in the parent marker's frame):
        revolute/prismatic/cylindrical `axis` (default z); universal `axes` (2, default
        x then y); spherical `axes` (3 sequential rotations, default x, y, z); planar
        `axis` = its normal (translations in the plane, then the rotation about it);
        free (translations x, y, z, then rotations x, y, z); fixed; general
        `translation_axes` and `rotation_axes`.
        Per coordinate (scalar or list): `initial`, `initial_rate`, spring `stiffness`
        (N m/rad or N/m) about `rest`, viscous `damping` (N m s/rad or N s/m).
        """
        item = f'joint "{name}"'
        self._new_name(name, self.joints, item, self.bodies, "body")
        if type not in JOINT_TYPES:
            raise ModelError(f"expected a joint type, one of {', '.join(JOINT_TYPES)}; "
                             f"got {type!r}", item, "type")
        for fld, b in (("parent", parent), ("child", child)):
            if b != GROUND and b not in self.bodies:
                raise ModelError(f'unknown body "{b}"', item, fld)
        if parent == child:
            raise ModelError("a joint connects two different bodies", item, "child")
        if child == GROUND:
            raise ModelError('the ground cannot be a child; swap "parent" and "child"',
                             item, "child")
        for fld, b, mk in (("parent_marker", parent, parent_marker),
                           ("child_marker", child, child_marker)):
            if mk not in self._markers_of(b, item):
                raise ModelError(f'unknown marker "{mk}" on body "{b}"', item, fld)
        tr, ro = _joint_axes(type, item, axis, axes, translation_axes, rotation_axes)
        n = len(tr) + len(ro)
        if not isinstance(cut, bool):
            raise ModelError(f"expected true or false, got {cut!r}", item, "cut")
        joint = Joint(
            name, type, parent, child, parent_marker, child_marker, tr, ro,
            initial=_per_coordinate(initial, n, item, "initial"),
            initial_rate=_per_coordinate(initial_rate, n, item, "initial_rate"),
            stiffness=_per_coordinate(stiffness, n, item, "stiffness"),
            damping=_per_coordinate(damping, n, item, "damping"),
            rest=_per_coordinate(rest, n, item, "rest"),
            cut=cut)
        for fld in ("stiffness", "damping"):
            if np.any(getattr(joint, fld) < 0):
                raise ModelError("expected values >= 0", item, fld)
        self.joints[name] = joint
        return joint

    # ------------------------------------------------------ drivers and loads
    def add_driver(self, name, joint, function, coordinate=0):
        """Prescribe coordinate `coordinate` of `joint` as `function(t)` (a time function
        law from `flexmbs.model.timefunctions`). The coordinate leaves q."""
        item = f'driver "{name}"'
        self._new_name(name, self.drivers, item)
        self._check_coordinate_free(joint, coordinate, item)
        check_time_function(function, item, "function")
        self.drivers[name] = Driver(name, joint, int(coordinate), function)
        return self.drivers[name]

    def _check_coordinate_free(self, joint, coordinate, item):
        """`coordinate` is an index of `joint`'s coordinates that has no driver and no
        actuator yet (a coordinate takes one of them)."""
        if joint not in self.joints:
            raise ModelError(f'unknown joint "{joint}"', item, "joint")
        nd = self.joints[joint].ndof
        if isinstance(coordinate, bool) or not isinstance(coordinate, (int, np.integer)) \
                or not 0 <= coordinate < nd:
            raise ModelError(f"expected a coordinate index 0..{nd - 1} of joint "
                             f'"{joint}", got {coordinate!r}', item, "coordinate")
        for other in self.drivers.values():
            if other.joint == joint and other.coordinate == coordinate:
                raise ModelError(f'coordinate {coordinate} of joint "{joint}" is already '
                                 f'driven by driver "{other.name}"', item, "coordinate")
        for other in self.actuators.values():
            if other.joint == joint and other.coordinate == coordinate:
                raise ModelError(f'coordinate {coordinate} of joint "{joint}" already has '
                                 f'actuator "{other.name}"', item, "coordinate")

    def add_actuator(self, name, joint, type="pd", coordinate=0, kp=0.0, kd=0.0,
                     setpoint=None, torque=None, max_torque=np.inf, gear_ratio=1.0,
                     rotor_inertia=0.0, motor_damping=0.0):
        """A motor on coordinate `coordinate` of `joint` (see Actuator): a PD controller
        towards `setpoint` (a time function, type "pd") or an open-loop motor torque
        `torque` (a time function, N m, type "torque")."""
        item = f'actuator "{name}"'
        self._new_name(name, self.actuators, item)
        self._check_coordinate_free(joint, coordinate, item)
        if type not in ACTUATOR_TYPES:
            raise ModelError(f"expected one of {', '.join(ACTUATOR_TYPES)}, got {type!r}",
                             item, "type")
        kp = _scalar(kp, item, "kp", nonnegative=True)
        kd = _scalar(kd, item, "kd", nonnegative=True)
        if type == "pd":
            if setpoint is None:
                raise ModelError('a "pd" actuator needs a setpoint (a time function)',
                                 item, "setpoint")
            if torque is not None:
                raise ModelError('a "pd" actuator takes no torque function (that is '
                                 'type "torque")', item, "torque")
            check_time_function(setpoint, item, "setpoint")
        else:
            if torque is None:
                raise ModelError('a "torque" actuator needs a torque (a time function)',
                                 item, "torque")
            if setpoint is not None or kp or kd:
                raise ModelError('a "torque" actuator takes no setpoint, kp or kd (that '
                                 'is type "pd")', item, "setpoint")
            check_time_function(torque, item, "torque")
        if isinstance(max_torque, bool) or not isinstance(
                max_torque, (int, float, np.floating, np.integer)) or not max_torque > 0:
            raise ModelError(f"expected a positive number (or inf), got {max_torque!r}",
                             item, "max_torque")
        self.actuators[name] = Actuator(
            name, joint, int(coordinate), type, kp, kd, setpoint, torque,
            float(max_torque), _scalar(gear_ratio, item, "gear_ratio", positive=True),
            _scalar(rotor_inertia, item, "rotor_inertia", nonnegative=True),
            _scalar(motor_damping, item, "motor_damping", nonnegative=True))
        return self.actuators[name]

    def add_force(self, name, type, body, marker=ORIGIN, vector=(0.0, 0.0, 0.0),
                  frame="global", function=None):
        """A point force ("force", N) or torque ("torque", N m) on a marker:
        vector * function(t), `frame` "global" or "marker" (follower)."""
        item = f'force "{name}"'
        self._new_name(name, self.forces, item)
        if type not in FORCE_TYPES:
            raise ModelError(f"expected 'force' or 'torque', got {type!r}", item, "type")
        if body not in self.bodies:
            raise ModelError(f'unknown body "{body}" (loads act on moving bodies)', item,
                             "body")
        if marker not in self.bodies[body].markers:
            raise ModelError(f'unknown marker "{marker}" on body "{body}"', item, "marker")
        if frame not in ("global", "marker"):
            raise ModelError(f"expected 'global' or 'marker', got {frame!r}", item, "frame")
        fn = Constant(1.0) if function is None else function
        check_time_function(fn, item, "function")
        self.forces[name] = Force(name, type, body, marker,
                                  _vector(vector, 3, item, "vector"), frame, fn)
        return self.forces[name]

    def add_spring(self, name, body1, marker1, body2, marker2, stiffness, damping=0.0,
                   rest_length=None):
        """A point-to-point spring (N/m) and damper (N s/m) between marker1 on body1 and
        marker2 on body2 (either may be the ground); `rest_length` (m) defaults to their
        distance in the initial configuration."""
        item = f'spring "{name}"'
        self._new_name(name, self.springs, item)
        for fld, b, mk in (("body1", body1, marker1), ("body2", body2, marker2)):
            if b != GROUND and b not in self.bodies:
                raise ModelError(f'unknown body "{b}"', item, fld)
            if mk not in self._markers_of(b, item):
                raise ModelError(f'unknown marker "{mk}" on body "{b}"', item,
                                 "marker" + fld[-1])
        if body1 == body2:
            raise ModelError("a spring connects two different bodies", item, "body2")
        self.springs[name] = Spring(
            name, body1, marker1, body2, marker2,
            _scalar(stiffness, item, "stiffness", nonnegative=True),
            _scalar(damping, item, "damping", nonnegative=True),
            None if rest_length is None else _scalar(rest_length, item, "rest_length",
                                                     nonnegative=True))
        return self.springs[name]

    def add_user_law(self, name, law, joint=None, coordinate=0, body=None, marker=ORIGIN,
                     frame="global", params=(), read_coordinates=()):
        """A user force law (flexmbs.model.user_laws): `law(t, q, u, params, out)`, a
        function made by `flexmbs.user_law` (a plain function is compiled here), on
        coordinate `coordinate` of `joint` (out[0]: N or N m) or at `marker` of
        `body` (out[0:3] a force, N, out[3:6] a torque, N m, in `frame` axes,
        "global" or "marker"). It is called with `params` followed by the q indices
        of the coordinates named in `read_coordinates`."""
        from .user_laws import user_law_item
        self._new_name(name, self.user_laws, f'user law "{name}"')
        self.user_laws[name] = user_law_item(self, name, law, joint, coordinate, body,
                                             marker, frame, params, read_coordinates)
        return self.user_laws[name]

    def add_contact(self, name, type, disk, plane, radius=None, axis=(0.0, 1.0, 0.0),
                    normal=(0.0, 0.0, 1.0), disk_marker=ORIGIN, plane_marker=ORIGIN):
        """Add a rolling contact (see Contact): type "rolling_disk", the `disk` body
        (its marker `disk_marker` at the disk's centre, the axle `axis` in that
        marker's axes), the `plane` body (the ground or a body; its marker
        `plane_marker` a point of the plane, `normal` in that marker's axes) and the
        disk's `radius` (m, required); or type "knife_edge", the edge point
        `disk_marker` of body `disk` with the blade along `axis` (no radius)."""
        item = f'contact "{name}"'
        self._new_name(name, self.contacts, item)
        if type not in CONTACT_TYPES:
            raise ModelError(f"expected a contact type, one of {', '.join(CONTACT_TYPES)}; "
                             f"got {type!r}", item, "type")
        if disk == GROUND:
            raise ModelError("the disk must be a moving body, not the ground", item, "disk")
        for fld, b in (("disk", disk), ("plane", plane)):
            if b != GROUND and b not in self.bodies:
                raise ModelError(f'unknown body "{b}"', item, fld)
        if disk == plane:
            raise ModelError("the disk and the plane must be two different bodies", item,
                             "plane")
        for fld, b, mk in (("disk_marker", disk, disk_marker),
                           ("plane_marker", plane, plane_marker)):
            if mk not in self._markers_of(b, item):
                raise ModelError(f'unknown marker "{mk}" on body "{b}"', item, fld)
        if type == "knife_edge":
            if radius is not None:
                raise ModelError("a knife_edge contact takes no radius (its edge is the "
                                 "point of disk_marker)", item, "radius")
            radius = 0.0
        elif radius is None:
            raise ModelError(f'a {type} contact needs a "radius" (m)', item, "radius")
        else:
            radius = _scalar(radius, item, "radius", positive=True)
        contact = Contact(name, type, disk, plane, radius=radius,
                          axis=_axis(axis, item, "axis"),
                          normal=_axis(normal, item, "normal"),
                          disk_marker=disk_marker, plane_marker=plane_marker)
        self.contacts[name] = contact
        return contact

    def add_sensor(self, name, type, joint=None, coordinate=None, body=None, marker=None,
                   frame=GROUND, actuator=None, element=0, at="start", point=None,
                   subdivisions=1, contact=None):
        """Record a joint coordinate or rate; a marker's position, orientation
        (rotation matrix, row-major), velocity, angular velocity or elastic deflection
        in the axes of body `frame` (positions relative to its origin); an actuator's
        torque on its joint (N m or N) or the work it has done (J); on a beam body, at
        the position `at` ("start", "end" or xi in [0, 1]) of element `element`: the
        axial strain at the section point `point` = [y, z] (m, section axes), the
        curvatures or the section forces; or the beam's deformed centre line
        (`subdivisions` points per element); or the force of a rolling `contact` on
        its disk and the contact point (type "contact_reaction")."""
        item = f'sensor "{name}"'
        self._new_name(name, self.sensors, item, sensor=True)
        if type not in SENSOR_TYPES:
            raise ModelError(f"expected a sensor type, one of {', '.join(SENSOR_TYPES)}; "
                             f"got {type!r}", item, "type")
        if type in BEAM_SECTION_SENSORS or type == "beam_centerline":
            if body not in self.bodies or not isinstance(self.bodies[body], BeamBody):
                raise ModelError(f'expected a beam body, got "{body}"', item, "body")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
        if type == "beam_centerline":
            if isinstance(subdivisions, bool) or not isinstance(
                    subdivisions, (int, np.integer)) or subdivisions < 1:
                raise ModelError(f"expected a positive integer, got {subdivisions!r}", item,
                                 "subdivisions")
            self.sensors[name] = Sensor(name, type, body=body, frame=frame,
                                        subdivisions=int(subdivisions))
        elif type in BEAM_SECTION_SENSORS:
            ne = len(self.bodies[body].connectivity)
            if isinstance(element, bool) or not isinstance(element, (int, np.integer)) or \
                    not -ne <= element < ne:
                raise ModelError(f"expected an element index 0..{ne - 1} (or -1 for the "
                                 f"last), got {element!r}", item, "element")
            xi = {"start": 0.0, "end": 1.0}.get(at) if isinstance(at, str) else (
                None if isinstance(at, bool) else at)
            if not isinstance(xi, (int, float, np.floating, np.integer)) or \
                    not 0.0 <= xi <= 1.0:
                raise ModelError(f"expected 'start', 'end' or a number in [0, 1] (the "
                                 f"position along the element), got {at!r}", item, "at")
            pt = None
            if type == "beam_strain":
                if point is None:
                    raise ModelError("a beam_strain sensor needs the section point [y, z] "
                                     "(m)", item, "point")
                pt = _vector(point, 2, item, "point")
            elif point is not None:
                raise ModelError(f"a {type} sensor takes no section point", item, "point")
            self.sensors[name] = Sensor(name, type, body=body, element=int(element) % ne,
                                        at=at, point=pt)
        elif type == "contact_reaction":
            if contact not in self.contacts:
                raise ModelError(f'unknown contact "{contact}"', item, "contact")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
            self.sensors[name] = Sensor(name, type, contact=contact, frame=frame)
        elif type.startswith("actuator"):
            if actuator not in self.actuators:
                raise ModelError(f'unknown actuator "{actuator}"', item, "actuator")
            self.sensors[name] = Sensor(name, type, actuator=actuator)
        elif type in ("joint_reaction", "constraint_residual"):
            if joint not in self.joints:
                raise ModelError(f'unknown joint "{joint}"', item, "joint")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
            self.sensors[name] = Sensor(name, type, joint=joint, frame=frame)
        elif type.startswith("joint"):
            if joint not in self.joints:
                raise ModelError(f'unknown joint "{joint}"', item, "joint")
            nd = self.joints[joint].ndof
            if coordinate is None:
                coordinate = 0
                if nd > 1:
                    raise ModelError(f'joint "{joint}" has {nd} coordinates: say which',
                                     item, "coordinate")
            if isinstance(coordinate, bool) or not isinstance(coordinate, (int, np.integer)) \
                    or not 0 <= coordinate < nd:
                raise ModelError(f"expected a coordinate index 0..{nd - 1}, got "
                                 f"{coordinate!r}", item, "coordinate")
            self.sensors[name] = Sensor(name, type, joint=joint, coordinate=int(coordinate))
        else:
            for fld, v in (("body", body), ("marker", marker)):
                if v is None:
                    raise ModelError(f"a {type} sensor needs a '{fld}'", item, fld)
            if body != GROUND and body not in self.bodies:
                raise ModelError(f'unknown body "{body}"', item, "body")
            if marker not in self._markers_of(body, item):
                raise ModelError(f'unknown marker "{marker}" on body "{body}"', item,
                                 "marker")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
            if type == "marker_deflection" and (
                    body == GROUND or not isinstance(self.bodies[body], BeamBody)):
                raise ModelError("a marker_deflection sensor reads a marker on a beam "
                                 f'body; "{body}" is not one', item, "body")
            self.sensors[name] = Sensor(name, type, body=body, marker=marker, frame=frame)
        return self.sensors[name]

    # --------------------------------------------------------------- settings
    def set_solver(self, method=None, t_end=None, rtol=None, atol=None, max_step=None,
                   formulation=None, constraints=None, rho_inf=None, fixed_step=None):
        """Change the integration settings (see SolverSettings)."""
        self.solver = self.solver.with_changes(method, t_end, rtol, atol, max_step,
                                               formulation, constraints, rho_inf,
                                               fixed_step)

    def set_output(self, step=None):
        """Change the time between two recorded samples (s)."""
        self.output = self.output.with_changes(step)

    # ---------------------------------------------------------------- helpers
    def marker(self, body, name):
        markers = self._markers_of(body, None)
        if name not in markers:
            raise ModelError(f'unknown marker "{name}"', f'body "{body}"', "markers")
        return markers[name]

    def _markers_of(self, body, item):
        if body == GROUND:
            return self.ground_markers
        if body not in self.bodies:
            raise ModelError(f'unknown body "{body}"', item, "body")
        return self.bodies[body].markers

    @staticmethod
    def _new_name(name, table, item, other=None, other_kind="", sensor=False):
        """A name for a new item of `table`: non-empty, of NAME_PATTERN's characters
        (a dot would be read as a separator of coordinate names and of --set paths),
        not in `table` nor in `other` (bodies and joints, whose names make the
        coordinate names). Names that start with GENERATED_PREFIX are the items
        flexmbs adds itself (flexmbs.model.absolute), which no user name can be."""
        if not isinstance(name, str) or not name:
            raise ModelError("expected a non-empty name", item, "name")
        if name.startswith(GENERATED_PREFIX):   # an item flexmbs makes (absolute form)
            if name in table:
                raise ModelError("the name is used twice", item, "name")
            return
        if sensor and not SENSOR_NAME_PATTERN.fullmatch(name):
            raise ModelError(f"expected a name without spaces or '/' (it names a "
                             f"dataset of the result file), got {name!r}", item, "name")
        if not sensor and not NAME_PATTERN.fullmatch(name):
            raise ModelError(f"expected a name of letters, digits, '_' and '-' (no "
                             f"spaces or dots: dots separate the parts of coordinate "
                             f"names and --set paths), got {name!r}", item, "name")
        if name in table:
            raise ModelError("the name is used twice", item, "name")
        if other is not None and name in other:
            raise ModelError(f"the name is that of a {other_kind}: bodies and joints "
                             f"name the coordinates, and must differ", item, "name")


def _beam_initial_state(initial, item, fld="initial"):
    """A BEAM_INITIAL_STATES name (`initial` only), or the elastic coordinates (or
    rates) as a float array."""
    if isinstance(initial, str):
        if fld != "initial":
            raise ModelError(f"expected a list of the elastic rates, got {initial!r}",
                             item, fld)
        if initial not in BEAM_INITIAL_STATES:
            raise ModelError(f"expected one of {', '.join(BEAM_INITIAL_STATES)} or a list "
                             f"of the elastic coordinates, got {initial!r}", item,
                             "initial")
        return initial
    try:
        values = np.asarray(initial, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"expected a name or a list of numbers, got {initial!r}", item,
                         fld) from None
    if not np.all(np.isfinite(values)):
        raise ModelError("expected finite elastic coordinates", item, fld)
    return values


def _modal_damping(spec, item):
    """None, "bands", or damping ratios >= 0 (a float or a float array); the count
    of a list is checked against the body's modes when the model is compiled."""
    if spec is None:
        return None
    if isinstance(spec, str):
        if spec != "bands":
            raise ModelError(f'expected "bands", a number or a list of numbers, got '
                             f"{spec!r}", item, "modal_damping")
        return spec
    try:
        ratios = np.asarray(spec, dtype=float)
    except (TypeError, ValueError):
        ratios = None
    if ratios is None or ratios.ndim > 1 or ratios.size == 0 or \
            not np.all(np.isfinite(ratios)) or np.any(ratios < 0):
        raise ModelError(f"expected damping ratios >= 0, got {spec!r}", item,
                         "modal_damping")
    return float(ratios) if ratios.ndim == 0 else ratios


class _Nodal:
    """A beam body seen with the given nodal invariants, for the basis that its own
    derivation is making (the body's attributes otherwise)."""

    def __init__(self, body, nodal_invariants):
        self._body = body
        self.nodal_invariants = nodal_invariants

    def __getattr__(self, name):
        return getattr(self._body, name)


def _derivation_key(body):
    """What a beam body's derived data depend on, comparable with ==."""
    key = (body.nodes.tobytes(), body.connectivity.tobytes(), body.reference.tobytes(),
           body.section, body.material, body.free.tobytes(),
           tuple(sorted(body.node_masses.items())), body.modes, body.correction_modes)
    if body.correction_modes:
        key += (tuple(sorted((m.node, m.name) for m in body.markers.values()
                             if m.node is not None)),)
    return key


def _derive_beam(body):
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
    nodal = beam_body_invariants(body.nodes, body.connectivity, body.reference,
                                 body.section, body.material, body.free,
                                 node_masses=per_node, item=item)
    if body.modes == "all":
        return nodal, None, nodal
    names = {}
    for marker in body.markers.values():
        if marker.node is not None:
            names.setdefault(marker.node, []).append(marker.name)
    nodes = sorted(names) if body.correction_modes else ()
    basis = modal_basis(_Nodal(body, nodal), body.modes, nodes, names, item)
    return nodal, basis, project_invariants(nodal, basis.vectors)


def _check_inertia(i_c, mass, item, about, positive_definite=True, fld="inertia"):
    """Symmetric positive definite (semi-definite if not `positive_definite`), principal
    moments obeying the triangle inequality."""
    where = {"com": "about the centre of mass",
             "origin": "about the centre of mass (converted from the frame origin)",
             "node": "about the node"}[about]
    w = np.linalg.eigvalsh(i_c)
    scale = max(abs(w).max(), 1e-300)
    if w.min() <= (1e-12 if positive_definite else -1e-12) * scale:
        what = "positive definite" if positive_definite else "positive semi-definite"
        raise ModelError(f"expected a {what} inertia; {where} its principal "
                         f"moments are {np.array2string(w, precision=6)}", item, fld)
    tol = 1e-9 * scale
    a, b, c = w
    if a + b < c - tol:
        raise ModelError(f"principal moments {np.array2string(w, precision=6)} {where} "
                         "violate the triangle inequality (I1 + I2 >= I3): no mass "
                         "distribution has them", item, fld)
