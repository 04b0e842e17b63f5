"""The flexible bodies' invariants as the kernels take them (ModelArrays.flex_* and
block_*; flexmbs.dynamics.flexible_body).

The layout, for a body type that plugs in through its invariants (a beam, nodal or
reduced, or any body given by mass, first moment, Sbar, Th0, N and the blocks of SS,
K_ff and D):

    flex_mass (F,), flex_first (F, 3), flex_th0 (F, 3, 3)   m, int rho u0, Th0
    flex_sbar, flex_ninv                                     Sbar (3, nf), N (3, 3, nf),
                                                             body k's at flex_ptr[k, 0]
                                                             and flex_ptr[k, 1]
    flex_block_ptr (F+1,)                                    body k's blocks
    block_dof_ptr (NB+1,), block_dof                         block b's coordinates
                                                             (indices into the body's qf)
    block_ss_ptr, block_ss                                   its part of SS, as (nb, nb,
                                                             3, 3): SS[a, b][i, j] at
                                                             [i, j, a, b]
    block_m_ptr, block_m                                     of M_ff (nb, nb)
    block_k_ptr, block_k                                     of K_ff (nb, nb)
    block_d_ptr, block_d                                     of D (nb, nb)

A block without a part has an empty range there. A nodal beam has one block per
element (its nodes' free coordinates) and per point mass; a reduced beam, and any
body whose invariants are dense (`flexmbs.elements.Invariants`), one block on all its
coordinates; modal damping of a nodal beam adds a block of D on all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..elements.damping import modal_damping_matrix
from .fe_body import FeBody

if TYPE_CHECKING:
    from ..elements.invariants import BlockInvariants, Invariants
    from .arrays import ModelArrays
    from .items import BeamBody

__all__ = ["invariant_tables", "body_kernel_blocks", "body_block_matrix"]


def _body_blocks(
    b: BeamBody | FeBody,
) -> list[
    tuple[
        NDArray[np.int64],
        NDArray[np.float64] | None,
        NDArray[np.float64] | None,
        NDArray[np.float64] | None,
    ]
]:
    """(dofs, ss, K, D) of each block of flexible body b (None: no part), D = alpha K +
    beta M_ff per block, and the modal damping (and a finite-element body's modal file's
    own damping) as a block of its own on all its coordinates."""
    inv = b.invariants
    out: list[
        tuple[
            NDArray[np.int64],
            NDArray[np.float64] | None,
            NDArray[np.float64] | None,
            NDArray[np.float64] | None,
        ]
    ] = []
    for block in inv.blocks:
        mff = block.ss[0, 0] + block.ss[1, 1] + block.ss[2, 2]
        d = b.alpha * block.stiffness + b.beta * mff
        out.append((block.dofs, block.ss, block.stiffness, d if np.any(d) else None))
    extra = np.zeros((b.nf, b.nf))
    if b.modal_damping is not None:
        extra += modal_damping_matrix(
            inv.stiffness, inv.mass_matrix(), b.modal_damping, f'body "{b.name}"'
        )
    if isinstance(b, FeBody) and b.basis.damping is not None:  # its modal file's own
        extra += b.basis.damping
    if np.any(extra):
        out.append((np.arange(b.nf, dtype=np.int64), None, None, extra))
    return out


def _symmetric(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """a's upper triangle mirrored: exactly symmetric (a is, to round-off)."""
    return np.triu(a) + np.triu(a, 1).T


