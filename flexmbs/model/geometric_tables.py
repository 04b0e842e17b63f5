"""The beam elements' geometric-stiffness data for the kernel
`flexmbs.dynamics.geometric` (docs/explanation/formulation.md section 6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import NDArray

from ..elements.beam import element_frame, element_length, element_transformation
from ..elements.geometric import (
    GAUSS_POINTS_GEOMETRIC,
    GEOMETRIC_CODES,
    geometric_shape_matrix,
    slope_rows,
)

if TYPE_CHECKING:
    from ..elements.modal import ModalBasis
    from .fe_body import FeBody
    from .items import BeamBody

__all__ = ["geometric_tables"]


def _element_rows(
    b: BeamBody, na: int, nb: int, free: dict[int, int], basis: ModalBasis | None
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """(cols, R): the elastic coordinates an element of b depends on and its rows over
    them, e = R qf[cols] (12 x nc; element frame; `element_rows` for every column at
    once): T on its nodes' free nodal coordinates, times the mode basis if reduced."""
    t = element_transformation(element_frame(b.nodes[na], b.nodes[nb], b.reference))
    nodal = np.array([free.get(6 * n + d, -1) for n in (na, nb) for d in range(6)])
    keep = nodal >= 0
    if basis is None:
        return nodal[keep].astype(np.int64), t[:, keep]
    full = t[:, keep] @ basis.vectors[nodal[keep]]
    touched = np.flatnonzero(np.any(full != 0.0, axis=0))
    return touched.astype(np.int64), full[:, touched]


def geometric_tables(beams: Sequence[BeamBody | FeBody]) -> dict[str, np.ndarray]:
    """dict of the ModelArrays fields geo_* for the flexible bodies `beams` (a list of
    BeamBody, in the order of the flexible tables): per body its option code and its
    elements' range; per element EA, l, G, the coordinates of qf it depends on
    (geo_col_ptr, geo_col: its nodes' free coordinates, or every modal one), the rows
    R over them (e = R qf[col], row-major 12 x nc), and the slope rows and weights at
    the Gauss points (used by the pointwise
    foreshortening of "huang-foreshortening")."""
    code, ptr = [], [0]
    ea, length, gmat, dv, dw, weight, rows, cols = [], [], [], [], [], [], [], []
    xg, wg = np.polynomial.legendre.leggauss(GAUSS_POINTS_GEOMETRIC)
    for body in beams:
        c = GEOMETRIC_CODES[body.geometric]
        code.append(c)
        if c:  # a beam: finite-element bodies have no geometric stiffness
            b = cast("BeamBody", body)
            basis = b.basis
            free = {int(k): j for j, k in enumerate(b.free)}
            for na, nb in b.connectivity:
                l_e = element_length(b.nodes[na], b.nodes[nb])
                ea.append(b.material.youngs_modulus * b.section.area)
                length.append(l_e)
                gmat.append(geometric_shape_matrix(l_e))
                touched, r = _element_rows(b, na, nb, free, basis)
                cols.append(touched)
                rows.append(r.ravel())
                slopes = [slope_rows(0.5 * (x + 1.0), l_e) for x in xg]
                dv.append([s[0] for s in slopes])
                dw.append([s[1] for s in slopes])
                weight.append(0.5 * l_e * wg)
        ptr.append(len(ea))
    row_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    row_ptr[1:] = np.cumsum([r.size for r in rows])
    col_ptr = np.zeros(len(cols) + 1, dtype=np.int64)
    col_ptr[1:] = np.cumsum([len(c) for c in cols])
    npg = GAUSS_POINTS_GEOMETRIC
    return dict(
        geo_code=np.array(code, dtype=np.int64),
        geo_ptr=np.array(ptr, dtype=np.int64),
        geo_ea=np.array(ea, dtype=float),
        geo_length=np.array(length, dtype=float),
        geo_gmat=np.array(gmat, dtype=float).reshape(-1, 12, 12),
        geo_col_ptr=col_ptr,
        geo_col=np.concatenate(cols).astype(np.int64) if cols else np.zeros(0, dtype=np.int64),
        geo_row_ptr=row_ptr,
        geo_row_data=np.concatenate(rows) if rows else np.zeros(0),
        geo_dv=np.array(dv, dtype=float).reshape(-1, npg, 12),
        geo_dw=np.array(dw, dtype=float).reshape(-1, npg, 12),
        geo_weight=np.array(weight, dtype=float).reshape(-1, npg),
    )
