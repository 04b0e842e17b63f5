"""Reading and writing the files that hold a finite-element body
(flexmbs.elements.fe_body): Matrix Market and Harwell-Boeing matrices with a node table
(CSV), Abaqus matrix output (.mtx) with its input file's nodes and node sets (.inp),
gmsh meshes (.msh, through meshio) to be assembled here with a material, and MBDyn's
modal files (.fem), read and written.

Units: the files are read in the unit system they were written in, `units` =
"LENGTH-MASS-TIME" (e.g. "m-kg-s", the default, or "mm-t-s", the usual system of
finite-element models in millimetres: N, MPa, t/mm^3), and converted to SI: with
L, m, t the units in m, kg and s, a stiffness entry is multiplied by
(m / t^2) L^r, a mass entry by m L^r, r the number of its two coordinates that are
rotations (1 each), and the coordinates by L. A mesh takes its `length_unit` alone
(its material is in SI).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ModelError
from .fe_body import FeData, FeModal
from .gmsh_text import check_gmsh_text

__all__ = [
    "LENGTH_UNITS",
    "MASS_UNITS",
    "TIME_UNITS",
    "unit_scales",
    "read_matrix",
    "read_node_table",
    "read_abaqus_inp",
    "read_mesh",
    "fe_data_from_matrices",
    "fe_data_from_mesh",
    "read_mbdyn_fem",
    "write_mbdyn_fem",
    "check_plausible_units",
    "WAVE_SPEED_RANGE",
    "MASS_PER_SIZE_RANGE",
    "LARGEST_BODY",
]

LENGTH_UNITS = {"m": 1.0, "cm": 1e-2, "mm": 1e-3, "in": 0.0254, "ft": 0.3048}
MASS_UNITS = {"kg": 1.0, "g": 1e-3, "t": 1e3, "lb": 0.45359237}
TIME_UNITS = {"s": 1.0, "ms": 1e-3}
ABAQUS_DOFS = 6  # Abaqus numbers u v w tx ty tz of a node 1..6
ANSYS_DOFS = {"UX": 0, "UY": 1, "UZ": 2, "ROTX": 3, "ROTY": 4, "ROTZ": 5}
WAVE_SPEED_RANGE = (10.0, 20000.0)  # m/s: sqrt(E / rho) of solids, rubber to beryllium
MASS_PER_SIZE_RANGE = (1e-4, 3e4)  # kg/m^3: mass / (largest extent)^3 of a body
LARGEST_BODY = 100.0  # m: a mesh larger than this was written in another length unit
TET_CELLS = {"tetra": 4, "tetra10": 10}
MESH_FLAT_TOL = 1e-12  # a tetrahedron's 6 V / extent^3 at or below this has no volume


def unit_scales(units: str, item: str | None, fld: str = "units") -> tuple[float, float, float]:
    """(L in m, mass unit in kg, time unit in s) of "LENGTH-MASS-TIME"."""
    parts = str(units).split("-") if isinstance(units, str) else []
    if (
        len(parts) != 3
        or parts[0] not in LENGTH_UNITS
        or parts[1] not in MASS_UNITS
        or parts[2] not in TIME_UNITS
    ):
        raise ModelError(
            f"expected LENGTH-MASS-TIME of {'/'.join(LENGTH_UNITS)}, {'/'.join(MASS_UNITS)} "
            f'and {"/".join(TIME_UNITS)} (e.g. "m-kg-s", "mm-t-s"), got {units!r}',
            item,
            fld,
        )
    return LENGTH_UNITS[parts[0]], MASS_UNITS[parts[1]], TIME_UNITS[parts[2]]


def _si(
    k: sp.spmatrix, m: sp.spmatrix, node_dofs: int, scales: tuple[float, float, float]
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """K and M of a file in the unit system `scales`, in SI (module docstring)."""
    length, mass, time = scales
    n = k.shape[0]
    per = np.ones(n)
    if node_dofs == 6:
        per[np.arange(n) % 6 >= 3] = length
    d = sp.diags(per)
    return (
        sp.csr_matrix(d @ k @ d) * (mass / time**2),
        sp.csr_matrix(d @ m @ d) * mass,
    )


def _path(path: str | os.PathLike[str], base: str | None, item: str | None, fld: str) -> Path:
    p = Path(path)
    if not p.is_absolute() and base:
        p = Path(base) / p
    if not p.is_file():
        raise ModelError(f"cannot read {path}: no such file", item, fld)
    return p


# ------------------------------------------------------------------- matrices
def read_matrix(
    path: str | os.PathLike[str],
    item: str | None = None,
    fld: str = "stiffness",
    base: str | None = None,
    node_index: dict[int, int] | None = None,
    dof_map: NDArray[np.int64] | None = None,
) -> tuple[sp.csr_matrix, int | None]:
    """(matrix (CSR), coordinates per node it shows or None) of a file: Matrix Market
    (%%MatrixMarket header), Harwell-Boeing (.rb, .rua, .rsa, .hb: real assembled; a
    symmetric one is mirrored), or Abaqus's coordinate output (.mtx without a
    header): lines "row, column, value" (equation numbers from 1) or "node, dof,
    node, dof, value" (node labels, dofs 1..6; `node_index` maps a label to its
    row of the node table). A file holding one triangle of the matrix is mirrored.
    `dof_map` (N,) maps equation k (from 0) to its coordinate in the node-major
    order (Ansys's mapping file)."""
    p = _path(path, base, item, fld)
    name = p.name
    try:
        with open(p, encoding="utf-8", errors="replace") as f:
            head = f.read(200)
        suffix = p.suffix.lower()
        dofs: int | None = None
        if head.startswith("%%MatrixMarket"):
            a = sp.csr_matrix(scipy.io.mmread(str(p)))
        elif suffix in (".rb", ".rua", ".rsa", ".hb", ".hbmat"):
            a = _read_harwell_boeing(p)
        else:
            a, dofs = _read_coordinate_text(p, node_index)
    except ModelError as err:
        raise ModelError(f"{name}: {err.message}", item, fld) from None
    except (ValueError, OSError, IndexError, TypeError) as err:
        raise ModelError(
            f"{name}: not a matrix file flexmbs reads (Matrix Market, Harwell-Boeing, "
            f"Abaqus coordinate output): {err}",
            item,
            fld,
        ) from None
    if a.shape[0] != a.shape[1]:
        raise ModelError(f"{name}: expected a square matrix, got {a.shape}", item, fld)
    a = _mirrored(a)
    if dof_map is not None:
        if len(dof_map) != a.shape[0]:
            raise ModelError(
                f"{name}: the mapping has {len(dof_map)} equations, the matrix {a.shape[0]}",
                item,
                fld,
            )
        coo = a.tocoo()
        n = int(dof_map.max()) + 1
        a = sp.csr_matrix((coo.data, (dof_map[coo.row], dof_map[coo.col])), shape=(n, n))
    return a, dofs


def _mirrored(a: sp.spmatrix) -> sp.csr_matrix:
    """A square matrix given as one triangle, made whole (the diagonal once)."""
    a = sp.csr_matrix(a)
    lower = sp.tril(a, -1)
    upper = sp.triu(a, 1)
    if lower.nnz and not upper.nnz:
        return sp.csr_matrix(a + lower.T)
    if upper.nnz and not lower.nnz:
        return sp.csr_matrix(a + upper.T)
    return a


def _read_harwell_boeing(p: Path) -> sp.csr_matrix:
    text = p.read_text(encoding="ascii", errors="replace")
    lines = text.splitlines(keepends=True)
    if len(lines) < 4:
        raise ValueError("the header is shorter than four lines")
    kind = lines[2][:3].upper()
    if kind[0] != "R" or kind[2] != "A":
        raise ValueError(f"only real assembled matrices are read, the file has {kind}")
    if kind[1] == "S":
        lines[2] = "RUA" + lines[2][3:]
    return sp.csr_matrix(scipy.io.hb_read(io.StringIO("".join(lines))))


def _read_coordinate_text(
    p: Path, node_index: dict[int, int] | None
) -> tuple[sp.csr_matrix, int | None]:
    rows: list[list[float]] = []
    numbers: list[int] = []
    with open(p, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith(("*", "#", "%")):
                continue
            try:
                row = [float(v) for v in re.split(r"[,\s]+", line) if v]
            except ValueError:
                raise ModelError(f"line {number}: expected numbers, got {line[:60]!r}") from None
            if not np.all(np.isfinite(row)):
                raise ModelError(f"line {number}: expected finite numbers, got {line[:60]!r}")
            if len(row) not in (3, 5) or (rows and len(row) != len(rows[0])):
                raise ModelError(
                    f"line {number}: expected {len(rows[0]) if rows else '3 or 5'} numbers "
                    "(row, column, value or node, dof, node, dof, value), got "
                    f"{line[:60]!r}"
                )
            rows.append(row)
            numbers.append(number)
    if not rows:
        raise ModelError("no entries: expected lines of row, column, value")
    width = {len(r) for r in rows}
    if width == {3}:
        data = np.array(rows)
        if np.any(data[:, :2] < 1) or np.any(data[:, :2] != np.round(data[:, :2])):
            bad = int(
                np.flatnonzero(
                    np.any((data[:, :2] < 1) | (data[:, :2] != np.round(data[:, :2])), 1)
                )[0]
            )
            raise ModelError(f"line {numbers[bad]}: expected equation numbers 1, 2, ...")
        first = data[0]
        if (
            len(data) > 1
            and first[2] == len(data) - 1
            and first[0] == first[1]
            and first[0] >= data[1:, :2].max()
        ):
            raise ModelError(
                f"line {numbers[0]}: {rows[0][0]:.0f} {rows[0][1]:.0f} {rows[0][2]:.0f} is a "
                "Matrix Market size line (rows, columns, entries) and the file has no "
                "%%MatrixMarket header: expected the header line (%%MatrixMarket matrix "
                "coordinate real symmetric) first"
            )
        i = data[:, 0].astype(np.int64) - 1
        j = data[:, 1].astype(np.int64) - 1
        n = int(max(i.max(), j.max())) + 1
        return sp.csr_matrix((data[:, 2], (i, j)), shape=(n, n)), None
    if width == {5}:
        if node_index is None:
            raise ModelError("the entries name nodes and dofs: give the node table (nodes = ...)")
        data = np.array(rows)
        labels = data[:, [0, 2]].astype(np.int64)
        dof = data[:, [1, 3]].astype(np.int64) - 1
        if np.any(data[:, :4] != np.round(data[:, :4])):
            bad = int(np.flatnonzero(np.any(data[:, :4] != np.round(data[:, :4]), 1))[0])
            raise ModelError(f"line {numbers[bad]}: expected integer node labels and dofs")
        missing = [int(v) for v in np.unique(labels) if int(v) not in node_index]
        if missing:
            bad = int(np.flatnonzero(np.any(labels == missing[0], 1))[0])
            raise ModelError(f"line {numbers[bad]}: node {missing[0]} is not in the node table")
        if dof.min() < 0 or dof.max() >= ABAQUS_DOFS:
            bad = int(np.flatnonzero(np.any((dof < 0) | (dof >= ABAQUS_DOFS), 1))[0])
            raise ModelError(f"line {numbers[bad]}: expected dofs 1..6 (u v w and the rotations)")
        per = 6 if dof.max() >= 3 else 3
        index = np.vectorize(node_index.__getitem__)(labels)
        eq = per * index + dof
        n = per * len(node_index)
        return sp.csr_matrix((data[:, 4], (eq[:, 0], eq[:, 1])), shape=(n, n)), per
    raise ValueError(
        "expected lines of 3 (row, column, value) or 5 (node, dof, node, dof, value) numbers"
    )


def read_dof_map(
    path: str | os.PathLike[str],
    node_index: dict[int, int],
    node_dofs: int,
    item: str | None = None,
    base: str | None = None,
) -> NDArray[np.int64]:
    """The coordinate (node-major, node_dofs per node) of each equation of an Ansys
    mapping file: lines "equation node dof" (dof UX UY UZ ROTX ROTY ROTZ), a header
    line allowed."""
    p = _path(path, base, item, "dof_map")
    eqs, coords = [], []
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[0].isdigit():
            continue
        label, dof = int(parts[1]), parts[2].upper()
        if label not in node_index or dof not in ANSYS_DOFS:
            raise ModelError(
                f"{p.name}: node {label} dof {dof}: not in the node table, or "
                f"not one of {', '.join(ANSYS_DOFS)}",
                item,
                "dof_map",
            )
        eqs.append(int(parts[0]) - 1)
        coords.append(node_dofs * node_index[label] + ANSYS_DOFS[dof])
    out = np.empty(len(eqs), dtype=np.int64)
    out[np.array(eqs, dtype=np.int64)] = coords
    return out


def read_node_table(
    path: str | os.PathLike[str], item: str | None = None, base: str | None = None
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(labels (n,), coordinates (n, 3)) of a CSV node table: rows "label, x, y, z"
    (or "x, y, z": labels 1..n), a header line allowed; or an Abaqus input file's
    *NODE lines (.inp)."""
    p = _path(path, base, item, "nodes")
    if p.suffix.lower() == ".inp":
        labels, x, _, _ = read_abaqus_inp(p, item)
        return labels, x
    rows = []
    for k, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines()):
        line = line.strip()
        if not line or line.startswith(("#", "%")):
            continue
        parts = [v for v in re.split(r"[,;\s]+", line) if v]
        try:
            rows.append([float(v) for v in parts])
        except ValueError:
            if rows or k > 0:
                raise ModelError(
                    f"{p.name}: line {k + 1}: expected numbers, got {line!r}", item, "nodes"
                ) from None
            continue
        if not np.all(np.isfinite(rows[-1])):
            raise ModelError(
                f"{p.name}: line {k + 1}: expected finite numbers, got {line!r}", item, "nodes"
            )
        if len(rows[-1]) not in (3, 4) or len(rows[-1]) != len(rows[0]):
            raise ModelError(
                f"{p.name}: line {k + 1}: expected {len(rows[0]) if len(rows) > 1 else '3 or 4'} "
                f"numbers (label, x, y, z or x, y, z), got {line!r}",
                item,
                "nodes",
            )
    if not rows or {len(r) for r in rows} - {3, 4} or len({len(r) for r in rows}) != 1:
        raise ModelError(f"{p.name}: expected rows of label, x, y, z (or x, y, z)", item, "nodes")
    data = np.array(rows)
    if data.shape[1] == 4:
        labels = data[:, 0].astype(np.int64)
        if not np.all(data[:, 0] == labels):
            raise ModelError(f"{p.name}: expected integer node labels", item, "nodes")
        x = data[:, 1:]
    else:
        labels, x = np.arange(1, len(data) + 1), data
    if len(np.unique(labels)) != len(labels):
        _, first, counts = np.unique(labels, return_index=True, return_counts=True)
        twice = int(labels[first[np.argmax(counts > 1)]])
        raise ModelError(
            f"{p.name}: node {twice} appears twice: expected each label once", item, "nodes"
        )
    return labels, x


def read_abaqus_inp(
    path: str | os.PathLike[str], item: str | None = None
) -> tuple[NDArray[np.int64], NDArray[np.float64], dict[str, NDArray[np.int64]], tuple]:
    """(labels, coordinates, node sets {name: labels}, cells) of an Abaqus input file:
    its *NODE, *NSET (GENERATE too) and *ELEMENT (C3D4, C3D10 for drawing) lines."""
    labels: list[int] = []
    coords: list[list[float]] = []
    sets: dict[str, list[int]] = {}
    cells: dict[str, list[list[int]]] = {}
    mode, current, generate, etype = "", "", False, ""
    pending: list[int] = []
    name = Path(path).name
    for number, raw in enumerate(
        Path(path).read_text(encoding="utf-8", errors="replace").splitlines(), 1
    ):
        try:
            mode, current, generate, etype, pending = _abaqus_line(
                raw, mode, current, generate, etype, pending, labels, coords, sets, cells
            )
        except (ValueError, IndexError):
            what = {
                "node": "a node line: label, x, y, z",
                "nset": "node labels",
                "element": "an element line: label, nodes",
            }.get(mode, "a keyword line")
            raise ModelError(
                f"{name}: line {number}: expected {what}, got {raw.strip()[:60]!r}", item, "nodes"
            ) from None
    if mode == "element" and pending:
        cells.setdefault(etype, []).append(pending)
    if not labels:
        raise ModelError(f"{name}: no *NODE lines", item, "nodes")
    if not np.all(np.isfinite(coords)):
        raise ModelError(
            f"{name}: a *NODE line has coordinates that are not finite numbers", item, "nodes"
        )
    lab = np.array(labels, dtype=np.int64)
    if len(np.unique(lab)) != len(lab):
        _, first, counts = np.unique(lab, return_index=True, return_counts=True)
        raise ModelError(
            f"{name}: node {int(lab[first[np.argmax(counts > 1)]])} is defined "
            "twice: expected each label once",
            item,
            "nodes",
        )
    where = {int(v): k for k, v in enumerate(lab)}
    out_cells = []
    for kind, rows in cells.items():
        kind_name = {"C3D4": "tetra", "C3D10": "tetra10"}.get(kind)
        if kind_name and rows:
            missing = [v for r in rows for v in r[1:] if v not in where]
            if missing:
                raise ModelError(
                    f"{name}: an element names node {missing[0]}, which no *NODE line defines",
                    item,
                    "nodes",
                )
            conn = np.array([[where[v] for v in r[1:]] for r in rows if len(r) > 1])
            out_cells.append((kind_name, conn))
    return (
        lab,
        np.array(coords, dtype=np.float64)[:, :3],
        {k: np.array(v, dtype=np.int64) for k, v in sets.items()},
        tuple(out_cells),
    )


def _abaqus_line(
    raw: str,
    mode: str,
    current: str,
    generate: bool,
    etype: str,
    pending: list[int],
    labels: list[int],
    coords: list[list[float]],
    sets: dict[str, list[int]],
    cells: dict[str, list[list[int]]],
) -> tuple[str, str, bool, str, list[int]]:
    """Read one line of an Abaqus input file into labels, coords, sets and cells:
    (mode, current set, generate, element type, pending element) after it."""
    line = raw.strip()
    if not line or line.startswith("**"):
        return mode, current, generate, etype, pending
    if line.startswith("*"):
        if mode == "element" and pending:
            cells.setdefault(etype, []).append(pending)
            pending = []
        key = line.split(",")[0].strip().upper()
        opts = {
            o.split("=")[0].strip().upper(): (o.split("=")[1].strip() if "=" in o else "")
            for o in line.split(",")[1:]
        }
        mode = {"*NODE": "node", "*NSET": "nset", "*ELEMENT": "element"}.get(key, "")
        current = opts.get("NSET", "")
        generate = "GENERATE" in opts
        etype = opts.get("TYPE", "").upper()
        return mode, current, generate, etype, pending
    values = [v for v in line.replace(",", " ").split() if v]
    if mode == "node":
        labels.append(int(values[0]))
        coords.append([float(v) for v in values[1:4]] + [0.0] * (4 - len(values)))
    elif mode == "nset":
        if generate:
            a, b, *step = (int(v) for v in values)
            sets.setdefault(current, []).extend(range(a, b + 1, step[0] if step else 1))
        else:
            sets.setdefault(current, []).extend(int(v) for v in values)
    elif mode == "element":
        pending += [int(v) for v in values]
        size = {"C3D4": 5, "C3D10": 11}.get(etype)
        if size and len(pending) >= size:
            cells.setdefault(etype, []).append(pending[:size])
            pending = pending[size:]
    return mode, current, generate, etype, pending


def fe_data_from_matrices(
    stiffness: str,
    mass: str,
    nodes: str,
    units: str = "m-kg-s",
    node_dofs: int | None = None,
    dof_map: str | None = None,
    item: str | None = None,
    base: str | None = None,
    sets_from: str | None = None,
) -> FeData:
    """FeData from K and M files and a node table (read_matrix, read_node_table), in
    `units`, converted to SI; node sets from an Abaqus input file given as the node
    table (or as `sets_from`)."""
    scales = unit_scales(units, item)
    labels, x = read_node_table(nodes, item, base)
    index = {int(v): k for k, v in enumerate(labels)}
    sets: dict[str, NDArray[np.int64]] = {}
    cells: tuple = ()
    inp = sets_from or (nodes if str(nodes).lower().endswith(".inp") else None)
    if inp is not None:
        _, _, raw_sets, cells = read_abaqus_inp(_path(inp, base, item, "nodes"), item)
        for name, members in raw_sets.items():
            sets[name] = np.array([index[int(v)] for v in members if int(v) in index])
    mapping = None
    if dof_map is not None:
        mapping = read_dof_map(dof_map, index, node_dofs or 3, item, base)
    k, dk = read_matrix(stiffness, item, "stiffness", base, index, mapping)
    m, dm = read_matrix(mass, item, "mass", base, index, mapping)
    per = node_dofs or dk or dm
    if per is None:
        per, rest = divmod(k.shape[0], len(x))
        if rest or per not in (3, 6):
            raise ModelError(
                f"{Path(str(stiffness)).name}: {k.shape[0]} coordinates for {len(x)} nodes of "
                f"{Path(str(nodes)).name}: expected 3 or 6 per node; do the matrix and the node "
                "table belong together?",
                item,
                "stiffness",
            )
    for a, fld in ((k, "stiffness"), (m, "mass")):
        if a.shape[0] != per * len(x):
            raise ModelError(
                f"the {fld} matrix has {a.shape[0]} coordinates, the node table "
                f"{len(x)} nodes x {per}: do they belong together?",
                item,
                fld,
            )
    k, m = _si(k, m, per, scales)
    source = ", ".join(Path(str(v)).name for v in (stiffness, mass, nodes))
    return FeData(x * scales[0], labels, int(per), k, m, sets, cells, source)


# ----------------------------------------------------------------------- mesh
def read_mesh(
    path: str | os.PathLike[str], item: str | None = None, base: str | None = None
) -> tuple[NDArray[np.float64], NDArray[np.int64], dict[str, NDArray[np.int64]], tuple]:
    """(points (n, 3), tets (ne, 4 or 10), node sets {physical group: node indices},
    cells for drawing) of a mesh file read by meshio (gmsh .msh and the other formats
    meshio reads). Only the nodes of the tetrahedra are kept."""
    p = _path(path, base, item, "mesh")
    try:
        import meshio
    except ImportError:
        raise ModelError(
            "a body from a mesh needs meshio: pip install 'flexmbs[fe]'", item, "mesh"
        ) from None
    if p.suffix.lower() == ".msh":
        try:
            check_gmsh_text(p)
        except (ValueError, OSError) as err:
            raise ModelError(f"{p.name}: {err}", item, "mesh") from None
    said = io.StringIO()
    try:  # meshio prints what it could not read and exits when no reader takes the file
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            mesh = meshio.read(str(p))
    except (Exception, SystemExit) as err:  # meshio raises many kinds on a bad file
        words = " ".join(str(err).split() if str(err) not in ("", "1") else said.getvalue().split())
        raise ModelError(
            f"{p.name}: expected a tetrahedral mesh in a format meshio reads (gmsh .msh, "
            f".vtk, .vtu, .inp, ...), whole; meshio: {words[:300] or type(err).__name__}",
            item,
            "mesh",
        ) from None
    blocks = [(c.type, np.asarray(c.data, dtype=np.int64)) for c in mesh.cells]
    tets = [d for t, d in blocks if t in TET_CELLS]
    kinds = {t for t, _ in blocks if t in TET_CELLS}
    if not tets:
        found = ", ".join(sorted({t for t, _ in blocks})) or "none"
        raise ModelError(
            f"{p.name}: expected tetrahedra (tetra or tetra10 cells), found {found}",
            item,
            "mesh",
        )
    if len(kinds) > 1:
        raise ModelError(f"{p.name}: linear and quadratic tetrahedra mixed", item, "mesh")
    tet = np.vstack(tets)
    used = np.unique(tet)
    new = -np.ones(len(mesh.points), dtype=np.int64)
    new[used] = np.arange(len(used))
    points = np.asarray(mesh.points, dtype=float)[used]
    if points.shape[1] == 2:
        points = np.hstack([points, np.zeros((len(points), 1))])
    _check_mesh_geometry(points, new[tet], p.name, item)
    sets: dict[str, NDArray[np.int64]] = {}
    for name, per_block in (mesh.cell_sets or {}).items():
        if name.startswith("gmsh:"):
            continue
        members: list[int] = []
        for (_, data), rows in zip(blocks, per_block):
            if rows is not None and len(rows):
                members += list(np.unique(data[np.asarray(rows, dtype=np.int64)]))
        kept = new[np.array(members, dtype=np.int64)] if members else np.zeros(0, np.int64)
        sets[name] = np.unique(kept[kept >= 0])
    for name, idx in (mesh.point_sets or {}).items():
        kept = new[np.asarray(idx, dtype=np.int64)]
        sets[name] = np.unique(kept[kept >= 0])
    return (
        points,
        new[tet],
        sets,
        (("tetra10" if 10 in {t.shape[1] for t in tets} else "tetra", new[tet]),),
    )


def _check_mesh_geometry(
    points: NDArray[np.float64], tets: NDArray[np.int64], name: str, item: str | None
) -> None:
    """A one-line ModelError for a mesh that is no solid: a coordinate that is not a
    finite number, all nodes in a plane, or a tetrahedron of no volume (its corners in
    a plane: |det| <= MESH_FLAT_TOL of the mesh's extent cubed)."""
    bad = np.flatnonzero(~np.all(np.isfinite(points), axis=1))
    if len(bad):
        raise ModelError(
            f"{name}: node {bad[0] + 1} (of the tetrahedra's, in order) is at "
            f"{points[bad[0]].tolist()}: expected finite coordinates",
            item,
            "mesh",
        )
    span = np.ptp(points, axis=0)
    if span.max() <= 0.0 or span.min() <= MESH_FLAT_TOL * span.max():
        axis = "xyz"[int(np.argmin(span))]
        raise ModelError(
            f"{name}: the mesh is flat, every node at {axis} = {points[0, 'xyz'.index(axis)]:g}: "
            "expected a solid spanning x, y and z (a plate's thickness meshed)",
            item,
            "mesh",
        )
    a, b, c, d = (points[tets[:, k]] for k in range(4))
    six_volume = np.abs(np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a))
    flat = np.flatnonzero(six_volume <= MESH_FLAT_TOL * float(span.max()) ** 3)
    if len(flat):
        raise ModelError(
            f"{name}: tetrahedron {flat[0] + 1} (of {len(tets)}) has no volume, its corners in "
            f"a plane{f' (and {len(flat) - 1} more)' if len(flat) > 1 else ''}: expected "
            "tetrahedra of a solid",
            item,
            "mesh",
        )


def check_plausible_units(
    youngs_modulus: float,
    density: float,
    extent: float,
    length_unit: str,
    source: str,
    item: str | None,
) -> None:
    """A one-line ModelError when the material and the mesh cannot be in the units
    flexmbs takes (SI, and the mesh in `length_unit`): sqrt(E / rho) outside
    WAVE_SPEED_RANGE, or a body larger than LARGEST_BODY."""
    c = float(np.sqrt(youngs_modulus / density))
    lo, hi = WAVE_SPEED_RANGE
    if not lo <= c <= hi:
        hint = (
            "is E in MPa (N/mm^2)? flexmbs takes Pa"
            if c < lo
            else "is the density in t/mm^3 or g/cm^3? flexmbs takes kg/m^3"
        )
        raise ModelError(
            f"youngs_modulus / density gives a wave speed sqrt(E/rho) of {c:.3g} m/s, "
            f"outside the {lo:g}..{hi:g} m/s of solids: {hint}",
            item,
            "material",
        )
    if extent > LARGEST_BODY:
        raise ModelError(
            f'{source}: the mesh spans {extent:.4g} m with length_unit = "{length_unit}": '
            'is it in mm? set length_unit = "mm"',
            item,
            "length_unit",
        )


def fe_data_from_mesh(
    path: str,
    youngs_modulus: float,
    poisson_ratio: float,
    density: float,
    length_unit: str = "m",
    item: str | None = None,
    base: str | None = None,
) -> FeData:
    """FeData of a tetrahedral mesh file (read_mesh) and an isotropic material (SI),
    assembled with scikit-fem (flexmbs.elements.solid.solid_matrices)."""
    from .solid import solid_matrices

    if length_unit not in LENGTH_UNITS:
        raise ModelError(
            f"expected one of {', '.join(LENGTH_UNITS)}, got {length_unit!r}",
            item,
            "length_unit",
        )
    points, tets, sets, cells = read_mesh(path, item, base)
    points = points * LENGTH_UNITS[length_unit]
    extent = float(np.ptp(points, axis=0).max())
    name = Path(str(path)).name
    check_plausible_units(youngs_modulus, density, extent, length_unit, name, item)
    k, ms = solid_matrices(points, tets, youngs_modulus, poisson_ratio, density, item)
    m = sp.kron(ms, sp.identity(3), format="csr")
    return FeData(points, np.arange(1, len(points) + 1), 3, k, m, sets, cells, name)


def check_matrix_units(data: FeData, units: str, item: str | None) -> None:
    """A one-line ModelError when the body's mass per cube of its largest extent is
    outside MASS_PER_SIZE_RANGE: its coordinates and matrices read in `units` do not
    describe a body (mm read as m: 1e-9 of the truth)."""
    d = data.node_dofs
    mass = float(sp.csr_matrix(data.mass)[0::d][:, 0::d].sum())  # e_x^T M e_x
    extent = float(np.ptp(np.asarray(data.nodes), axis=0).max())
    if extent <= 0:
        return
    ratio = mass / extent**3
    lo, hi = MASS_PER_SIZE_RANGE
    if not lo <= ratio <= hi:
        raise ModelError(
            f'{data.source}: read in units = "{units}" the body weighs {mass:.3g} kg and '
            f"spans {extent:.3g} m, {ratio:.3g} kg per cubic metre of its size (expected "
            f"{lo:g}..{hi:g}): are the node table and the matrices in these units? (e.g. "
            'units = "mm-t-s")',
            item,
            "units",
        )


# -------------------------------------------------------------- MBDyn modal
def read_mbdyn_fem(
    path: str | os.PathLike[str],
    units: str = "m-kg-s",
    item: str | None = None,
    base: str | None = None,
) -> FeModal:
    """FeModal of an MBDyn modal file (.fem; record groups 1-13: header, node labels,
    initial modal states (ignored), coordinates, mode shapes, modal mass and
    stiffness, the lumped nodal masses, the rigid-body inertia (ignored: the nodes'
    masses give it) and the modal damping), in `units`, converted to SI."""
    p = _path(path, base, item, "modal")
    scales = unit_scales(units, item)
    groups: dict[int, list[float]] = {}
    current = None
    text = p.read_bytes()
    if b"\0" in text[:4096]:
        raise ModelError(
            f"{p.name}: a binary file: expected an MBDyn modal file (text)", item, "modal"
        )
    for number, line in enumerate(text.decode("utf-8", errors="replace").splitlines(), 1):
        s = line.strip()
        m = re.match(r"\*\*\s*RECORD GROUP\s+(\d+)", s, re.IGNORECASE)
        if m:
            current = int(m.group(1))
            groups[current] = []
            continue
        if not s or s.startswith("**") or current is None:
            continue
        words = s.split()[1:] if current == 1 else s.replace(",", " ").split()
        try:
            values = [float(v) for v in words]
        except ValueError:
            raise ModelError(
                f"{p.name}: line {number} (record group {current}): expected numbers, got "
                f"{s[:60]!r}",
                item,
                "modal",
            ) from None
        if not all(np.isfinite(values)):
            raise ModelError(
                f"{p.name}: line {number} (record group {current}): expected finite numbers, "
                f"got {s[:60]!r}",
                item,
                "modal",
            )
        groups[current] += values

    def group(g: int, size: int, what: str) -> list[float]:
        values = groups.get(g)
        if values is None or len(values) < size:
            got = "none" if values is None else f"{len(values)} numbers"
            raise ModelError(
                f"{p.name}: record group {g} ({what}): expected {size} numbers, got {got}: "
                "not an MBDyn modal file, or one cut short",
                item,
                "modal",
            )
        return values[:size]

    header = [int(v) for v in group(1, 5, "the header: nodes and modes")]
    nnodes = header[0]
    nmodes = header[1] + header[2] + header[3] - header[4]
    if nnodes < 1 or nmodes < 1:
        raise ModelError(
            f"{p.name}: record group 1: {nnodes} nodes and {nmodes} modes: expected at least one "
            "of each",
            item,
            "modal",
        )
    labels = np.array(group(2, nnodes, "the node labels"), dtype=np.int64)
    x = np.column_stack([group(g, nnodes, "the nodes' coordinates") for g in (5, 6, 7)])
    x = x * scales[0]
    shapes = np.array(group(8, 6 * nnodes * nmodes, "the mode shapes"))
    shapes = shapes.reshape(nmodes, 6 * nnodes).T
    mass = np.array(group(9, nmodes * nmodes, "the modal mass")).reshape(nmodes, nmodes)
    stiff = np.array(group(10, nmodes * nmodes, "the modal stiffness")).reshape(nmodes, nmodes)
    if 11 not in groups or len(groups[11]) < 6 * nnodes:
        raise ModelError(
            f"{p.name}: no lumped nodal masses (record group 11): flexmbs takes the "
            "body's inertia from them",
            item,
            "modal",
        )
    length, mass_unit, time = scales
    rot = np.arange(6 * nnodes) % 6 >= 3
    shapes[~rot] *= length  # translations per modal unit; rotations stay rad
    lumped = np.array(groups[11][: 6 * nnodes]).reshape(nnodes, 6) * mass_unit
    lumped[:, 3:] *= length**2
    damping = None
    if 13 in groups and len(groups[13]) >= nmodes * nmodes:
        damping = np.array(groups[13][: nmodes * nmodes]).reshape(nmodes, nmodes)
    # modal coordinates keep the file's scale; their mass, stiffness, damping to SI
    mass = mass * mass_unit * length**2
    stiff = stiff * mass_unit * length**2 / time**2
    if damping is not None:
        damping = damping * mass_unit * length**2 / time
    return FeModal(x, labels, shapes, mass, stiff, lumped, damping, (), p.name)


def write_mbdyn_fem(
    path: str | os.PathLike[str],
    nodes: NDArray[np.float64],
    labels: NDArray[np.int64],
    shapes: NDArray[np.float64],
    mass: NDArray[np.float64],
    stiffness: NDArray[np.float64],
    lumped: NDArray[np.float64],
    damping: NDArray[np.float64] | None = None,
    total: tuple[float, NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> None:
    """Write an MBDyn modal file (SI): nodes (n, 3) m, labels (n,), shapes (6 n, nm)
    at u v w tx ty tz, modal mass and stiffness (nm, nm), lumped (n, 6) the nodes'
    masses and rotary inertias, damping (nm, nm) or None, total (mass, centre of
    mass, inertia about it) or None."""
    n, nm = len(nodes), shapes.shape[1]
    out = [
        "** MBDyn MODAL DATA FILE",
        "** written by flexmbs",
        "",
        "** RECORD GROUP 1, HEADER",
        "**   REVISION,  NODE,  NORMAL, ATTACHMENT, CONSTRAINT, REJECTED MODES.",
        f"      REV0 {n} {nm} 0 0 0",
        "**",
        "",
        "** RECORD GROUP 2, FINITE ELEMENT NODE LIST",
        " ".join(str(int(v)) for v in labels),
        "**",
        "",
        "** RECORD GROUP 3, INITIAL MODAL DISPLACEMENTS",
        " ".join(["0"] * nm),
        "**",
        "",
        "** RECORD GROUP 4, INITIAL MODAL VELOCITIES",
        " ".join(["0"] * nm),
        "**",
    ]
    fmt = "{:.16e}".format
    for g, axis in ((5, "X"), (6, "Y"), (7, "Z")):
        out += ["", f"** RECORD GROUP {g}, NODAL {axis} COORDINATES"]
        out += [fmt(v) for v in nodes[:, g - 5]]
        out += ["**"]
    out += ["", "** RECORD GROUP 8, MODE SHAPES"]
    for k in range(nm):
        out.append(f"**    NORMAL MODE SHAPE #  {k + 1}")
        out += [" ".join(fmt(v) for v in row) for row in shapes[:, k].reshape(n, 6)]
    out += ["**", "", "** RECORD GROUP 9, MODAL MASS MATRIX"]
    out += [" ".join(fmt(v) for v in row) for row in mass]
    out += ["**", "", "** RECORD GROUP 10, MODAL STIFFNESS MATRIX"]
    out += [" ".join(fmt(v) for v in row) for row in stiffness]
    out += ["**", "", "** RECORD GROUP 11, DIAGONAL OF LUMPED MASS MATRIX"]
    out += [" ".join(fmt(v) for v in row) for row in lumped]
    out += ["**"]
    if total is not None:
        m, c, j = total
        out += [
            "",
            "** RECORD GROUP 12, RIGID BODY INERTIA MATRIX",
            fmt(m),
            " ".join(fmt(v) for v in c),
        ]
        out += [" ".join(fmt(v) for v in row) for row in j]
        out += ["**"]
    if damping is not None:
        out += ["", "** RECORD GROUP 13, MODAL DAMPING MATRIX"]
        out += [" ".join(fmt(v) for v in row) for row in damping]
        out += ["**"]
    Path(path).write_text("\n".join(out) + "\n", encoding="utf-8")


def described_files(table: dict[str, Any]) -> list[str]:
    """The data files a body's table names (for the model's derivation key)."""
    return [
        str(table[k])
        for k in ("mesh", "stiffness", "mass", "nodes", "modal", "dof_map")
        if k in table
    ]
