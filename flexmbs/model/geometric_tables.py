"""The beam elements' geometric-stiffness data for the kernel
`flexmbs.dynamics.geometric` (docs/explanation/formulation.md section 6)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from ..elements.beam import element_length
from ..elements.geometric import (
    GAUSS_POINTS_GEOMETRIC,
    GEOMETRIC_CODES,
    geometric_shape_matrix,
    slope_rows,
)
from .sensor_tables import element_rows

if TYPE_CHECKING:
    from .fe_body import FeBody
    from .items import BeamBody

__all__ = ["geometric_tables"]


def geometric_tables(beams: Sequence[BeamBody | FeBody]) -> dict[str, np.ndarray]:
    """dict of the ModelArrays fields geo_* for the flexible bodies `beams` (a list of
    BeamBody, in the order of the flexible tables): per body its option code and its
    elements' range; per element EA, l, G, the rows R (e = R qf, row-major 12 x nf),
    and the slope rows and weights at the Gauss points (used by the pointwise
    foreshortening of "huang-foreshortening")."""
    code, ptr = [], [0]
    ea, length, gmat, dv, dw, weight, rows = [], [], [], [], [], [], []
    xg, wg = np.polynomial.legendre.leggauss(GAUSS_POINTS_GEOMETRIC)
    for body in beams:
        c = GEOMETRIC_CODES[body.geometric]
        code.append(c)
        if c:  # a beam: finite-element bodies have no geometric stiffness
            b = cast("BeamBody", body)
            for e, (na, nb) in enumerate(b.connectivity):
                l_e = element_length(b.nodes[na], b.nodes[nb])
                ea.append(b.material.youngs_modulus * b.section.area)
                length.append(l_e)
                gmat.append(geometric_shape_matrix(l_e))
                rows.append(element_rows(b, e, np.eye(12)).ravel())
                slopes = [slope_rows(0.5 * (x + 1.0), l_e) for x in xg]
                dv.append([s[0] for s in slopes])
                dw.append([s[1] for s in slopes])
                weight.append(0.5 * l_e * wg)
        ptr.append(len(ea))
    row_ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    row_ptr[1:] = np.cumsum([r.size for r in rows])
    npg = GAUSS_POINTS_GEOMETRIC
    return dict(
        geo_code=np.array(code, dtype=np.int64),
        geo_ptr=np.array(ptr, dtype=np.int64),
        geo_ea=np.array(ea, dtype=float),
        geo_length=np.array(length, dtype=float),
        geo_gmat=np.array(gmat, dtype=float).reshape(-1, 12, 12),
        geo_row_ptr=row_ptr,
        geo_row_data=np.concatenate(rows) if rows else np.zeros(0),
        geo_dv=np.array(dv, dtype=float).reshape(-1, npg, 12),
        geo_dw=np.array(dw, dtype=float).reshape(-1, npg, 12),
        geo_weight=np.array(weight, dtype=float).reshape(-1, npg),
    )
