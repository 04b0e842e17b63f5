"""The model description: the Model builder, whose add_* methods check each item as it
is added (flexmbs.model.field_checks) and keep it (flexmbs.model.items), in the vocabulary of
flexmbs.model.vocabulary, which this module also exports. Nothing here knows about
numba.

The TOML reader (`flexmbs.formats.toml_reader`) and the Python builder API share this
vocabulary: a model file is a list of calls to the `Model.add_*` methods.

Units are SI (m, kg, s, rad, N, N m). Vectors of a marker or a joint are given in the
frame of the body (or marker) that owns them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelError
from ..rotations import rotation_from_euler_xyz
from .drives import check_command, dc_motor_parameters, joint_limits
from .fe_body import FeBody
from .field_checks import (
    _axis,
    _beam_initial_state,
    _check_beam_elements,
    _check_beam_memory,
    _check_centerline,
    _check_inertia,
    _check_joint_coordinate,
    _check_section_and_material,
    _check_section_point,
    _inertia_matrix,
    _joint_axes,
    _modal_damping,
    _node_index,
    _per_coordinate,
    _rotation,
    _scalar,
    _vector,
)
from .items import (
    Actuator,
    BeamBody,
    Contact,
    Driver,
    Force,
    Joint,
    Marker,
    OutputSettings,
    RigidBody,
    Sensor,
    SolverSettings,
    Spring,
)
from .timefunctions import Constant, check_time_function
from .vocabulary import (
    ACTUATOR_TYPES,
    BEAM_SECTION_SENSORS,
    CONSTRAINT_FORMULATIONS,
    CONTACT_TYPES,
    FLEXIBLE_BODY_SENSORS,
    FORCE_TYPES,
    FORMULATIONS,
    GENERATED_PREFIX,
    GROUND,
    JOINT_TYPES,
    NAME_PATTERN,
    NODE_DOFS,
    ORIGIN,
    SENSOR_NAME_PATTERN,
    SENSOR_TYPES,
    SOLVER_METHODS,
)

if TYPE_CHECKING:
    from ..elements.materials import Material
    from ..elements.sections import Section
    from .backlash import Backlash
    from .controllers import Controller
    from .friction import Friction
    from .timefunctions import TimeFunction
    from .user_laws import LawFunction, UserLaw, UserLawItem

__all__ = [
    "GROUND",
    "JOINT_TYPES",
    "SENSOR_TYPES",
    "BEAM_SECTION_SENSORS",
    "FORCE_TYPES",
    "SOLVER_METHODS",
    "CONSTRAINT_FORMULATIONS",
    "ACTUATOR_TYPES",
    "NODE_DOFS",
    "Marker",
    "RigidBody",
    "BeamBody",
    "FeBody",
    "Joint",
    "Driver",
    "Actuator",
    "Force",
    "Spring",
    "Sensor",
    "Contact",
    "CONTACT_TYPES",
    "SolverSettings",
    "OutputSettings",
    "Model",
    "rotation_from_euler_xyz",
    "ORIGIN",
    "FORMULATIONS",
]


class Model:
    """A multibody model under construction (the builder API).

    >>> m = Model("pendulum", gravity=(0, 0, -9.81))
    >>> m.add_rigid_body("rod", mass=1.0, com=(0.25, 0, 0), inertia=(1e-4, 0.0052, 0.0052),
    ...                  inertia_about="com")
    >>> m.add_joint("j1", "revolute", parent="ground", child="rod", axis=(0, 1, 0))

    Every body, and the ground, has a marker named "origin" at its frame.
    """

    def __init__(self, name: str = "model", gravity: ArrayLike = (0.0, 0.0, -9.81)) -> None:
        if not isinstance(name, str) or not name.strip() or "/" in name or "\\" in name:
            raise ModelError(
                "expected a non-empty name without '/' or '\\' (it names the "
                f"default result file), got {name!r}",
                "model",
                "name",
            )
        self.name = name
        self.gravity = _vector(gravity, 3, "model", "gravity")
        self.bodies: dict[str, RigidBody | BeamBody | FeBody] = {}
        self.ground_markers = {ORIGIN: Marker(ORIGIN, GROUND, np.zeros(3), np.eye(3))}
        self.joints: dict[str, Joint] = {}
        self.drivers: dict[str, Driver] = {}
        self.actuators: dict[str, Actuator] = {}
        self.forces: dict[str, Force] = {}
        self.springs: dict[str, Spring] = {}
        self.user_laws: dict[str, UserLawItem] = {}
        self.frictions: dict[str, Friction] = {}
        self.backlashes: dict[str, Backlash] = {}
        self.controllers: dict[str, Controller] = {}
        self.sensors: dict[str, Sensor] = {}
        self.contacts: dict[str, Contact] = {}
        self.solver = SolverSettings()
        self.output = OutputSettings()
        self.source_path: str | None = None
        self.source_text: str | None = None
        self.overrides: list[str] = []
        self.given_angles: list[tuple[str, float]] = []
        """(where, value) of the angles given as numbers that the description keeps as
        something else (a marker's euler_xyz, kept as its rotation): for the notes on
        values unlikely in radians (flexmbs.checks.plausibility)."""

    # ----------------------------------------------------------------- bodies
    def add_rigid_body(
        self,
        name: str,
        mass: float,
        inertia: ArrayLike,
        inertia_about: str,
        com: ArrayLike = (0.0, 0.0, 0.0),
    ) -> RigidBody:
        """Add a rigid body; `inertia_about` is "com" or "origin" (of the body frame)."""
        item = f'body "{name}"'
        self._new_name(name, self.bodies, item, self.joints, "joint")
        if name == GROUND:
            raise ModelError(f'"{GROUND}" is reserved for the fixed frame', item, "name")
        m = _scalar(mass, item, "mass", positive=True)
        c = _vector(com, 3, item, "com")
        inertia_in = _inertia_matrix(inertia, item, "inertia")
        if inertia_about not in ("com", "origin"):
            raise ModelError(
                f"expected 'com' or 'origin', got {inertia_about!r}", item, "inertia_about"
            )
        i_c = (
            inertia_in
            if inertia_about == "com"
            else (inertia_in - m * (c @ c * np.eye(3) - np.outer(c, c)))
        )
        _check_inertia(i_c, m, item, inertia_about)
        body = RigidBody(name, m, c, i_c)
        body.markers[ORIGIN] = Marker(ORIGIN, name, np.zeros(3), np.eye(3))
        self.bodies[name] = body
        return body

    def _beam_elements(self) -> int:
        """The elements of the model's beams so far."""
        return sum(len(b.connectivity) for b in self.bodies.values() if isinstance(b, BeamBody))

    def add_beam_body(
        self,
        name: str,
        points: ArrayLike,
        section: Section,
        material: Material,
        elements: int | Sequence[int] = 1,
        reference: ArrayLike | None = None,
        fixed: dict[int | str, str | Sequence[str]] | None = None,
        node_masses: Mapping[int | str, float] | None = None,
        alpha: float = 0.0,
        beta: float = 0.0,
        initial: str | ArrayLike = "undeformed",
        node_inertias: Mapping[int | str, ArrayLike] | None = None,
        geometric: str = "consistent",
        modes: str | int = "all",
        correction_modes: bool = False,
        initial_rates: ArrayLike | None = None,
        modal_damping: str | ArrayLike | None = None,
        modes_below: float | None = None,
        modal_derivatives: bool | None = None,
    ) -> BeamBody:
        """Add a flexible beam body (see BeamBody). `elements`: an integer per segment
        of the polyline (or one for all); `fixed`: {node: dofs} of the reference
        conditions, dofs a list of NODE_DOFS names or "all" (default: node 0 clamped;
        node indices may count from the end, -1 the last); `node_masses` {node: kg};
        `node_inertias` {node: inertia} with an inertia as for a rigid body (3, 6 or
        3 x 3 numbers, kg m^2, body axes, about the node); `geometric`: the geometric
        stiffness, one of GEOMETRIC_OPTIONS;
        `reference`: section-y reference vector in body axes (default: the body axis,
        of x, y, z, most normal to the first segment); `initial`: a start in the
        beam's modes ({"mode": k, "amplitude": m, "rate": m/s} or a list of them,
        flexmbs.model.mode_start) or "undeformed",
        "static" or the elastic coordinates qf (their number is checked when the model
        is compiled, after modal reduction); `initial_rates`: None or the elastic
        rates at t = 0, as many as `initial`; `modal_damping`: None, a damping ratio
        of every mode, one per mode, or "bands" (see BeamBody); `modes`: "all" (nodal
        coordinates) or the number of lowest natural modes kept; `modes_below`: keep the
        modes below this frequency (Hz; of the lowest `modes` when that is a number);
        `correction_modes`: add static correction modes at the nodes that carry
        markers; `modal_derivatives`: add the modal derivatives of the kept modes (None:
        when `geometric` is "consistent"). The invariants and the mode basis are made when
        the model is compiled (BeamBody)."""
        from ..elements.beam import element_frame

        item = f'body "{name}"'
        self._new_name(name, self.bodies, item, self.joints, "joint")
        if name == GROUND:
            raise ModelError(f'"{GROUND}" is reserved for the fixed frame', item, "name")
        try:
            pts = np.array(points, dtype=float)
        except (TypeError, ValueError):
            pts = None
        if (
            pts is None
            or pts.ndim != 2
            or pts.shape[1] != 3
            or len(pts) < 2
            or not np.all(np.isfinite(pts))
        ):
            raise ModelError(
                f"expected two or more points [x, y, z] (m), got {points!r}", item, "points"
            )
        nseg = len(pts) - 1
        counts = (
            [cast(int, elements)] * nseg
            if np.ndim(elements) == 0
            else list(cast("Sequence[int]", elements))
        )
        if len(counts) != nseg or any(
            isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1 for c in counts
        ):
            raise ModelError(
                f"expected a positive integer per segment ({nseg}), got {elements!r}",
                item,
                "elements",
            )
        _check_beam_elements(sum(counts), self._beam_elements(), item)
        _check_beam_memory(sum(counts), item)
        _check_section_and_material(section, material, item)
        nodes: list[NDArray[np.float64]] | NDArray[np.float64] = [pts[0]]
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
                raise ModelError(
                    f"expected a node index 0..{len(nodes) - 1}, got {node!r}", item, "fixed"
                )
            names = NODE_DOFS if dofs == "all" else dofs
            if isinstance(names, str) or any(d not in NODE_DOFS for d in names):
                raise ModelError(
                    f'expected "all" or a list of {", ".join(NODE_DOFS)}, got {dofs!r}',
                    item,
                    f"fixed.{node}",
                )
            held |= {6 * node_k + NODE_DOFS.index(d) for d in names}
        free = np.array([k for k in range(6 * len(nodes)) if k not in held], dtype=np.int64)
        masses = {}
        for node, mass in (node_masses or {}).items():
            node_k = _node_index(node, len(nodes))
            if node_k is None:
                raise ModelError(
                    f"expected a node index 0..{len(nodes) - 1}, got {node!r}", item, "node_masses"
                )
            masses[node_k] = _scalar(mass, item, f"node_masses.{node}", positive=True)
        per_node = np.zeros(len(nodes))
        for node_k, mass in masses.items():
            per_node[node_k] = mass
        inertias = {}
        for node, inertia in (node_inertias or {}).items():
            node_k = _node_index(node, len(nodes))
            if node_k is None:
                raise ModelError(
                    f"expected a node index 0..{len(nodes) - 1}, got {node!r}",
                    item,
                    "node_inertias",
                )
            j = _inertia_matrix(inertia, item, f"node_inertias.{node}")
            _check_inertia(
                j, 0.0, item, "node", positive_definite=False, fld=f"node_inertias.{node}"
            )
            inertias[node_k] = j
        for a, b in conn:
            element_frame(nodes[a], nodes[b], ref, item)  # the reference is not an axis
        from ..elements.geometric import GEOMETRIC_OPTIONS

        if geometric not in GEOMETRIC_OPTIONS:
            raise ModelError(
                f"expected one of {', '.join(GEOMETRIC_OPTIONS)}, got {geometric!r}",
                item,
                "geometric",
            )
        from .mode_start import MODE_START, parse_mode_start

        initial_modes = parse_mode_start(initial, item)
        initial = MODE_START if initial_modes else _beam_initial_state(initial, item)
        rates = None
        if initial_rates is not None:
            rates = _beam_initial_state(initial_rates, item, "initial_rates")
        assert not isinstance(rates, str)  # a name is an `initial` only
        if not (
            modes == "all"
            if isinstance(modes, str)
            else (
                isinstance(modes, (int, np.integer)) and not isinstance(modes, bool) and modes >= 1
            )
        ):
            raise ModelError(f'expected a positive integer or "all", got {modes!r}', item, "modes")
        if not isinstance(correction_modes, (bool, np.bool_)):
            raise ModelError(
                f"expected true or false, got {correction_modes!r}", item, "correction_modes"
            )
        if modes_below is not None:
            modes_below = _scalar(modes_below, item, "modes_below", positive=True)
        reduced = modes != "all" or modes_below is not None
        if correction_modes and not reduced:
            raise ModelError(
                "correction modes complete a mode basis: give the number "
                "of modes too (modes = n or modes_below = f), or leave them out with "
                'modes = "all" (the nodal coordinates represent every load)',
                item,
                "correction_modes",
            )
        if modal_derivatives is not None:
            if not isinstance(modal_derivatives, (bool, np.bool_)):
                raise ModelError(
                    f"expected true or false, got {modal_derivatives!r}", item, "modal_derivatives"
                )
            if modal_derivatives and not reduced:
                raise ModelError(
                    "modal derivatives complete a mode basis: give the number of modes too "
                    '(modes = n or modes_below = f); the nodal coordinates (modes = "all") '
                    "hold them already",
                    item,
                    "modal_derivatives",
                )
            if modal_derivatives and geometric == "none":
                raise ModelError(
                    "modal derivatives carry the membrane strain of the geometric "
                    'stiffness, and geometric = "none" has none: leave them out or choose '
                    'geometric = "consistent"',
                    item,
                    "modal_derivatives",
                )
        body = BeamBody(
            name,
            pts,
            tuple(counts),
            section,
            material,
            ref,
            nodes,
            conn,
            free,
            masses,
            _scalar(alpha, item, "alpha", nonnegative=True),
            _scalar(beta, item, "beta", nonnegative=True),
            initial,
            node_inertias=inertias,
            geometric=geometric,
            modes=modes if isinstance(modes, str) else int(modes),
            correction_modes=bool(correction_modes),
            initial_rates=rates,
            modal_damping=_modal_damping(modal_damping, item),
            modes_below=modes_below,
            modal_derivatives=None if modal_derivatives is None else bool(modal_derivatives),
        )
        body.initial_modes = initial_modes
        body.markers[ORIGIN] = Marker(ORIGIN, name, np.zeros(3), np.eye(3))
        self.bodies[name] = body
        return body

    def add_fe_body(self, name: str, **fields: Any) -> FeBody:
        """Add a flexible body from finite-element data (see FeBody and
        flexmbs.model.fe_input.fe_body for the fields: `mesh` with `material`, or
        `stiffness`, `mass` and `nodes`, or `modal`, or `data` (FeData or FeModal);
        `interfaces`; `reduction`, `modes`, `modes_below`, `frame`; `alpha`, `beta`,
        `modal_damping`, `initial`, `initial_rates`). Relative file names are taken
        from `base` (default: the model file's folder, or the working directory)."""
        from .fe_input import fe_body

        item = f'body "{name}"'
        self._new_name(name, self.bodies, item, self.joints, "joint")
        if name == GROUND:
            raise ModelError(f'"{GROUND}" is reserved for the fixed frame', item, "name")
        fields.setdefault("base", os.path.dirname(self.source_path) if self.source_path else None)
        body = fe_body(name, **fields)
        body.markers[ORIGIN] = Marker(ORIGIN, name, np.zeros(3), np.eye(3))
        self.bodies[name] = body
        return body

    def add_marker(
        self,
        body: str,
        name: str,
        position: ArrayLike = (0.0, 0.0, 0.0),
        orientation: ArrayLike | None = None,
        euler_xyz: ArrayLike | None = None,
        node: int | None = None,
        interface: str | None = None,
    ) -> Marker:
        """Add a marker frame on `body` ("ground" for the fixed frame).

        `orientation`: 3x3 matrix whose columns are the marker axes in body axes; or
        `euler_xyz`: three sequential rotation angles about x, y', z'' (rad). On a beam
        body a marker sits on a node (`node`, its index) and follows it. On a
        finite-element body it sits on an interface (`interface`, its name: at its
        reference point, moving with it) or on a node (`node`, its label in the data:
        its translation; the marker's axes turn with the body's frame).
        """
        item = f'marker "{name}" on body "{body}"'
        markers = self._markers_of(body, item)
        self._new_name(name, markers, item)
        beam = body != GROUND and isinstance(self.bodies[body], BeamBody)
        fe = body != GROUND and isinstance(self.bodies[body], FeBody)
        if interface is not None and not fe:
            raise ModelError(
                "only markers on finite-element bodies sit on interfaces", item, "interface"
            )
        if fe:
            fe_body = cast(FeBody, self.bodies[body])
            node = _fe_attachment(fe_body, node, interface, item)
            position = fe_body.attachment_position(node)
        elif beam:
            nodes = cast(BeamBody, self.bodies[body]).nodes
            index = (
                None
                if isinstance(node, bool) or not isinstance(node, (int, np.integer))
                else _node_index(node, len(nodes))
            )
            if index is None:
                raise ModelError(
                    f"a marker on a beam body sits on a node: expected a "
                    f"node index 0..{len(nodes) - 1} (or -1 for the last), "
                    f"got {node!r}",
                    item,
                    "node",
                )
            node = index
            position = nodes[node]
        elif node is not None:
            raise ModelError("only markers on flexible bodies sit on nodes", item, "node")
        p = _vector(position, 3, item, "position")
        if orientation is not None and euler_xyz is not None:
            raise ModelError("give 'orientation' or 'euler_xyz', not both", item, "euler_xyz")
        if euler_xyz is not None:
            angles = _vector(euler_xyz, 3, item, "euler_xyz")
            c = rotation_from_euler_xyz(angles)
            self.given_angles.append(
                (f'{item}: field "euler_xyz"', float(angles[np.argmax(np.abs(angles))]))
            )
        elif orientation is not None:
            c = _rotation(orientation, item, "orientation")
        else:
            c = np.eye(3)
        markers[name] = Marker(name, body, p, c, None if node is None else int(node))
        return markers[name]

    # ----------------------------------------------------------------- joints
    def add_joint(
        self,
        name: str,
        type: str,
        parent: str,
        child: str,
        parent_marker: str = ORIGIN,
        child_marker: str = ORIGIN,
        axis: ArrayLike | None = None,
        axes: Iterable[ArrayLike] | None = None,
        translation_axes: Iterable[ArrayLike] | None = None,
        rotation_axes: Iterable[ArrayLike] | None = None,
        initial: ArrayLike = 0.0,
        initial_rate: ArrayLike = 0.0,
        stiffness: ArrayLike = 0.0,
        damping: ArrayLike = 0.0,
        rest: ArrayLike = 0.0,
        cut: bool = False,
        limits: ArrayLike | None = None,
        limit_stiffness: ArrayLike | None = None,
        limit_damping: ArrayLike | None = None,
    ) -> Joint:
        """Add a joint from `parent_marker` on `parent` to `child_marker` on `child`.

        Types and their axes (unit vectors in the parent marker's frame):
        revolute/prismatic/cylindrical `axis` (default z); universal `axes` (2, default
        x then y); spherical `axes` (3 sequential rotations, default x, y, z); planar
        `axis` = its normal (translations in the plane, then the rotation about it);
        free (translations x, y, z, then rotations x, y, z); fixed; general
        `translation_axes` and `rotation_axes`.
        Per coordinate (scalar or list): `initial`, `initial_rate`, spring `stiffness`
        (N m/rad or N/m) about `rest`, viscous `damping` (N m s/rad or N s/m).
        `limits`: [lower, upper] (or a pair per coordinate; -inf, inf for no limit on
        a side), enforced by compliant stops of `limit_stiffness` and `limit_damping`
        per coordinate (flexmbs.dynamics.stops).
        """
        item = f'joint "{name}"'
        self._new_name(name, self.joints, item, self.bodies, "body")
        if type not in JOINT_TYPES:
            raise ModelError(
                f"expected a joint type, one of {', '.join(JOINT_TYPES)}; got {type!r}",
                item,
                "type",
            )
        for fld, b in (("parent", parent), ("child", child)):
            if b != GROUND and b not in self.bodies:
                raise ModelError(f'unknown body "{b}"', item, fld)
        if parent == child:
            raise ModelError("a joint connects two different bodies", item, "child")
        if child == GROUND:
            raise ModelError(
                'the ground cannot be a child; swap "parent" and "child"', item, "child"
            )
        for fld, b, mk in (
            ("parent_marker", parent, parent_marker),
            ("child_marker", child, child_marker),
        ):
            if mk not in self._markers_of(b, item):
                raise ModelError(f'unknown marker "{mk}" on body "{b}"', item, fld)
        tr, ro = _joint_axes(type, item, axis, axes, translation_axes, rotation_axes)
        n = len(tr) + len(ro)
        if not isinstance(cut, bool):
            raise ModelError(f"expected true or false, got {cut!r}", item, "cut")
        joint = Joint(
            name,
            type,
            parent,
            child,
            parent_marker,
            child_marker,
            tr,
            ro,
            initial=_per_coordinate(initial, n, item, "initial"),
            initial_rate=_per_coordinate(initial_rate, n, item, "initial_rate"),
            stiffness=_per_coordinate(stiffness, n, item, "stiffness"),
            damping=_per_coordinate(damping, n, item, "damping"),
            rest=_per_coordinate(rest, n, item, "rest"),
            cut=cut,
        )
        for fld in ("stiffness", "damping"):
            if np.any(getattr(joint, fld) < 0):
                raise ModelError("expected values >= 0", item, fld)
        joint.limits, joint.limit_stiffness, joint.limit_damping = joint_limits(
            limits, limit_stiffness, limit_damping, n, joint.initial, cut, item
        )
        self.joints[name] = joint
        return joint

    # ------------------------------------------------------ drivers and loads
    def add_driver(
        self, name: str, joint: str, function: TimeFunction, coordinate: int = 0
    ) -> Driver:
        """Prescribe coordinate `coordinate` of `joint` as `function(t)` (a time function
        law from `flexmbs.model.timefunctions`). The coordinate leaves q."""
        item = f'driver "{name}"'
        self._new_name(name, self.drivers, item)
        self._check_coordinate_free(joint, coordinate, item)
        check_time_function(function, item, "function")
        self.drivers[name] = Driver(name, joint, int(coordinate), function)
        return self.drivers[name]

    def _check_coordinate_free(self, joint: str, coordinate: int, item: str) -> None:
        """`coordinate` is an index of `joint`'s coordinates that has no driver and no
        actuator yet (a coordinate takes one of them)."""
        _check_joint_coordinate(self.joints, joint, coordinate, item)
        other: Driver | Actuator
        for other in self.drivers.values():
            if other.joint == joint and other.coordinate == coordinate:
                raise ModelError(
                    f'coordinate {coordinate} of joint "{joint}" is already '
                    f'driven by driver "{other.name}"',
                    item,
                    "coordinate",
                )
        for other in self.actuators.values():
            if other.joint == joint and other.coordinate == coordinate:
                raise ModelError(
                    f'coordinate {coordinate} of joint "{joint}" already has '
                    f'actuator "{other.name}"',
                    item,
                    "coordinate",
                )

    def add_actuator(
        self,
        name: str,
        joint: str,
        type: str = "pd",
        coordinate: int = 0,
        kp: float = 0.0,
        kd: float = 0.0,
        setpoint: TimeFunction | None = None,
        torque: TimeFunction | None = None,
        max_torque: float = np.inf,
        gear_ratio: float = 1.0,
        rotor_inertia: float = 0.0,
        motor_damping: float = 0.0,
        voltage: TimeFunction | None = None,
        amplifier_gain: float | None = None,
        max_voltage: float | None = None,
        resistance: float | None = None,
        inductance: float | None = None,
        torque_constant: float | None = None,
        back_emf_constant: float | None = None,
        max_current: float | None = None,
        efficiency: float | None = None,
    ) -> Actuator:
        """A motor on coordinate `coordinate` of `joint` (see Actuator): a PD controller
        towards `setpoint` (a time function, type "pd"), an open-loop motor torque
        `torque` (a time function, N m, type "torque"; none: 0), or a DC motor driven by
        the amplifier input `voltage` (a time function, V, type "dc_motor") with its
        `resistance`, `inductance`, `torque_constant`, `back_emf_constant`,
        `efficiency`, `amplifier_gain`, `max_voltage` and `max_current`. The command
        of a controller (Model.add_controller) is added to the torque of the first
        two, to the voltage of the third."""
        item = f'actuator "{name}"'
        self._new_name(name, self.actuators, item)
        self._check_coordinate_free(joint, coordinate, item)
        if type not in ACTUATOR_TYPES:
            raise ModelError(
                f"expected one of {', '.join(ACTUATOR_TYPES)}, got {type!r}", item, "type"
            )
        kp = _scalar(kp, item, "kp", nonnegative=True)
        kd = _scalar(kd, item, "kd", nonnegative=True)
        if type == "torque" and torque is None:  # its command comes from a controller
            torque = Constant(0.0)
        functions = {"setpoint": setpoint, "torque": torque, "voltage": voltage}
        check_command(type, functions, kp, kd, item)
        if (
            isinstance(max_torque, bool)
            or not isinstance(max_torque, (int, float, np.floating, np.integer))
            or not max_torque > 0
        ):
            raise ModelError(
                f"expected a positive number (or inf), got {max_torque!r}", item, "max_torque"
            )
        if type == "dc_motor" and np.isfinite(max_torque):
            raise ModelError(
                "a DC motor's torque is limited through its current: give max_current "
                "(A; the torque limit is efficiency * torque_constant * max_current)",
                item,
                "max_torque",
            )
        motor = dc_motor_parameters(
            type,
            {
                "amplifier_gain": amplifier_gain,
                "max_voltage": max_voltage,
                "resistance": resistance,
                "inductance": inductance,
                "torque_constant": torque_constant,
                "back_emf_constant": back_emf_constant,
                "max_current": max_current,
                "efficiency": efficiency,
            },
            item,
        )
        self.actuators[name] = Actuator(
            name,
            joint,
            int(coordinate),
            type,
            kp,
            kd,
            setpoint,
            torque,
            float(max_torque),
            _scalar(gear_ratio, item, "gear_ratio", positive=True),
            _scalar(rotor_inertia, item, "rotor_inertia", nonnegative=True),
            _scalar(motor_damping, item, "motor_damping", nonnegative=True),
            voltage,
            **motor,
        )
        return self.actuators[name]

    def add_force(
        self,
        name: str,
        type: str,
        body: str,
        marker: str = ORIGIN,
        vector: ArrayLike = (0.0, 0.0, 0.0),
        frame: str = "global",
        function: TimeFunction | None = None,
    ) -> Force:
        """A point force ("force", N) or torque ("torque", N m) on a marker:
        vector * function(t), `frame` "global" or "marker" (follower)."""
        item = f'force "{name}"'
        self._new_name(name, self.forces, item)
        if type not in FORCE_TYPES:
            raise ModelError(f"expected 'force' or 'torque', got {type!r}", item, "type")
        if body not in self.bodies:
            raise ModelError(f'unknown body "{body}" (loads act on moving bodies)', item, "body")
        if marker not in self.bodies[body].markers:
            raise ModelError(f'unknown marker "{marker}" on body "{body}"', item, "marker")
        if frame not in ("global", "marker"):
            raise ModelError(f"expected 'global' or 'marker', got {frame!r}", item, "frame")
        fn = Constant(1.0) if function is None else function
        check_time_function(fn, item, "function")
        self.forces[name] = Force(
            name, type, body, marker, _vector(vector, 3, item, "vector"), frame, fn
        )
        return self.forces[name]

    def add_spring(
        self,
        name: str,
        body1: str,
        marker1: str,
        body2: str,
        marker2: str,
        stiffness: float,
        damping: float = 0.0,
        rest_length: float | None = None,
    ) -> Spring:
        """A point-to-point spring (N/m) and damper (N s/m) between marker1 on body1 and
        marker2 on body2 (either may be the ground); `rest_length` (m) defaults to their
        distance in the initial configuration."""
        item = f'spring "{name}"'
        self._new_name(name, self.springs, item)
        for fld, b, mk in (("body1", body1, marker1), ("body2", body2, marker2)):
            if b != GROUND and b not in self.bodies:
                raise ModelError(f'unknown body "{b}"', item, fld)
            if mk not in self._markers_of(b, item):
                raise ModelError(f'unknown marker "{mk}" on body "{b}"', item, "marker" + fld[-1])
        if body1 == body2:
            raise ModelError("a spring connects two different bodies", item, "body2")
        self.springs[name] = Spring(
            name,
            body1,
            marker1,
            body2,
            marker2,
            _scalar(stiffness, item, "stiffness", nonnegative=True),
            _scalar(damping, item, "damping", nonnegative=True),
            None
            if rest_length is None
            else _scalar(rest_length, item, "rest_length", nonnegative=True),
        )
        return self.springs[name]

    def add_user_law(
        self,
        name: str,
        law: UserLaw | LawFunction,
        joint: str | None = None,
        coordinate: int = 0,
        body: str | None = None,
        marker: str = ORIGIN,
        frame: str = "global",
        params: ArrayLike = (),
        read_coordinates: Sequence[str] = (),
    ) -> UserLawItem:
        """A user force law (flexmbs.model.user_laws): `law(t, q, u, params, out)`, a
        function made by `flexmbs.user_law` (a plain function is compiled here), on
        coordinate `coordinate` of `joint` (out[0]: N or N m) or at `marker` of
        `body` (out[0:3] a force, N, out[3:6] a torque, N m, in `frame` axes,
        "global" or "marker"). It is called with `params` followed by the q indices
        of the coordinates named in `read_coordinates`."""
        from .user_laws import user_law_item

        self._new_name(name, self.user_laws, f'user law "{name}"')
        self.user_laws[name] = user_law_item(
            self, name, law, joint, coordinate, body, marker, frame, params, read_coordinates
        )
        return self.user_laws[name]

    def add_friction(self, name: str, joint: str, **fields: Any) -> Friction:
        """Friction on coordinate `coordinate` (default 0) of `joint`
        (flexmbs.model.friction): `coulomb`, `static` (N m or N),
        `stribeck_velocity` (rad/s or m/s), `viscous` (N m s/rad or N s/m), `law`
        ("regularized" or "stick-slip") and `regularization` (rad/s or m/s)."""
        from .friction import friction_item

        item = f'friction "{name}"'
        self._new_name(name, self.frictions, item)
        self.frictions[name] = friction_item(self, name, joint, **fields)
        return self.frictions[name]

    def add_backlash(self, name: str, joint: str, **fields: Any) -> Backlash:
        """The play of coordinate `coordinate` (default 0) of `joint` as a dead-band
        spring and damper (flexmbs.model.backlash): `gap` (the whole play, rad or
        m), `center`, `stiffness` (N m/rad or N/m) and `damping` (N m s/rad or
        N s/m) of its edges' contact."""
        from .backlash import backlash_item

        item = f'backlash "{name}"'
        self._new_name(name, self.backlashes, item)
        self.backlashes[name] = backlash_item(self, name, joint, **fields)
        return self.backlashes[name]

    def add_controller(
        self, name: str, actuator: str, inputs: Sequence[Mapping[str, Any]], **fields: Any
    ) -> Controller:
        """A linear controller driving `actuator`'s command from `inputs`, each a
        dict with a `sensor` (and `component`) or a `joint` (`coordinate`, `rate`),
        its `gain`, `rate_gain`, `integral_gain` and `setpoint` (a time function);
        `command` ("torque", "force" or "voltage"), `sample_time`, `delay` (s),
        `limits` and `offset` (flexmbs.model.controllers)."""
        from .controllers import controller_item

        item = f'controller "{name}"'
        self._new_name(name, self.controllers, item)
        self.controllers[name] = controller_item(self, name, actuator, inputs, **fields)
        return self.controllers[name]

    def add_contact(
        self,
        name: str,
        type: str,
        disk: str,
        plane: str,
        radius: float | None = None,
        axis: ArrayLike = (0.0, 1.0, 0.0),
        normal: ArrayLike = (0.0, 0.0, 1.0),
        disk_marker: str = ORIGIN,
        plane_marker: str = ORIGIN,
    ) -> Contact:
        """Add a rolling contact (see Contact): type "rolling_disk", the `disk` body
        (its marker `disk_marker` at the disk's centre, the axle `axis` in that
        marker's axes), the `plane` body (the ground or a body; its marker
        `plane_marker` a point of the plane, `normal` in that marker's axes) and the
        disk's `radius` (m, required); or type "knife_edge", the edge point
        `disk_marker` of body `disk` with the blade along `axis` (no radius)."""
        item = f'contact "{name}"'
        self._new_name(name, self.contacts, item)
        if type not in CONTACT_TYPES:
            raise ModelError(
                f"expected a contact type, one of {', '.join(CONTACT_TYPES)}; got {type!r}",
                item,
                "type",
            )
        if disk == GROUND:
            raise ModelError("the disk must be a moving body, not the ground", item, "disk")
        for fld, b in (("disk", disk), ("plane", plane)):
            if b != GROUND and b not in self.bodies:
                raise ModelError(f'unknown body "{b}"', item, fld)
        if disk == plane:
            raise ModelError("the disk and the plane must be two different bodies", item, "plane")
        for fld, b, mk in (
            ("disk_marker", disk, disk_marker),
            ("plane_marker", plane, plane_marker),
        ):
            if mk not in self._markers_of(b, item):
                raise ModelError(f'unknown marker "{mk}" on body "{b}"', item, fld)
        if type == "knife_edge":
            if radius is not None:
                raise ModelError(
                    "a knife_edge contact takes no radius (its edge is the point of disk_marker)",
                    item,
                    "radius",
                )
            radius = 0.0
        elif radius is None:
            raise ModelError(f'a {type} contact needs a "radius" (m)', item, "radius")
        else:
            radius = _scalar(radius, item, "radius", positive=True)
        contact = Contact(
            name,
            type,
            disk,
            plane,
            radius=radius,
            axis=_axis(axis, item, "axis"),
            normal=_axis(normal, item, "normal"),
            disk_marker=disk_marker,
            plane_marker=plane_marker,
        )
        self.contacts[name] = contact
        return contact

    def add_sensor(
        self,
        name: str,
        type: str,
        joint: str | None = None,
        coordinate: int | None = None,
        body: str | None = None,
        marker: str | None = None,
        frame: str = GROUND,
        actuator: str | None = None,
        element: int = 0,
        at: str | float = "start",
        point: ArrayLike | None = None,
        subdivisions: int = 1,
        contact: str | None = None,
        dead_time: float = 0.0,
        lag: float = 0.0,
        resolution: float = 0.0,
        controller_dead_time: float | None = None,
        controller_lag: float | None = None,
        controller_resolution: float | None = None,
    ) -> Sensor:
        """Record a joint coordinate or rate; a marker's position, orientation
        (rotation matrix, row-major), velocity, angular velocity or elastic deflection
        in the axes of body `frame` (positions relative to its origin); an actuator's
        torque on its joint (N m or N) or the work it has done (J); on a beam body, at
        the position `at` ("start", "end" or xi in [0, 1]) of element `element`: the
        axial strain at the section point `point` = [y, z] (m, section axes), the
        curvatures or the section forces; or the beam's deformed centre line
        (`subdivisions` points per element); or the force of a rolling `contact` on
        its disk and the contact point (type "contact_reaction"). As an instrument
        gives it (flexmbs.simulation.instruments): through a first-order `lag` (time constant,
        s), after a `dead_time` (s), rounded to its `resolution` (an encoder's
        step; 0: none). What a sampled controller reads goes through its own
        `controller_dead_time`, `controller_lag` and `controller_resolution` (None:
        the record's)."""
        item = f'sensor "{name}"'
        for fld, given in (
            ("joint", joint),
            ("body", body),
            ("marker", marker),
            ("frame", frame),
            ("actuator", actuator),
            ("contact", contact),
        ):
            if given is not None and not isinstance(given, str):
                raise ModelError(
                    f"expected a name, got {given.__class__.__name__} {given!r}", item, fld
                )
        instrument: dict[str, float | None] = {
            "dead_time": _scalar(dead_time, item, "dead_time", nonnegative=True),
            "lag": _scalar(lag, item, "lag", nonnegative=True),
            "resolution": _scalar(resolution, item, "resolution", nonnegative=True),
        }
        for key, value in (
            ("controller_dead_time", controller_dead_time),
            ("controller_lag", controller_lag),
            ("controller_resolution", controller_resolution),
        ):
            instrument[key] = None if value is None else _scalar(value, item, key, nonnegative=True)
        self._new_name(name, self.sensors, item, sensor=True)
        if type not in SENSOR_TYPES:
            raise ModelError(
                f"expected a sensor type, one of {', '.join(SENSOR_TYPES)}; got {type!r}",
                item,
                "type",
            )
        if type in BEAM_SECTION_SENSORS or type == "beam_centerline":
            if body not in self.bodies or not isinstance(self.bodies[body], BeamBody):
                raise ModelError(f'expected a beam body, got "{body}"', item, "body")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
        if type in FLEXIBLE_BODY_SENSORS:
            if body not in self.bodies or not isinstance(self.bodies[body], (BeamBody, FeBody)):
                raise ModelError(f'expected a flexible body, got "{body}"', item, "body")
            self.sensors[name] = Sensor(name, type, body=body)
        elif type == "beam_centerline":
            if (
                isinstance(subdivisions, bool)
                or not isinstance(subdivisions, (int, np.integer))
                or subdivisions < 1
            ):
                raise ModelError(
                    f"expected a positive integer, got {subdivisions!r}", item, "subdivisions"
                )
            assert body is not None  # a beam body, checked above
            beam = cast(BeamBody, self.bodies[body])
            _check_centerline(int(subdivisions), len(beam.connectivity), len(beam.free), item)
            self.sensors[name] = Sensor(
                name, type, body=body, frame=frame, subdivisions=int(subdivisions)
            )
        elif type in BEAM_SECTION_SENSORS:
            assert body is not None  # a beam body, checked above
            ne = len(cast(BeamBody, self.bodies[body]).connectivity)
            if (
                isinstance(element, bool)
                or not isinstance(element, (int, np.integer))
                or not -ne <= element < ne
            ):
                raise ModelError(
                    f"expected an element index 0..{ne - 1} (or -1 for the last), got {element!r}",
                    item,
                    "element",
                )
            xi = (
                {"start": 0.0, "end": 1.0}.get(at)
                if isinstance(at, str)
                else (None if isinstance(at, bool) else at)
            )
            if not isinstance(xi, (int, float, np.floating, np.integer)) or not 0.0 <= xi <= 1.0:
                raise ModelError(
                    f"expected 'start', 'end' or a number in [0, 1] (the "
                    f"position along the element), got {at!r}",
                    item,
                    "at",
                )
            pt = None
            if type == "beam_strain":
                if point is None:
                    raise ModelError(
                        "a beam_strain sensor needs the section point [y, z] (m)", item, "point"
                    )
                pt = _vector(point, 2, item, "point")
                _check_section_point(cast(BeamBody, self.bodies[body]), pt, item)
            elif point is not None:
                raise ModelError(f"a {type} sensor takes no section point", item, "point")
            self.sensors[name] = Sensor(
                name, type, body=body, element=int(element) % ne, at=at, point=pt
            )
        elif type == "contact_reaction":
            if contact not in self.contacts:
                raise ModelError(f'unknown contact "{contact}"', item, "contact")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
            self.sensors[name] = Sensor(name, type, contact=contact, frame=frame)
        elif type.startswith("actuator"):
            if actuator not in self.actuators:
                raise ModelError(f'unknown actuator "{actuator}"', item, "actuator")
            electric = type in ("actuator_current", "actuator_voltage")
            if electric and self.actuators[actuator].type != "dc_motor":
                raise ModelError(
                    f'a {type} sensor reads a "dc_motor" actuator; "{actuator}" is a '
                    f'"{self.actuators[actuator].type}"',
                    item,
                    "actuator",
                )
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
                    raise ModelError(
                        f'joint "{joint}" has {nd} coordinates: say which', item, "coordinate"
                    )
            if (
                isinstance(coordinate, bool)
                or not isinstance(coordinate, (int, np.integer))
                or not 0 <= coordinate < nd
            ):
                raise ModelError(
                    f"expected a coordinate index 0..{nd - 1}, got {coordinate!r}",
                    item,
                    "coordinate",
                )
            self.sensors[name] = Sensor(name, type, joint=joint, coordinate=int(coordinate))
        else:
            for fld, v in (("body", body), ("marker", marker)):
                if v is None:
                    raise ModelError(f"a {type} sensor needs a '{fld}'", item, fld)
            if body != GROUND and body not in self.bodies:
                raise ModelError(f'unknown body "{body}"', item, "body")
            if marker not in self._markers_of(body, item):
                raise ModelError(f'unknown marker "{marker}" on body "{body}"', item, "marker")
            if frame != GROUND and frame not in self.bodies:
                raise ModelError(f'unknown body "{frame}"', item, "frame")
            if type == "marker_deflection" and (
                body == GROUND or not isinstance(self.bodies[body], (BeamBody, FeBody))
            ):
                raise ModelError(
                    "a marker_deflection sensor reads a marker on a flexible "
                    f'body; "{body}" is not one',
                    item,
                    "body",
                )
            self.sensors[name] = Sensor(name, type, body=body, marker=marker, frame=frame)
        for key, value in instrument.items():
            setattr(self.sensors[name], key, value)
        return self.sensors[name]

    # --------------------------------------------------------------- settings
    def set_solver(
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
    ) -> None:
        """Change the integration settings (see SolverSettings). `rtol` and `atol` are
        the settings of `method` (or of the method already set); `methods` holds other
        methods' own, e.g. methods={"galpha": {"rtol": 1e-5, "atol": 1e-7}}, which a
        run switched to that method uses (a model file's [solver.galpha])."""
        self.solver = self.solver.with_changes(
            method,
            t_end,
            rtol,
            atol,
            max_step,
            formulation,
            constraints,
            rho_inf,
            fixed_step,
            methods,
            linear_solver,
        )

    def set_output(self, step: float | None = None, vtk: bool | None = None) -> None:
        """Change the time between two recorded samples (s), or whether the deformed
        shape is written to a VTKHDF file beside the result file (`vtk`)."""
        self.output = self.output.with_changes(step, vtk)

    # ---------------------------------------------------------------- helpers
    def marker(self, body: str, name: str) -> Marker:
        markers = self._markers_of(body, None)
        if name not in markers:
            raise ModelError(f'unknown marker "{name}"', f'body "{body}"', "markers")
        return markers[name]

    def _markers_of(self, body: str, item: str | None) -> dict[str, Marker]:
        if body == GROUND:
            return self.ground_markers
        if body not in self.bodies:
            raise ModelError(f'unknown body "{body}"', item, "body")
        return self.bodies[body].markers

    @staticmethod
    def _new_name(
        name: str,
        table: Mapping[str, object],
        item: str,
        other: Mapping[str, object] | None = None,
        other_kind: str = "",
        sensor: bool = False,
    ) -> None:
        """A name for a new item of `table`: non-empty, of NAME_PATTERN's characters
        (a dot would be read as a separator of coordinate names and of --set paths),
        not in `table` nor in `other` (bodies and joints, whose names make the
        coordinate names). Names that start with GENERATED_PREFIX are the items
        flexmbs adds itself (flexmbs.model.absolute), which no user name can be."""
        if not isinstance(name, str) or not name:
            raise ModelError("expected a non-empty name", item, "name")
        if name.startswith(GENERATED_PREFIX):  # an item flexmbs makes (absolute form)
            if name in table:
                raise ModelError("the name is used twice", item, "name")
            return
        if sensor and not SENSOR_NAME_PATTERN.fullmatch(name):
            raise ModelError(
                f"expected a name without spaces or '/', and not of dots alone (it "
                f"names a dataset of the result file), got {name!r}",
                item,
                "name",
            )
        if not sensor and not NAME_PATTERN.fullmatch(name):
            raise ModelError(
                f"expected a name of letters, digits, '_' and '-' (no "
                f"spaces or dots: dots separate the parts of coordinate "
                f"names and --set paths), got {name!r}",
                item,
                "name",
            )
        if name in table:
            raise ModelError("the name is used twice", item, "name")
        if other is not None and name in other:
            raise ModelError(
                f"the name is that of a {other_kind}: bodies and joints "
                f"name the coordinates, and must differ",
                item,
                "name",
            )


def _fe_attachment(body: FeBody, node: object, interface: object, item: str) -> int:
    """The attachment index of a marker on a finite-element body: an interface by
    name, or a node by its label (exactly one of them)."""
    if (node is None) == (interface is None):
        raise ModelError(
            "a marker on a finite-element body sits on an interface (interface = NAME) "
            "or on a node (node = LABEL): give one",
            item,
            "interface",
        )
    if interface is not None:
        if interface not in body.interfaces:
            names = ", ".join(body.interfaces) or "none"
            raise ModelError(
                f'unknown interface "{interface}" (the body has: {names})', item, "interface"
            )
        return body.add_attachment("interface", interface)
    labels = np.asarray(body.data.labels)
    if isinstance(node, bool) or not isinstance(node, (int, np.integer)):
        raise ModelError(f"expected a node label (an integer), got {node!r}", item, "node")
    where = np.flatnonzero(labels == int(node))
    if not len(where):
        raise ModelError(
            f"node {node} is not in the data of the body ({body.data.source})", item, "node"
        )
    return body.add_attachment("node", int(where[0]))
