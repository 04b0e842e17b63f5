"""Abaqus input files (.inp) read for a finite-element body: the nodes, the node sets
and the elements (flexmbs.elements.fe_files)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError

__all__ = ["read_abaqus_inp"]


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
