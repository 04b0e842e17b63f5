"""The bordered band layout of a tree's speeds (ModelArrays.lin_pos, lin_dims): the
order in which the iteration matrix of the integrators and the mass matrix M* are
stored and factored when they use their structure (flexmbs.solvers.bordered_band).

In joint coordinates M*, the beams' stiffness K_ff and damping D, and with them the
iteration matrix cj M* + D + K / cj on the elastic columns, couple two elastic
coordinates of a beam only when one element (or point mass) holds both: nodal
coordinates numbered node by node give a band. The joint coordinates couple with
everything, and so do the elastic coordinates that move the frame of a body (the
nodes that carry a joint of another body, or a rotary inertia): they, the works, and
every coordinate of a body whose coupling is not banded (a reduced beam: its few modal
coordinates couple all with all) form the border. The interior unknowns, the rest,
come first, body by body in the order of q; the border after them. Then

    [[G_II  G_IB]      G_II banded (half-bandwidth kd), G_IB, G_BI dense and thin,
     [G_BI  G_BB]]     G_BB dense and small,

and eliminating the interior first (a Schur complement on the border) fills nothing
in. lin_pos[r] is the position of unknown r (the speeds u in q's order, then the works
W_nc and W_a), lin_dims = [ni, nb, kd]: the interior count, the border count and the
half-bandwidth of G_II.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

__all__ = ["bordered_band_layout", "BAND_FRACTION"]

BAND_FRACTION = 4
"""A body's elastic coordinates are banded when their half-bandwidth is at most 1 /
BAND_FRACTION of their number; otherwise they join the border (a reduced beam, a beam
with modal damping, a beam of two or three elements)."""


def bordered_band_layout(
    nq: int,
    nworks: int,
    flex_q: NDArray[np.int64],
    flex_nf: NDArray[np.int64],
    frame_col: NDArray[np.int64],
    col_qindex: NDArray[np.int64],
    tables: Mapping[str, np.ndarray],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(lin_pos (nq + nworks,), lin_dims (3,)) of the module text for a tree with nq
    coordinates, nworks works, flexible bodies at flex_q (their nf elastic coordinates
    from there), the frame columns of every body (frame_col, columns; col_qindex their
    q indices, -1 prescribed), and the block and geometric tables (`tables`: block_*,
    flex_block_ptr, geo_ptr, geo_col_ptr, geo_col)."""
    framed = {int(col_qindex[c]) for c in frame_col if col_qindex[c] >= 0}
    interior: list[int] = []
    kd = 0
    for k, (q0, nf) in enumerate(zip(flex_q, flex_nf)):
        own = [q for q in range(q0, q0 + nf) if q not in framed]
        local = {q - q0: i for i, q in enumerate(own)}
        spread = 0
        sets = []
        for b in range(tables["flex_block_ptr"][k], tables["flex_block_ptr"][k + 1]):
            sets.append(
                tables["block_dof"][tables["block_dof_ptr"][b] : tables["block_dof_ptr"][b + 1]]
            )
        for e in range(tables["geo_ptr"][k], tables["geo_ptr"][k + 1]):
            sets.append(tables["geo_col"][tables["geo_col_ptr"][e] : tables["geo_col_ptr"][e + 1]])
        for dofs in sets:
            at = [local[int(d)] for d in dofs if int(d) in local]
            if at:
                spread = max(spread, max(at) - min(at))
        if own and spread * BAND_FRACTION <= len(own):
            interior += own
            kd = max(kd, spread)
    ni = len(interior)
    pos = np.empty(nq + nworks, dtype=np.int64)
    pos[interior] = np.arange(ni)
    is_interior = np.zeros(nq + nworks, dtype=bool)
    is_interior[interior] = True
    border = np.flatnonzero(~is_interior)
    pos[border] = ni + np.arange(len(border))
    return pos, np.array([ni, len(border), kd if ni else 0], dtype=np.int64)
