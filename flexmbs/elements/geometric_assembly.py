"""A beam's elements assembled for its geometric stiffness (docs/explanation/
formulation.md section 6; flexmbs.elements.geometric gives one element): the consistent
geometric force, its tangent stiffness and its second-order derivative over the free
nodal coordinates x (m, rad, body axes), from each element's 12 x 12 blocks placed by
index (the element's coordinates e = R x_e, R its transformation to the element frame).
"""

import numpy as np

from .beam import element_frame, element_length, element_transformation
from .geometric import axial_row, geometric_shape_matrix

__all__ = ["BeamGeometry", "DENSE_LIMIT"]

DENSE_LIMIT = 200  # free nodal coordinates up to which the tangent is a dense matrix


class BeamGeometry:
    """A beam's elements for the consistent geometric force, stacked: per element the
    places of its 12 coordinates among the beam's free nodal ones (`place`, n where
    held), the transformation R (12, 12) to element coordinates (e = R x_e, `turn`),
    G (12, 12) 1/m, a (12,) 1/m, EA (N) and l (m)."""

    def __init__(self, beam):
        n = len(beam.free)
        where = {int(k): j for j, k in enumerate(beam.free)}
        places, turns, gs, rows, lengths = [], [], [], [], []
        for a, b in beam.connectivity:
            places.append([where.get(6 * node + d, n) for node in (a, b) for d in range(6)])
            frame = element_frame(beam.nodes[a], beam.nodes[b], beam.reference)
            turns.append(element_transformation(frame))
            length = element_length(beam.nodes[a], beam.nodes[b])
            gs.append(geometric_shape_matrix(length))
            rows.append(axial_row(length))
            lengths.append(length)
        self.n = n
        self.place = np.array(places, dtype=np.int64)
        self.turn = np.array(turns)
        self.g = np.array(gs)
        self.a = np.array(rows)
        self.length = np.array(lengths)
        self.ea = np.full(len(lengths), beam.section.area * beam.material.youngs_modulus)
        ne = len(lengths)
        self._rows = np.broadcast_to(self.place[:, :, None], (ne, 12, 12)).ravel()
        self._cols = np.broadcast_to(self.place[:, None, :], (ne, 12, 12)).ravel()

    def force_and_tangent(self, x):
        """g(x) (n,) and its Jacobian (n, n; a scipy.sparse CSR matrix above
        DENSE_LIMIT coordinates): the gradient and Hessian of sum_e U3 + U4bar
        (flexmbs.elements.geometric.geometric_stiffness), assembled from the elements'
        12 x 12 blocks."""
        import scipy.sparse

        padded = np.append(x, 0.0)
        d = np.einsum("eij,ej->ei", self.turn, padded[self.place])
        gd = np.einsum("ejk,ek->ej", self.g, d)
        s = np.einsum("ej,ej->e", d, gd)
        up = np.einsum("ej,ej->e", self.a, d)
        ea, length = self.ea, self.length
        f = (ea * up)[:, None] * gd + (0.5 * ea * s)[:, None] * self.a \
            + (ea * s / (2.0 * length))[:, None] * gd
        k = ((ea * up + ea * s / (2.0 * length))[:, None, None] * self.g
             + ea[:, None, None] * (np.einsum("ej,ek->ejk", gd, self.a)
                                    + np.einsum("ej,ek->ejk", self.a, gd))
             + (ea / length)[:, None, None] * np.einsum("ej,ek->ejk", gd, gd))
        size = self.n + 1
        force = np.bincount(self.place.ravel(), np.einsum("eji,ej->ei", self.turn, f).ravel(),
                            minlength=size)
        blocks = np.transpose(self.turn, (0, 2, 1)) @ k @ self.turn  # R^T k R per element
        if self.n <= DENSE_LIMIT:
            dense = np.bincount(self._rows * size + self._cols, blocks.ravel(),
                                minlength=size * size).reshape(size, size)
            return force[: self.n], dense[: self.n, : self.n]
        tangent = scipy.sparse.coo_matrix(
            (blocks.ravel(), (self._rows, self._cols)), shape=(self.n + 1, self.n + 1)
        ).tocsr()[: self.n, : self.n]
        return force[: self.n], tangent


    def second_order(self, x1, x2):
        """B(x1, x2) (n,), N and N m: the symmetric bilinear derivative of the
        consistent geometric stiffness, d/ds [K_t(s x2) x1] at s = 0, per element

            B_e(d1, d2) = EA [(a . d2) G d1 + (a . d1) G d2 + (d1^T G d2) a],

        summed over the elements (d = R x_e)."""
        d1 = np.einsum("eij,ej->ei", self.turn, np.append(x1, 0.0)[self.place])
        d2 = np.einsum("eij,ej->ei", self.turn, np.append(x2, 0.0)[self.place])
        g1 = np.einsum("ejk,ek->ej", self.g, d1)
        g2 = np.einsum("ejk,ek->ej", self.g, d2)
        a1 = np.einsum("ej,ej->e", self.a, d1)
        a2 = np.einsum("ej,ej->e", self.a, d2)
        b = self.ea[:, None] * (a2[:, None] * g1 + a1[:, None] * g2
                                + np.einsum("ej,ej->e", d1, g2)[:, None] * self.a)
        out = np.bincount(self.place.ravel(), np.einsum("eji,ej->ei", self.turn, b).ravel(),
                          minlength=self.n + 1)
        return out[: self.n]
