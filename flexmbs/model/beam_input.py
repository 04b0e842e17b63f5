"""The fields of a beam body (Model.add_beam_body) checked and turned into what a
BeamBody holds, step by step: the polyline and its elements, the nodes, the section's
reference vector, the fixed coordinates, the nodes' added masses and inertias, the
geometric stiffness, the start and the modal reduction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ModelError
from .field_checks import (
    _beam_initial_state,
    _check_inertia,
    _inertia_matrix,
    _node_index,
    _scalar,
    _vector,
)
from .vocabulary import NODE_DOFS

__all__ = [
    "beam_points",
    "element_counts",
    "beam_nodes",
    "beam_reference",
    "check_element_frames",
    "free_coordinates",
    "added_masses",
    "added_inertias",
    "check_geometric",
    "beam_start",
    "ModeOptions",
    "mode_options",
]


def beam_points(points: ArrayLike, item: str) -> NDArray[np.float64]:
    """The polyline's points, (n, 3), n >= 2, finite (m, body axes)."""
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
    return pts


def element_counts(elements: int | Sequence[int], segments: int, item: str) -> list[int]:
    """The number of elements of each of the `segments` segments: one positive integer
    for all, or one per segment."""
    counts = (
        [cast(int, elements)] * segments
        if np.ndim(elements) == 0
        else list(cast("Sequence[int]", elements))
    )
    if len(counts) != segments or any(
        isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1 for c in counts
    ):
        raise ModelError(
            f"expected a positive integer per segment ({segments}), got {elements!r}",
            item,
            "elements",
        )
    return counts


