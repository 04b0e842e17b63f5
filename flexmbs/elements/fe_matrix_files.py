"""Stiffness and mass matrices and their node tables read for a finite-element body
(flexmbs.elements.fe_files): Matrix Market, Harwell-Boeing and Abaqus's coordinate
output (.mtx), Ansys's mapping of equations to nodes, CSV node tables (or an Abaqus
input file's nodes, flexmbs.elements.fe_abaqus)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from numpy.typing import NDArray

from ..errors import ModelError
from .fe_abaqus import read_abaqus_inp
from .fe_body import FeData
from .fe_units import data_file, to_si, unit_scales

__all__ = ["read_matrix", "read_dof_map", "read_node_table", "fe_data_from_matrices"]

ABAQUS_DOFS = 6  # Abaqus numbers u v w tx ty tz of a node 1..6
ANSYS_DOFS = {"UX": 0, "UY": 1, "UZ": 2, "ROTX": 3, "ROTY": 4, "ROTZ": 5}


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
    p = data_file(path, base, item, fld)
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
    p = data_file(path, base, item, "dof_map")
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
    p = data_file(path, base, item, "nodes")
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
        _, _, raw_sets, cells = read_abaqus_inp(data_file(inp, base, item, "nodes"), item)
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
    k, m = to_si(k, m, per, scales)
    source = ", ".join(Path(str(v)).name for v in (stiffness, mass, nodes))
    return FeData(x * scales[0], labels, int(per), k, m, sets, cells, source)
