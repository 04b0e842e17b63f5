"""The fields of a finite-element body (`type = "fe"`) checked and turned into an
FeBody: where its data come from (a mesh and a material, K and M with a node table, or
an MBDyn modal file), its interfaces, its reduction and its damping and initial state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..elements.fe_body import (
    CONNECTIONS,
    MEAN_AXES,
    REDUCTIONS,
    FeData,
    FeModal,
    Interface,
    check_fe_data,
)
from ..elements.fe_files import (
    check_matrix_units,
    fe_data_from_matrices,
    fe_data_from_mesh,
    read_mbdyn_fem,
)
from ..elements.materials import Material
from ..elements.materials import material as make_material
from ..errors import ModelError
from .fe_body import FeBody
from .field_checks import _beam_initial_state, _modal_damping, _scalar, _vector
from .mode_start import MODE_START, parse_mode_start

__all__ = ["fe_body", "INTERFACE_FIELDS", "SOURCES"]

INTERFACE_FIELDS = ("set", "nodes", "box", "connection", "point")
SOURCES = ("mesh", "stiffness", "modal", "data")  # one of them says where the data are
INCOMPRESSIBLE_NU = 0.5 - 1e-6  # nu at or above this: 1 - 2 nu, the bulk term's divisor, ~0


def _material(spec: object, item: str) -> Material:
    if isinstance(spec, Material):
        return spec
    if not isinstance(spec, Mapping):
        raise ModelError(
            "expected a table with youngs_modulus, poisson_ratio (or shear_modulus) and density",
            item,
            "material",
        )
    try:
        return make_material(item=item, **spec)
    except ModelError as err:
        raise ModelError(err.message, item, "material." + (err.field or "")) from None
    except TypeError as err:
        raise ModelError(f"unexpected field: {err}", item, "material") from None


def _data(
    name: str,
    item: str,
    base: str | None,
    data: FeData | FeModal | None,
    mesh: str | None,
    material: object,
    length_unit: str,
    stiffness: str | None,
    mass: str | None,
    nodes: str | None,
    units: str,
    node_dofs: int | None,
    dof_map: str | None,
    modal: str | None,
) -> FeData | FeModal:
    given = [
        k
        for k, v in (("mesh", mesh), ("stiffness", stiffness), ("modal", modal), ("data", data))
        if v is not None
    ]
    if len(given) != 1:
        raise ModelError(
            "expected where the body's data are: one of mesh (with material), stiffness "
            "(with mass and nodes) or modal" + (f", got {', '.join(given)}" if given else ""),
            item,
            "mesh",
        )
    if data is not None:
        if not isinstance(data, (FeData, FeModal)):
            raise ModelError(f"expected FeData or FeModal, got {type(data).__name__}", item, "data")
        if isinstance(data, FeData):
            check_fe_data(data, item, "data")
        return data
    if mesh is not None:
        if material is None:
            raise ModelError("a body from a mesh needs its material", item, "material")
        mat = _material(material, item)
        nu = mat.youngs_modulus / (2.0 * mat.shear_modulus) - 1.0
        given_nu = isinstance(material, Mapping) and "poisson_ratio" in material
        if not -1.0 < nu < INCOMPRESSIBLE_NU:
            raise ModelError(
                f"{'Poisson' if given_nu else 'E and G give Poisson'}'s ratio {nu:.6g}: the "
                f"solid elements of a mesh take -1 < nu < 0.5 (at nu = 0.5 the material "
                "is incompressible, which a displacement element cannot hold)",
                item,
                "material.poisson_ratio" if given_nu else "material",
            )
        out = fe_data_from_mesh(mesh, mat.youngs_modulus, nu, mat.density, length_unit, item, base)
        check_fe_data(out, item, "mesh")
        return out
    if material is not None:
        raise ModelError(
            "a material goes with a mesh (the matrices hold it already)", item, "material"
        )
    if modal is not None:
        return read_mbdyn_fem(modal, units, item, base)
    if mass is None or nodes is None:
        missing = "mass" if mass is None else "nodes"
        raise ModelError(f"a body from its stiffness matrix needs {missing} too", item, missing)
    if node_dofs is not None and node_dofs not in (3, 6):
        raise ModelError(f"expected 3 or 6, got {node_dofs!r}", item, "node_dofs")
    assert stiffness is not None
    out = fe_data_from_matrices(stiffness, mass, nodes, units, node_dofs, dof_map, item, base)
    check_fe_data(out, item, "stiffness")
    check_matrix_units(out, units, item)
    return out


def _interface(data: FeData | FeModal, name: str, spec: object, item: str) -> Interface:
    fld = f"interfaces.{name}"
    if isinstance(spec, Interface):
        return spec
    if not isinstance(spec, Mapping):
        raise ModelError("expected a table (set, nodes or box; connection; point)", item, fld)
    unknown = [k for k in spec if k not in INTERFACE_FIELDS]
    if unknown:
        raise ModelError(
            f'unknown field "{unknown[0]}" (expected {", ".join(INTERFACE_FIELDS)})', item, fld
        )
    chosen = [k for k in ("set", "nodes", "box") if k in spec]
    if len(chosen) != 1:
        raise ModelError(
            "expected its nodes as one of set (a node set of the data), nodes (node labels) "
            "or box (nodes inside [[x0, y0, z0], [x1, y1, z1]], m)",
            item,
            fld,
        )
    x = np.asarray(data.nodes)
    labels = np.asarray(data.labels)
    if "set" in spec:
        sets = getattr(data, "sets", {}) or {}
        if spec["set"] not in sets:
            names = ", ".join(sorted(sets)) or "none"
            raise ModelError(
                f'no node set "{spec["set"]}" in {data.source} (its sets: {names})',
                item,
                f"{fld}.set",
            )
        nodes = np.asarray(sets[spec["set"]], dtype=np.int64)
    elif "nodes" in spec:
        wanted = spec["nodes"]
        if not isinstance(wanted, (list, tuple, np.ndarray)) or not len(wanted):
            raise ModelError("expected a list of node labels", item, f"{fld}.nodes")
        where = {int(v): k for k, v in enumerate(labels)}
        missing = [
            v
            for v in wanted
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) not in where
        ]
        if missing:
            raise ModelError(f"node {missing[0]!r} is not in {data.source}", item, f"{fld}.nodes")
        nodes = np.array([where[int(v)] for v in wanted], dtype=np.int64)
    else:
        try:
            box = np.array(spec["box"], dtype=float)
        except (TypeError, ValueError):
            box = np.zeros(0)
        if box.shape != (2, 3) or not np.all(np.isfinite(box)):
            raise ModelError(
                "expected two corners [[x0, y0, z0], [x1, y1, z1]] (m, body frame)",
                item,
                f"{fld}.box",
            )
        lo, hi = box.min(axis=0), box.max(axis=0)
        tol = 1e-9 * max(float(np.ptp(x, axis=0).max()), 1e-300)
        inside = np.all((x >= lo - tol) & (x <= hi + tol), axis=1)
        nodes = np.flatnonzero(inside)
        if not len(nodes):
            raise ModelError(
                f"no node of {data.source} is inside the box {box.tolist()} (m, body frame)",
                item,
                f"{fld}.box",
            )
    if not len(nodes):
        raise ModelError(f"the node set is empty in {data.source}", item, fld)
    connection = spec.get("connection", "rigid")
    if connection not in CONNECTIONS:
        raise ModelError(
            f"expected one of {', '.join(CONNECTIONS)}, got {connection!r}",
            item,
            f"{fld}.connection",
        )
    point = None if spec.get("point") is None else _vector(spec["point"], 3, item, f"{fld}.point")
    return Interface(name, nodes, connection, point)


def fe_body(
    name: str,
    data: FeData | FeModal | None = None,
    mesh: str | None = None,
    material: object = None,
    length_unit: str = "m",
    stiffness: str | None = None,
    mass: str | None = None,
    nodes: str | None = None,
    units: str = "m-kg-s",
    node_dofs: int | None = None,
    dof_map: str | None = None,
    modal: str | None = None,
    interfaces: Mapping[str, object] | None = None,
    reduction: str | None = None,
    modes: int | None = None,
    modes_below: float | None = None,
    frame: str | None = None,
    alpha: float = 0.0,
    beta: float = 0.0,
    modal_damping: str | float | NDArray[np.float64] | list[float] | None = None,
    initial: str | list[float] | NDArray[np.float64] = "undeformed",
    initial_rates: list[float] | NDArray[np.float64] | None = None,
    base: str | None = None,
) -> FeBody:
    """An FeBody from its fields (module docstring; the model-file reference lists
    them). Reads the data files now; the basis is made when first needed."""
    item = f'body "{name}"'
    fe = _data(
        name,
        item,
        base,
        data,
        mesh,
        material,
        length_unit,
        stiffness,
        mass,
        nodes,
        units,
        node_dofs,
        dof_map,
        modal,
    )
    if interfaces is not None and not isinstance(interfaces, Mapping):
        raise ModelError("expected a table of interfaces", item, "interfaces")
    faces = {k: _interface(fe, k, v, item) for k, v in (interfaces or {}).items()}
    reduction, modes_below = _reduction(fe, faces, reduction, modes, modes_below, frame, item)
    initial_modes = parse_mode_start(initial, item)
    init = MODE_START if initial_modes else _beam_initial_state(initial, item)
    rates = (
        None if initial_rates is None else _beam_initial_state(initial_rates, item, "initial_rates")
    )
    assert not isinstance(rates, str)
    body = FeBody(
        name,
        fe,
        faces,
        reduction,
        None if modes is None else int(modes),
        modes_below,
        frame,
        _scalar(alpha, item, "alpha", nonnegative=True),
        _scalar(beta, item, "beta", nonnegative=True),
        _modal_damping(modal_damping, item),
        init,
        rates,
    )
    body.initial_modes = initial_modes
    return body


def _reduction(
    fe: FeData | FeModal,
    faces: Mapping[str, Interface],
    reduction: str | None,
    modes: int | None,
    modes_below: float | None,
    frame: str | None,
    item: str,
) -> tuple[str, float | None]:
    """(reduction, modes_below (Hz or None)) of a body: "file" for a modal file's
    (reduced already: no modes, modes_below or frame of its own), else one of
    REDUCTIONS (default Craig-Bampton, which needs interfaces) with the modes it
    keeps and its frame (the mean axes or an interface)."""
    if isinstance(fe, FeModal):
        given = {"modes": modes, "modes_below": modes_below, "frame": frame}
        for k, value in given.items():
            if value is not None:
                raise ModelError(
                    f"the modal file holds the body's modes already: {k} is for bodies "
                    "reduced here (mesh or matrices)",
                    item,
                    k,
                )
        if reduction not in (None, "file"):
            raise ModelError("the modal file's body is reduced already", item, "reduction")
        return "file", modes_below
    reduction = reduction or "craig-bampton"
    if reduction not in REDUCTIONS:
        raise ModelError(
            f"expected one of {', '.join(REDUCTIONS)}, got {reduction!r}", item, "reduction"
        )
    if modes is None and modes_below is None:
        raise ModelError(
            "expected how many modes the body keeps: modes = n, or modes_below = f (Hz)",
            item,
            "modes",
        )
    if modes is not None and (
        isinstance(modes, bool) or not isinstance(modes, (int, np.integer)) or modes < 0
    ):
        raise ModelError(f"expected an integer >= 0, got {modes!r}", item, "modes")
    if modes_below is not None:
        modes_below = _scalar(modes_below, item, "modes_below", positive=True)
    if frame is not None and frame != MEAN_AXES and frame not in faces:
        raise ModelError(
            f'expected "{MEAN_AXES}" or an interface ({", ".join(faces) or "none"}), got {frame!r}',
            item,
            "frame",
        )
    if reduction == "craig-bampton" and not faces:
        raise ModelError(
            'Craig-Bampton reduction needs interfaces (or reduction = "free")',
            item,
            "interfaces",
        )
    return reduction, modes_below


def fe_fields() -> tuple[str, ...]:
    """The fields of a body of type "fe" (the model-file reference lists them)."""
    return (
        "type",
        "mesh",
        "material",
        "length_unit",
        "stiffness",
        "mass",
        "nodes",
        "units",
        "node_dofs",
        "dof_map",
        "modal",
        "interfaces",
        "reduction",
        "modes",
        "modes_below",
        "frame",
        "alpha",
        "beta",
        "modal_damping",
        "initial",
        "initial_rates",
        "markers",
    )


def interfaces_of(spec: Any) -> list[str]:
    return list(spec) if isinstance(spec, Mapping) else []
