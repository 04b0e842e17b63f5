"""A beam that starts ringing in its own modes: `initial = {mode = 1, amplitude = A,
rate = R}` (or a list of such tables) on a beam body, or on a finite-element body
(its mode k: the reduced body's k-th elastic mode, scaled alike; fe_mode_state).

Mode k is the beam's k-th elastic mode alone under its reference conditions
(flexmbs.elements.modal.body_modes: K_ff phi = w^2 M phi, its rigid-body motions
left out), scaled so that its largest node translation is 1 m and positive: the
beam starts at qf = sum A_k phi_k and moving at qf' = sum R_k phi_k (A in m, R in
m/s: the largest deflection of that mode and its rate). A reduced beam takes the
projection Phi^T M qf onto its basis.

With geometric stiffness a bent beam also shortens (its axial strain u' + (v'^2 +
w'^2) / 2 holds the bend's foreshortening), so the axial coordinates (the nodes'
u of a nodal beam, the static correction and modal derivative coordinates of a
reduced one) are solved for zero elastic force, K qf + Q_geometric(qf) = 0 on those
rows, by Newton's method; their rates are the derivative of that solution along
qf'. Without that start the beam's axial rows hold the whole stiffness times the
foreshortening, far from equilibrium.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from .field_checks import _scalar
from .items import BeamBody

if TYPE_CHECKING:
    from .arrays import ModelArrays

__all__ = [
    "parse_mode_start",
    "mode_elastic_state",
    "fe_mode_state",
    "MODE_START_FIELDS",
    "MODE_START",
]

MODE_START = "modes"
"""The beam's `initial` name while its start is given in modes (`initial_modes`)."""

MODE_START_FIELDS = ("mode", "amplitude", "rate")
AXIAL_ITERATIONS = 30
AXIAL_TOLERANCE = 1e-12  # of the elastic force scale


def parse_mode_start(initial: object, item: str) -> tuple[tuple[int, float, float], ...] | None:
    """((mode, amplitude, rate), ...) from a table or a list of tables; None when
    `initial` is neither."""
    tables = [initial] if isinstance(initial, Mapping) else initial
    if not isinstance(tables, (list, tuple)) or not tables:
        return None
    if not all(isinstance(t, Mapping) for t in tables):
        return None
    out = []
    for k, t in enumerate(tables):
        at = "initial" if isinstance(initial, Mapping) else f"initial[{k}]"
        for key in t:
            if key not in MODE_START_FIELDS:
                raise ModelError(
                    f'unknown field "{key}"; allowed fields: {", ".join(MODE_START_FIELDS)}',
                    item,
                    f"{at}.{key}",
                )
        mode = t.get("mode")
        if isinstance(mode, bool) or not isinstance(mode, (int, np.integer)) or mode < 1:
            raise ModelError(
                f"expected the number of an elastic mode (1 the lowest), got {mode!r}",
                item,
                f"{at}.mode",
            )
        out.append(
            (
                int(mode),
                _scalar(t.get("amplitude", 0.0), item, f"{at}.amplitude"),
                _scalar(t.get("rate", 0.0), item, f"{at}.rate"),
            )
        )
    return tuple(out)


def mode_shape(beam: BeamBody, mode: int) -> NDArray[np.float64]:
    """The k-th elastic mode of `beam` alone (nodal free coordinates), its largest
    node translation 1 (m) and positive."""
    from ..elements.modal import body_modes

    modes = body_modes(beam)
    elastic = np.flatnonzero(~modes.rigid)
    if mode > len(elastic):
        raise ModelError(
            f"the beam has {len(elastic)} elastic modes, not {mode}",
            f'body "{beam.name}"',
            "initial",
        )
    phi = modes.vectors[:, elastic[mode - 1]]
    nodes = len(beam.nodes)
    where = {int(k): j for j, k in enumerate(beam.free)}
    translations = np.array(
        [
            phi[where[6 * n + d]] if 6 * n + d in where else 0.0
            for n in range(nodes)
            for d in range(3)
        ]
    )
    k = int(np.argmax(np.abs(translations)))
    return phi / translations[k]


