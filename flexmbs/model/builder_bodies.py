"""The Model builder's methods that add bodies and markers (flexmbs.model.description):
rigid bodies, beam bodies (their fields checked step by step by
flexmbs.model.beam_input), finite-element bodies (flexmbs.model.fe_input) and the
markers on them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelError
from ..rotations import rotation_from_euler_xyz
from .beam_input import (
    added_inertias,
    added_masses,
    beam_nodes,
    beam_points,
    beam_reference,
    beam_start,
    check_element_frames,
    check_geometric,
    element_counts,
    free_coordinates,
    mode_options,
)
from .builder_base import DescriptionBase
from .fe_body import FeBody
from .field_checks import (
    _check_beam_elements,
    _check_beam_memory,
    _check_inertia,
    _check_section_and_material,
    _inertia_matrix,
    _modal_damping,
    _node_index,
    _rotation,
    _scalar,
    _vector,
)
from .items import BeamBody, Marker, RigidBody
from .shape_input import density_solid
from .vocabulary import GROUND, ORIGIN

if TYPE_CHECKING:
    from ..elements.materials import Material
    from ..elements.sections import Section

__all__ = ["BodyItems"]

B = TypeVar("B", RigidBody, BeamBody, FeBody)


class BodyItems(DescriptionBase):
    """Model.add_rigid_body, add_beam_body, add_fe_body and add_marker."""

    def add_rigid_body(
        self,
        name: str,
        mass: float | None = None,
        inertia: ArrayLike | None = None,
        inertia_about: str | None = None,
        com: ArrayLike | None = None,
        density: float | None = None,
        shapes: Sequence[Any] | None = None,
        base: str | None = None,
    ) -> RigidBody:
        """Add a rigid body: its `mass`, `inertia` (about "com" or "origin" of the
        body frame, `inertia_about`) and `com`; or its `density` (kg/m^3) and `shapes`
        (tables or flexmbs.model.solid_shapes.Shape: boxes, cylinders, spheres and
        meshes, mesh files relative to `base`, default the model file's folder), whose
        mass, centre of mass and inertia it takes (flexmbs.model.shape_input)."""
        item = f'body "{name}"'
        self._new_body(name, item)
        if density is not None:
            given = [
                k
                for k, v in (
                    ("mass", mass),
                    ("inertia", inertia),
                    ("inertia_about", inertia_about),
                    ("com", com),
                )
                if v is not None
            ]
            if given:
                raise ModelError(
                    "a body with a density takes its mass, centre of mass and inertia from "
                    "its shapes: give a density and shapes, or a mass and an inertia, not both",
                    item,
                    given[0],
                )
            if base is None and self.source_path:
                base = os.path.dirname(os.path.abspath(self.source_path))
            rho, parsed, (m, c, i_c) = density_solid(density, shapes or [], base, item)
            return self._keep_body(RigidBody(name, m, c, i_c, density=rho, shapes=parsed))
        if shapes:
            raise ModelError(
                "shapes give a body its mass only with a density (kg/m^3): add `density`, "
                "or leave the shapes out",
                item,
                "shapes",
            )
        for key, value in (("mass", mass), ("inertia", inertia), ("inertia_about", inertia_about)):
            if value is None:
                raise ModelError(
                    f'missing required field "{key}" (or give `density` and `shapes`)', item, key
                )
        m = _scalar(mass, item, "mass", positive=True)
        c = _vector((0.0, 0.0, 0.0) if com is None else com, 3, item, "com")
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
        return self._keep_body(RigidBody(name, m, c, i_c))

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
        item = f'body "{name}"'
        self._new_body(name, item)
        pts = beam_points(points, item)
        counts = element_counts(elements, len(pts) - 1, item)
        _check_beam_elements(sum(counts), self._beam_elements(), item)
        _check_beam_memory(sum(counts), item)
        _check_section_and_material(section, material, item)
        nodes, conn = beam_nodes(pts, counts, item)
        ref = beam_reference(reference, pts, item)
        free = free_coordinates(fixed, len(nodes), item)
        masses = added_masses(node_masses, len(nodes), item)
        inertias = added_inertias(node_inertias, len(nodes), item)
        check_element_frames(nodes, conn, ref, item)
        check_geometric(geometric, item)
        initial_modes, start, rates = beam_start(initial, initial_rates, item)
        reduction = mode_options(
            modes, correction_modes, modes_below, modal_derivatives, geometric, item
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
            start,
            node_inertias=inertias,
            geometric=geometric,
            modes=reduction.modes,
            correction_modes=reduction.correction_modes,
            initial_rates=rates,
            modal_damping=_modal_damping(modal_damping, item),
            modes_below=reduction.modes_below,
            modal_derivatives=reduction.modal_derivatives,
        )
        body.initial_modes = initial_modes
        return self._keep_body(body)

    def add_fe_body(self, name: str, **fields: Any) -> FeBody:
        """Add a flexible body from finite-element data (see FeBody and
        flexmbs.model.fe_input.fe_body for the fields: `mesh` with `material`, or
        `stiffness`, `mass` and `nodes`, or `modal`, or `data` (FeData or FeModal);
        `interfaces`; `reduction`, `modes`, `modes_below`, `frame`; `alpha`, `beta`,
        `modal_damping`, `initial`, `initial_rates`). Relative file names are taken
        from `base` (default: the model file's folder, or the working directory)."""
        from .fe_input import fe_body

        item = f'body "{name}"'
        self._new_body(name, item)
        fields.setdefault("base", os.path.dirname(self.source_path) if self.source_path else None)
        return self._keep_body(fe_body(name, **fields))

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
        node, position = self._marker_node(body, node, interface, position, item)
        p = _vector(position, 3, item, "position")
        c = self._marker_axes(orientation, euler_xyz, item)
        markers[name] = Marker(name, body, p, c, None if node is None else int(node))
        return markers[name]

    def _keep_body(self, body: B) -> B:
        """Add `body`, with its marker "origin" at its frame."""
        body.markers[ORIGIN] = Marker(ORIGIN, body.name, np.zeros(3), np.eye(3))
        self.bodies[body.name] = body
        return body

    def _marker_node(
        self, body: str, node: int | None, interface: str | None, position: ArrayLike, item: str
    ) -> tuple[int | None, ArrayLike]:
        """(node, position) of a new marker on `body`: on a finite-element body its
        attachment (an interface or a node, _fe_attachment) and that place; on a beam
        body the index of its node and the node's place; else no node and `position`."""
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
        return node, position

    def _marker_axes(
        self, orientation: ArrayLike | None, euler_xyz: ArrayLike | None, item: str
    ) -> NDArray[np.float64]:
        """The axes of a new marker (columns in body axes): from `orientation` (a
        rotation matrix) or `euler_xyz` (rad, noted in given_angles), or the body's."""
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
        return c


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