def _block_tables(
    bodies: Sequence[
        Sequence[
            tuple[
                NDArray[np.int64],
                NDArray[np.float64] | None,
                NDArray[np.float64] | None,
                NDArray[np.float64] | None,
            ]
        ]
    ],
) -> dict[str, np.ndarray]:
    """flex_block_ptr ... block_d of the module text for each body's blocks (dofs, ss,
    K, D), SS as (3, 3, nb, nb) there."""
    f64, i64 = np.float64, np.int64
    block_ptr = [0]
    dof_ptr, dofs = [0], []
    parts: dict[str, tuple[list[int], list[np.ndarray]]] = {
        name: ([0], []) for name in ("ss", "m", "k", "d")
    }
    for blocks in bodies:
        for dof, ss_b, k_b, d_b in blocks:
            dofs.append(np.asarray(dof, dtype=i64))
            dof_ptr.append(dof_ptr[-1] + len(dof))
            m_b = None if ss_b is None else _symmetric(ss_b[0, 0] + ss_b[1, 1] + ss_b[2, 2])
            ss_t = None if ss_b is None else ss_b.transpose(2, 3, 0, 1)
            for name, part in (("ss", ss_t), ("m", m_b), ("k", k_b), ("d", d_b)):
                at, data = parts[name]
                if part is not None:
                    data.append(np.ascontiguousarray(part, dtype=f64).ravel())
                at.append(at[-1] + (0 if part is None else part.size))
        block_ptr.append(len(dofs))

    def flat(chunks: list[np.ndarray], dtype: type = f64) -> np.ndarray:
        return np.concatenate(chunks).astype(dtype) if chunks else np.zeros(0, dtype=dtype)

    out = {
        "flex_block_ptr": np.array(block_ptr, dtype=i64),
        "block_dof_ptr": np.array(dof_ptr, dtype=i64),
        "block_dof": flat(dofs, i64),
    }
    for name, (at, data) in parts.items():
        out[f"block_{name}_ptr"] = np.array(at, dtype=i64)
        out[f"block_{name}"] = flat(data)
    return out


def invariant_tables(beams: Sequence[BeamBody | FeBody]) -> dict[str, np.ndarray]:
    """dict of the ModelArrays fields flex_mass ... block_d (module text) for the
    flexible bodies `beams`, in the order of the flexible tables."""
    f64, i64 = np.float64, np.int64
    ptr = [np.zeros(2, dtype=i64)]
    sbar, ninv = [], []
    for b in beams:
        inv = b.invariants
        ptr.append(ptr[-1] + np.array([3 * b.nf, 9 * b.nf]))
        sbar.append(inv.sbar.ravel())
        ninv.append(inv.n.ravel())
    return dict(
        flex_mass=np.array([b.invariants.mass for b in beams], dtype=f64).reshape(-1),
        flex_first=np.array([b.invariants.first_moment for b in beams], dtype=f64).reshape(-1, 3),
        flex_th0=np.array([b.invariants.th0 for b in beams], dtype=f64).reshape(-1, 3, 3),
        flex_ptr=np.array(ptr, dtype=i64),
        flex_sbar=np.concatenate(sbar) if sbar else np.zeros(0),
        flex_ninv=np.concatenate(ninv) if ninv else np.zeros(0),
        **_block_tables([_body_blocks(b) for b in beams]),
    )


BlockSet = tuple[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def body_kernel_blocks(invariants: Invariants | BlockInvariants) -> dict[str, BlockSet]:
    """The block sets the kernels of flexmbs.dynamics.flexible_body take ("ss", "m",
    "k": SS, M_ff, K_ff) for one body's invariants (no damping), in the layout of the
    module text: for calling those kernels outside a compiled model (tests, analysis)."""
    blocks = [(b.dofs, b.ss, b.stiffness, None) for b in invariants.blocks]
    t = _block_tables([blocks])
    n = len(blocks)
    return {
        name: (0, n, t["block_dof_ptr"], t["block_dof"], t[f"block_{name}_ptr"], t[f"block_{name}"])
        for name in ("ss", "m", "k")
    }


def body_block_matrix(arrays: ModelArrays, k: int, part: str) -> NDArray[np.float64]:
    """The dense matrix (nf, nf) of flexible body k that its blocks sum to: part "k"
    (K_ff), "d" (D) or "m" (M_ff = SS[0][0] + SS[1][1] + SS[2][2]); for analysis and
    tests."""
    nf = int(arrays.flex_nf[k])
    out = np.zeros((nf, nf))
    ptr = {"k": arrays.block_k_ptr, "d": arrays.block_d_ptr, "m": arrays.block_m_ptr}[part]
    data = {"k": arrays.block_k, "d": arrays.block_d, "m": arrays.block_m}[part]
    for b in range(arrays.flex_block_ptr[k], arrays.flex_block_ptr[k + 1]):
        dof = arrays.block_dof[arrays.block_dof_ptr[b] : arrays.block_dof_ptr[b + 1]]
        values = data[ptr[b] : ptr[b + 1]]
        if not values.size:
            continue
        nb = len(dof)
        out[np.ix_(dof, dof)] += values.reshape(nb, nb)
    return out