def fe_mode_state(
    body: Any, starts: tuple[tuple[int, float, float], ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(eta, eta') of a finite-element body started in its modes: the reduced body's
    modes are its basis vectors (Phi^T K Phi diagonal, Phi^T M Phi = I), its elastic
    ones (above 0 Hz) in order of frequency; mode k's eta is scaled so that its largest
    node translation is 1 m and positive (module text)."""
    basis = body.basis
    phi = np.asarray(basis.vectors, dtype=float)
    per = phi.shape[0] // len(body.data.nodes)
    elastic = [int(j) for j in np.argsort(basis.frequencies) if basis.frequencies[j] > 0.0]
    eta, rate = np.zeros(phi.shape[1]), np.zeros(phi.shape[1])
    for mode, amplitude, speed in starts:
        if mode > len(elastic):
            raise ModelError(
                f"the reduced body has {len(elastic)} elastic modes, not {mode}",
                f'body "{body.name}"',
                "initial",
            )
        j = elastic[mode - 1]
        translations = np.concatenate([phi[a::per, j] for a in range(3)])
        top = translations[int(np.argmax(np.abs(translations)))]
        eta[j] += amplitude / top
        rate[j] += speed / top
    return eta, rate


def _axial_rows(beam: BeamBody) -> NDArray[np.int64]:
    """The elastic coordinates that carry the bend's foreshortening: the nodes' u
    (nodal), or the correction and derivative coordinates (reduced)."""
    if beam.basis is None:
        return np.array([j for j, k in enumerate(beam.free) if k % 6 == 0], dtype=np.int64)
    return np.array(
        [j for j, kind in enumerate(beam.basis.kinds) if kind != "mode"], dtype=np.int64
    )


def _axial_solution(
    a: ModelArrays,
    k: int,
    stiffness: NDArray[np.float64],
    rows: NDArray[np.int64],
    q: NDArray[np.float64],
) -> NDArray[np.float64]:
    """q with its `rows` solved for K q + Q_geometric(q) = 0 on them (flexible body
    k of the arrays a), by Newton's method on the tangent -K (the geometric part of
    the axial rows' tangent is of the order of the bend's slope squared)."""
    from ..dynamics.geometric import geometric_elastic_forces

    scratch = np.zeros((16, 12))
    q = q.copy()
    scale = max(float(np.abs(stiffness @ q).max()), 1e-300)
    tangent = -stiffness[np.ix_(rows, rows)]
    for _ in range(AXIAL_ITERATIONS):
        f = -(stiffness @ q)
        geometric_elastic_forces(
            a.geo_code[k],
            a.geo_ptr[k],
            a.geo_ptr[k + 1],
            a.geo_ea,
            a.geo_length,
            a.geo_gmat,
            a.geo_col_ptr,
            a.geo_col,
            a.geo_row_ptr,
            a.geo_row_data,
            a.geo_dv,
            a.geo_dw,
            a.geo_weight,
            np.ascontiguousarray(q),
            f,
            scratch,
        )
        r = f[rows]
        if np.abs(r).max() <= AXIAL_TOLERANCE * scale:
            break
        q[rows] -= np.linalg.solve(tangent, r)
    return q


def mode_elastic_state(cm: Any) -> None:
    """cm.q0 and cm.u0 at the elastic coordinates of the beams that start in their
    modes (module text)."""
    from ..elements.modal import body_mass_matrix

    m = cast("ModelArrays", cm.arrays)
    for k, (_, beam) in enumerate(cm.beams):
        starts = getattr(beam, "initial_modes", None)
        if starts and not isinstance(beam, BeamBody):
            q0, nf = int(m.flex_q[k]), int(m.flex_nf[k])
            cm.q0[q0 : q0 + nf], cm.u0[q0 : q0 + nf] = fe_mode_state(beam, starts)
            continue
        if not starts or not isinstance(beam, BeamBody):
            continue
        x = np.zeros(len(beam.free))
        xd = np.zeros(len(beam.free))
        for mode, amplitude, rate in starts:
            phi = mode_shape(beam, mode)
            x += amplitude * phi
            xd += rate * phi
        if beam.basis is not None:
            project = beam.basis.vectors.T @ body_mass_matrix(beam)
            x, xd = project @ x, project @ xd
        q0 = int(m.flex_q[k])
        nf = int(m.flex_nf[k])
        stiffness = beam.invariants.stiffness
        rows = _axial_rows(beam)
        if m.geo_code[k] != 0 and len(rows):
            x = _axial_solution(m, k, stiffness, rows, x)
            if np.any(xd):  # the axial rates: the solution's derivative along xd
                h = 1e-6 * max(float(np.abs(x).max()), 1e-12) / float(np.abs(xd).max())
                ahead = _axial_solution(m, k, stiffness, rows, x + h * xd)
                behind = _axial_solution(m, k, stiffness, rows, x - h * xd)
                xd[rows] = (ahead[rows] - behind[rows]) / (2 * h)
        cm.q0[q0 : q0 + nf] = x
        cm.u0[q0 : q0 + nf] = xd