def beam_nodes(
    pts: NDArray[np.float64], counts: Sequence[int], item: str
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """(nodes (n, 3), connectivity (n - 1, 2)): each segment of the polyline divided
    evenly into its elements, which join consecutive nodes."""
    nodes: list[NDArray[np.float64]] = [pts[0]]
    for sgm, count in enumerate(counts):
        a, b = pts[sgm], pts[sgm + 1]
        if np.linalg.norm(b - a) == 0.0:
            raise ModelError(f"segment {sgm} has zero length", item, "points")
        nodes += [a + (b - a) * (k + 1) / count for k in range(count)]
    conn = np.array([[k, k + 1] for k in range(len(nodes) - 1)], dtype=np.int64)
    return np.array(nodes), conn


def beam_reference(
    reference: ArrayLike | None, pts: NDArray[np.float64], item: str
) -> NDArray[np.float64]:
    """The section-y reference vector (body axes); by default the body axis most
    normal to the first segment."""
    if reference is None:
        axis = (pts[1] - pts[0]) / np.linalg.norm(pts[1] - pts[0])
        reference = np.eye(3)[int(np.argmin(np.abs(axis)))]
    return _vector(reference, 3, item, "reference")


def check_element_frames(
    nodes: NDArray[np.float64], conn: NDArray[np.int64], ref: NDArray[np.float64], item: str
) -> None:
    """The reference vector is along no element's axis (each element has its frame)."""
    from ..elements.beam import element_frame

    for a, b in conn:
        element_frame(nodes[a], nodes[b], ref, item)


def _node(node: object, count: int, item: str, fld: str) -> int:
    """The index of a node given by a table's key (flexmbs.model.field_checks._node_index)."""
    node_k = _node_index(node, count)
    if node_k is None:
        raise ModelError(f"expected a node index 0..{count - 1}, got {node!r}", item, fld)
    return node_k


def free_coordinates(
    fixed: dict[int | str, str | Sequence[str]] | None, count: int, item: str
) -> NDArray[np.int64]:
    """The indices of the nodal coordinates (6 a node, NODE_DOFS) not held by `fixed`
    {node: dofs} (default: node 0 clamped)."""
    fixed = {0: "all"} if fixed is None else fixed
    if not isinstance(fixed, dict):
        raise ModelError(f"expected a table node -> dofs, got {fixed!r}", item, "fixed")
    held = set()
    for node, dofs in fixed.items():
        node_k = _node(node, count, item, "fixed")
        names = NODE_DOFS if dofs == "all" else dofs
        if isinstance(names, str) or any(d not in NODE_DOFS for d in names):
            raise ModelError(
                f'expected "all" or a list of {", ".join(NODE_DOFS)}, got {dofs!r}',
                item,
                f"fixed.{node}",
            )
        held |= {6 * node_k + NODE_DOFS.index(d) for d in names}
    return np.array([k for k in range(6 * count) if k not in held], dtype=np.int64)


def added_masses(
    given: Mapping[int | str, float] | None, count: int, item: str
) -> dict[int, float]:
    """{node index: added mass (kg)} of `given` {node: kg}."""
    masses = {}
    for node, mass in (given or {}).items():
        node_k = _node(node, count, item, "node_masses")
        masses[node_k] = _scalar(mass, item, f"node_masses.{node}", positive=True)
    return masses


def added_inertias(
    given: Mapping[int | str, ArrayLike] | None, count: int, item: str
) -> dict[int, NDArray[np.float64]]:
    """{node index: added inertia (3 x 3, kg m^2, body axes, about the node)} of
    `given` {node: inertia as for a rigid body}."""
    inertias = {}
    for node, inertia in (given or {}).items():
        node_k = _node(node, count, item, "node_inertias")
        j = _inertia_matrix(inertia, item, f"node_inertias.{node}")
        _check_inertia(j, 0.0, item, "node", positive_definite=False, fld=f"node_inertias.{node}")
        inertias[node_k] = j
    return inertias


def check_geometric(geometric: str, item: str) -> None:
    """`geometric` is one of flexmbs.elements.geometric.GEOMETRIC_OPTIONS."""
    from ..elements.geometric import GEOMETRIC_OPTIONS

    if geometric not in GEOMETRIC_OPTIONS:
        raise ModelError(
            f"expected one of {', '.join(GEOMETRIC_OPTIONS)}, got {geometric!r}",
            item,
            "geometric",
        )


def beam_start(
    initial: str | ArrayLike, initial_rates: ArrayLike | None, item: str
) -> tuple[
    tuple[tuple[int, float, float], ...] | None,
    str | NDArray[np.float64],
    NDArray[np.float64] | None,
]:
    """(the modes' start (flexmbs.model.mode_start), the beam's `initial` as kept,
    the elastic rates or None)."""
    from .mode_start import MODE_START, parse_mode_start

    initial_modes = parse_mode_start(initial, item)
    start = MODE_START if initial_modes else _beam_initial_state(initial, item)
    rates = None
    if initial_rates is not None:
        rates = _beam_initial_state(initial_rates, item, "initial_rates")
    assert not isinstance(rates, str)  # a name is an `initial` only
    return initial_modes, start, rates


@dataclass(frozen=True)
class ModeOptions:
    """The checked modal reduction of a beam: `modes` ("all" or a number),
    `modes_below` (Hz or None), `correction_modes`, `modal_derivatives` (None: as the
    geometric stiffness says)."""

    modes: str | int
    modes_below: float | None
    correction_modes: bool
    modal_derivatives: bool | None


def _check_modes(modes: object, item: str) -> None:
    if not (
        modes == "all"
        if isinstance(modes, str)
        else (isinstance(modes, (int, np.integer)) and not isinstance(modes, bool) and modes >= 1)
    ):
        raise ModelError(f'expected a positive integer or "all", got {modes!r}', item, "modes")


def _check_flag(value: object, item: str, fld: str) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise ModelError(f"expected true or false, got {value!r}", item, fld)


def mode_options(
    modes: str | int,
    correction_modes: bool,
    modes_below: float | None,
    modal_derivatives: bool | None,
    geometric: str,
    item: str,
) -> ModeOptions:
    """The beam's modal reduction checked: correction modes and modal derivatives
    complete a mode basis (a number of modes or a frequency), and the derivatives
    carry the geometric stiffness's membrane strain (not with geometric = "none")."""
    _check_modes(modes, item)
    _check_flag(correction_modes, item, "correction_modes")
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
        _check_flag(modal_derivatives, item, "modal_derivatives")
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
    return ModeOptions(
        modes if isinstance(modes, str) else int(modes),
        modes_below,
        bool(correction_modes),
        None if modal_derivatives is None else bool(modal_derivatives),
    )
