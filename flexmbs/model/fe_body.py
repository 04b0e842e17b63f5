"""FeBody: a flexible body of any shape from its finite-element data, reduced to a
basis of modes (flexmbs.elements.fe_body; docs/explanation/formulation.md section 12).

The body's frame is the frame of its data (the mesh's or the node table's axes and
origin, in m); its elastic coordinates are the amplitudes eta of the reduced basis,
x = Phi eta, and the kernels see it as a reduced body through its invariants (m, int
rho u0, Th0, Sbar, N, SS, K, the damping D; flexmbs.model.compiled). Markers sit on an
interface (its reference point, moving with the interface: 6 linear forms of eta) or on
one node (its translation; the marker's axes turn with the body's frame).

The basis and the invariants are computed once, from the data and the reduction's
fields, and kept: on the body (derived again only when what they depend on changes)
and on disk under the kernel cache's folder (`fe/`, keyed by a hash of the data and
the fields), so that a second run, a sweep or `flexmbs info` of the same body read
them back in milliseconds.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..elements.fe_body import (
    FeBasis,
    FeData,
    FeModal,
    Interface,
    fe_basis,
    fe_invariants,
    mass_form_error,
    modal_basis_from_file,
    node_mass_matrix,
)
from ..elements.invariants import Invariants

if TYPE_CHECKING:
    from .items import Marker

__all__ = ["FeBody", "FE_CACHE_VERSION", "fe_cache_dir"]

FE_CACHE_VERSION = 1  # raised when what the cache holds changes


def _code_hash() -> str:
    """A hash of the modules that make the basis and the invariants: a change to them
    makes a fresh cache entry."""
    from ..elements import fe_body as elements_fe_body

    h = hashlib.sha256()
    for path in (elements_fe_body.__file__, __file__):
        h.update(Path(path).read_bytes())
    return h.hexdigest()


def fe_cache_dir() -> Path | None:
    """The folder of the reduced bodies kept on disk: `fe/` under FLEXMBS_CACHE_DIR (or
    $XDG_CACHE_HOME/flexmbs, ~/.cache/flexmbs); None when FLEXMBS_FE_CACHE=0."""
    if os.environ.get("FLEXMBS_FE_CACHE", "1") in ("0", "false", "no"):
        return None
    base = os.environ.get("FLEXMBS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "flexmbs",
    )
    return Path(base) / "fe"


@dataclass
class FeBody:
    """A flexible body from finite-element data (module docstring).

    `data`: FeData (nodes, K, M; to be reduced) or FeModal (an already reduced body).
    `interfaces`: {name: Interface}. `reduction`: "craig-bampton", "free" or "file"
    (FeModal). `modes`, `modes_below`: the fixed-interface (or free) modes kept, by
    count or below a frequency (Hz). `frame`: "mean_axes" or an interface's name (None:
    the first interface for Craig-Bampton, mean axes for free). Damping D = alpha K +
    beta M_ff plus `modal_damping` (ratios of the reduced body's modes, as for a beam)
    plus the file's modal damping (FeModal). `initial`, `initial_rates`: "undeformed",
    "static", "quasi-static", eta itself, or a start in the reduced body's modes
    (`initial_modes`, flexmbs.model.mode_start), as for a beam. `attachments`: what marker
    k sits on, ("interface", name) or ("node", index)."""

    name: str
    data: FeData | FeModal = field(metadata={"serialize": False})
    interfaces: dict = field(default_factory=dict)
    reduction: str = "craig-bampton"
    modes: int | None = None
    modes_below: float | None = None
    frame: str | None = None
    alpha: float = 0.0
    beta: float = 0.0
    modal_damping: float | str | NDArray[np.float64] | None = None
    initial: str | NDArray[np.float64] | list[float] = "undeformed"
    initial_rates: NDArray[np.float64] | list[float] | None = None
    markers: dict = field(default_factory=dict)
    initial_modes: tuple | None = None  # ((mode, amplitude, rate), ...): a start in modes
    attachments: list = field(default_factory=list, metadata={"serialize": False})
    geometric: str = "none"  # no geometric stiffness (docs: not covered for FE bodies)
    node_inertias: dict = field(default_factory=dict)

    @property
    def source(self) -> str:
        """The files the data came from."""
        return self.data.source

    @property
    def reduced(self) -> bool:
        return True

    @property
    def with_modal_derivatives(self) -> bool:
        return False

    # ------------------------------------------------------------ derived data
    @property
    def basis(self) -> FeBasis:
        """The reduced basis (flexmbs.elements.fe_body.FeBasis)."""
        return self._derived()[0]

    @property
    def invariants(self) -> Invariants:
        """The invariants of the elastic coordinates eta."""
        return self._derived()[1]

    def _key(self) -> str:
        """A hash of what the basis and the invariants depend on."""
        import scipy.sparse as sp

        h = hashlib.sha256(f"fe {FE_CACHE_VERSION} {_code_hash()}".encode())
        d = self.data
        h.update(np.ascontiguousarray(d.nodes, dtype=float).tobytes())
        h.update(str(d.node_dofs).encode())
        if isinstance(d, FeData):
            for a in (d.stiffness, d.mass):
                c = sp.csr_matrix(a)
                c.sort_indices()
                for part in (c.data, c.indices, c.indptr):
                    h.update(np.ascontiguousarray(part).tobytes())
        else:
            for part in (d.shapes, d.mass, d.stiffness, d.lumped):
                h.update(np.ascontiguousarray(part, dtype=float).tobytes())
        for f in self.interfaces.values():
            h.update(f.name.encode() + f.connection.encode())
            h.update(np.ascontiguousarray(f.nodes, dtype=np.int64).tobytes())
            for v in (f.point, f.weights):
                h.update(b"-" if v is None else np.asarray(v, dtype=float).tobytes())
        h.update(repr((self.reduction, self.modes, self.modes_below, self.frame)).encode())
        h.update(self.name.encode())  # the coordinate names hold it
        return h.hexdigest()

    def _derived(self) -> tuple[FeBasis, Invariants]:
        key = self._key()
        held = self.__dict__.get("_derived_from")
        if held is None or held[0] != key:
            held = (key, self._load(key) or self._derive(key))
            self.__dict__["_derived_from"] = held
        return held[1]

    def _derive(self, key: str) -> tuple[FeBasis, Invariants]:
        import scipy.sparse as sp

        item = f'body "{self.name}"'
        interfaces = list(self.interfaces.values())
        d = self.data
        if isinstance(d, FeModal):
            basis, turn = modal_basis_from_file(d, interfaces, self.name, item)
            ms = sp.diags(d.lumped[:, :3].mean(axis=1))
            mass_ff = turn.T @ (0.5 * (d.mass + d.mass.T)) @ turn
            stiff = turn.T @ (0.5 * (d.stiffness + d.stiffness.T)) @ turn
        else:
            basis = fe_basis(
                d,
                interfaces,
                self.reduction,
                self.modes,
                self.modes_below,
                self.frame,
                self.name,
                item,
            )
            ms = node_mass_matrix(d)
            phi = basis.vectors
            mass_ff = phi.T @ (d.mass @ phi)
            stiff = phi.T @ (d.stiffness @ phi)
        inv = fe_invariants(d.nodes, ms, d.node_dofs, basis.vectors, mass_ff, stiff)
        self._store(key, basis, inv)
        return basis, inv

    # ---------------------------------------------------------- the disk cache
    def _cache_file(self, key: str) -> Path | None:
        folder = fe_cache_dir()
        return None if folder is None else folder / f"{key}.npz"

    def _store(self, key: str, basis: FeBasis, inv: Invariants) -> None:
        path = self._cache_file(key)
        if path is None:
            return
        arrays: dict[str, Any] = {
            "vectors": basis.vectors,
            "frequencies": basis.frequencies,
            "component": basis.component_frequencies,
            "info": np.array([basis.frame, basis.reduction]),
            "numbers": np.array(
                [
                    basis.requested_modes,
                    basis.boundary,
                    np.nan if basis.modes_below is None else basis.modes_below,
                ]
            ),
            "damping": np.zeros((0, 0)) if basis.damping is None else basis.damping,
            "mass": np.array(inv.mass),
            "first_moment": inv.first_moment,
            "sbar": inv.sbar,
            "th0": inv.th0,
            "n": inv.n,
            "ss": inv.ss,
            "stiffness": inv.stiffness,
            "interfaces": np.array(list(basis.interface_rows), dtype=str),
        }
        for k, rows in enumerate(basis.interface_rows.values()):
            arrays[f"rows{k}"] = rows
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, **arrays)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs the next run the work

    def _load(self, key: str) -> tuple[FeBasis, Invariants] | None:
        path = self._cache_file(key)
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path) as z:
                names = [str(v) for v in z["interfaces"]]
                numbers = z["numbers"]
                damping = z["damping"]
                basis = FeBasis(
                    vectors=z["vectors"],
                    frequencies=z["frequencies"],
                    names=tuple(f"{self.name}.mode{k + 1}" for k in range(z["vectors"].shape[1])),
                    frame=str(z["info"][0]),
                    reduction=str(z["info"][1]),
                    interface_rows={n: z[f"rows{k}"] for k, n in enumerate(names)},
                    component_frequencies=z["component"],
                    requested_modes=int(numbers[0]),
                    modes_below=None if np.isnan(numbers[2]) else float(numbers[2]),
                    boundary=int(numbers[1]),
                    damping=damping if damping.size else None,
                )
                inv = Invariants(
                    mass=float(z["mass"]),
                    first_moment=z["first_moment"],
                    sbar=z["sbar"],
                    th0=z["th0"],
                    n=z["n"],
                    ss=z["ss"],
                    stiffness=z["stiffness"],
                )
        except (OSError, KeyError, ValueError):
            return None
        return basis, inv

    # ------------------------------------------------------ the body as a whole
    @property
    def mass(self) -> float:
        return self.invariants.mass

    @property
    def com(self) -> NDArray[np.float64]:
        return self.invariants.first_moment / self.invariants.mass

    @property
    def inertia_about_origin(self) -> NDArray[np.float64]:
        th0 = self.invariants.th0
        return np.trace(th0) * np.eye(3) - th0

    @property
    def inertia(self) -> NDArray[np.float64]:
        c = self.com
        return self.inertia_about_origin - self.mass * (c @ c * np.eye(3) - np.outer(c, c))

    @property
    def nf(self) -> int:
        return self.basis.nm

    @property
    def nodes(self) -> NDArray[np.float64]:
        return np.asarray(self.data.nodes)

    def coordinate_names(self) -> list[str]:
        """BODY.modeK of each elastic coordinate."""
        return list(self.basis.names)

    def mass_form_error(self) -> float:
        """How far M is from the form the invariants take exactly (0: exact)."""
        return 0.0 if isinstance(self.data, FeModal) else mass_form_error(self.data)

    def node_translation_rows(self, nodes: NDArray[np.int64]) -> NDArray[np.float64]:
        """(3 k, nf): the translations (m, body axes) of `nodes` per unit eta."""
        d = self.data.node_dofs
        idx = (d * np.asarray(nodes, dtype=np.int64)[:, None] + np.arange(3)).ravel()
        return np.asarray(self.basis.vectors[idx])

    def node_rows(self, attachment: int) -> NDArray[np.float64]:
        """(6, nf): what marker attachment `attachment` sits on as linear forms of eta:
        an interface's translation (m) and small rotation (rad), or a node's
        translation (its rotation rows zero)."""
        kind, what = self.attachments[attachment]
        if kind == "interface":
            return np.asarray(self.basis.interface_rows[what])
        rows = np.zeros((6, self.nf))
        rows[:3] = self.node_translation_rows(np.array([what]))
        if self.data.node_dofs == 6:
            d = 6
            rows[3:] = self.basis.vectors[d * what + 3 : d * what + 6]
        return rows

    def attachment_position(self, attachment: int) -> NDArray[np.float64]:
        kind, what = self.attachments[attachment]
        if kind == "node":
            return np.asarray(self.data.nodes[what], dtype=float)
        f: Interface = self.interfaces[what]
        if f.point is not None:
            return np.asarray(f.point, dtype=float)
        x = np.asarray(self.data.nodes)[np.asarray(f.nodes)]
        w = np.ones(len(x)) if f.weights is None else np.asarray(f.weights, dtype=float)
        return np.asarray((w / w.sum()) @ x)

    def add_attachment(self, kind: str, what: Any) -> int:
        key = (kind, what)
        if key not in self.attachments:
            self.attachments.append(key)
        return self.attachments.index(key)

    def marker_on(self, marker: Marker) -> str:
        """What the marker sits on, in words."""
        assert marker.node is not None
        kind, what = self.attachments[marker.node]
        if kind == "interface":
            return f'interface "{what}"'
        return f"node {self.data.labels[what]}"

    def basis_record(self) -> dict[str, dict[str, Any]]:
        """The datasets and attributes of the result file's /modes/<body> group
        (docs/reference/result-file.md): the reduced body's coordinates and natural
        frequencies, the frequencies of the component modes that went in, and what
        the reduction and the floating frame were."""
        b = self.basis
        nm = b.nm
        return {
            "datasets": {
                "coordinates": list(b.names),
                "kinds": ["mode"] * nm,
                "frequencies": b.frequencies,
                "reduced_frequencies": b.frequencies,
                "component_frequencies": b.component_frequencies,
                "descriptions": [f"mode {k + 1} of the reduced body" for k in range(nm)],
                "interfaces": list(b.interface_rows) or [""],
            },
            "attrs": {
                "body_type": "fe",
                "reduction": b.reduction,
                "frame": b.frame,
                "modes": b.requested_modes,
                "boundary_coordinates": b.boundary,
                "data": self.data.source,
                "nodes": len(self.data.nodes),
                "node_dofs": self.data.node_dofs,
                "mass_form_error": self.mass_form_error(),
                **({} if b.modes_below is None else {"modes_below": b.modes_below}),
            },
        }

    def drawing(self) -> tuple[NDArray[np.float64], NDArray[np.float64], list[list[int]]]:
        """(points (k, 3) m body frame, their displacements per unit eta (3 k, nf),
        lines as lists of point indices): the edges of the mesh's outer surface (the
        faces of one tetrahedron only; through the mid-side node of a quadratic
        one), or without cells every node as a point of its own."""
        x = np.asarray(self.data.nodes, dtype=float)
        tets = [c for kind, c in self.data.cells if kind in ("tetra", "tetra10")]
        if not tets:
            nodes = np.arange(len(x))
            return x, self.node_translation_rows(nodes), []
        t = np.vstack(tets)
        faces = np.concatenate([t[:, [0, 1, 2]], t[:, [0, 1, 3]], t[:, [0, 2, 3]], t[:, [1, 2, 3]]])
        key = np.sort(faces, axis=1)
        _, first, count = np.unique(key, axis=0, return_index=True, return_counts=True)
        outer = key[first[count == 1]]
        edges = np.unique(
            np.sort(np.concatenate([outer[:, [0, 1]], outer[:, [1, 2]], outer[:, [0, 2]]]), axis=1),
            axis=0,
        )
        middle: dict[tuple[int, int], int] = {}
        if t.shape[1] == 10:
            pairs = ((0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))
            for s, (a, b) in enumerate(pairs):
                ends = np.sort(t[:, [a, b]], axis=1)
                for (i, j), mid in zip(ends, t[:, 4 + s]):
                    middle[(int(i), int(j))] = int(mid)
        polylines = [
            [int(i), middle[(int(i), int(j))], int(j)]
            if (int(i), int(j)) in middle
            else [int(i), int(j)]
            for i, j in edges
        ]
        used = np.unique(np.concatenate([np.array(p) for p in polylines]))
        where = {int(v): k for k, v in enumerate(used)}
        lines = [[where[v] for v in p] for p in polylines]
        return x[used], self.node_translation_rows(used), lines

    def write_mbdyn(self, path: str | os.PathLike[str]) -> None:
        """Write the reduced body as an MBDyn modal file (SI; all its nodes, their
        rotations zero where the data have none): the basis at the nodes, the modal
        mass (I) and stiffness (diag w^2), the diagonal of the row-sum lumped mass at
        the nodes, the rigid-body inertia, and the damping alpha K + beta M plus the
        modal damping (flexmbs.elements.fe_files.write_mbdyn_fem)."""
        import scipy.sparse as sp

        from ..elements.damping import modal_damping_matrix
        from ..elements.fe_files import write_mbdyn_fem

        d = self.data
        n, nm = len(d.nodes), self.nf
        phi = self.basis.vectors
        shapes = np.zeros((6 * n, nm))
        for a in range(d.node_dofs):
            shapes[a::6] = phi[a :: d.node_dofs]
        inv = self.invariants
        if isinstance(d, FeModal):
            lumped = np.asarray(d.lumped, dtype=float)
        else:
            ms = np.asarray(node_mass_matrix(d).sum(axis=1)).ravel()
            lumped = np.zeros((n, 6))
            lumped[:, :3] = ms[:, None]
            if d.node_dofs == 6:
                lumped[:, 3:] = np.asarray(sp.csr_matrix(d.mass).sum(axis=1)).reshape(n, 6)[:, 3:]
        damping = self.alpha * inv.stiffness + self.beta * inv.mass_matrix()
        if self.modal_damping is not None:
            damping = damping + modal_damping_matrix(
                inv.stiffness, inv.mass_matrix(), self.modal_damping, f'body "{self.name}"'
            )
        if self.basis.damping is not None:
            damping = damping + self.basis.damping
        write_mbdyn_fem(
            path,
            d.nodes,
            d.labels,
            shapes,
            inv.mass_matrix(),
            inv.stiffness,
            lumped,
            damping if np.any(damping) else None,
            (self.mass, self.com, self.inertia),
        )
