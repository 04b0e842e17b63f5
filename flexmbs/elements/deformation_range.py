"""Whether the elastic deformation of the beams stays in the small-deformation range of
the floating-frame beam.

The elastic coordinates of a beam are small displacements and rotations of its nodes
relative to its floating frame (docs/explanation/formulation.md sections 2-3): the
element's kinematics are linear in them, and the rotations are small angles. Outside
that range a run still closes its energy balance but no longer describes the beam. The
limits, on the largest nodal value over the run:

    |(u, v, w)| <= DEFLECTION_LIMIT * L      (L the length of the beam's centre line)
    |(tx, ty, tz)| <= ROTATION_LIMIT rad     (a linearised rotation of 0.1 rad misplaces
                                              points by 0.5 % of their distance)

For a reduced beam the nodal values are Phi eta.
"""

from dataclasses import dataclass

import numpy as np

from .invariants import NODE_DOFS

__all__ = ["DEFLECTION_LIMIT", "ROTATION_LIMIT", "BeamExtent", "DeformationWatch",
           "beam_extents"]

DOFS = ("u", "v", "w", "tx", "ty", "tz")  # of a node, in NODE_DOFS order
DEFLECTION_LIMIT = 0.1   # of the beam's length
ROTATION_LIMIT = 0.1     # rad


@dataclass
class BeamExtent:
    """The columns of q that hold one beam's elastic coordinates and how to turn them
    into nodal displacements and rotations."""
    name: str
    length: float                 # m, of the centre line
    columns: np.ndarray           # (nc,) indices into q
    to_nodal: np.ndarray | None   # (nfree, nc) Phi of a reduced beam; None: nodal
    translation: np.ndarray       # (nfree,) bool: u, v, w rows (else tx, ty, tz)
    node: np.ndarray              # (nfree,) node of each free nodal coordinate


def beam_extents(cm):
    """A BeamExtent per beam body of a compiled model."""
    names = {n: k for k, n in enumerate(cm.coordinate_names)}
    out = []
    for _, beam in cm.beams:
        if not hasattr(beam, "free"):  # a finite-element body: no beam's range
            continue
        free = np.asarray(beam.free)
        if beam.basis is not None:
            columns = np.array([names[n] for n in beam.basis.names])
            to_nodal = np.asarray(beam.basis.vectors)
        else:
            columns = np.array([names[f"{beam.name}.n{k // NODE_DOFS}.{DOFS[k % NODE_DOFS]}"]
                                for k in free])
            to_nodal = None
        points = np.asarray(beam.points, dtype=float)
        length = float(np.linalg.norm(np.diff(points, axis=0), axis=1).sum())
        out.append(BeamExtent(beam.name, length, columns, to_nodal,
                              free % NODE_DOFS < 3, free // NODE_DOFS))
    return out


class DeformationWatch:
    """The largest nodal displacement (relative to the beam's length) and rotation of
    each beam over the run, from batches of states."""

    def __init__(self, cm):
        self.beams = beam_extents(cm)
        self.worst = {b.name: [0.0, 0.0, 0.0, 0.0] for b in self.beams}  # d/L, t, rot, t
        # per beam: (to nodal translations, to nodal rotations, their node sums)
        self._maps = []
        for b in self.beams:
            to_nodal = np.eye(len(b.columns)) if b.to_nodal is None else b.to_nodal
            self._maps.append((to_nodal[b.translation].T, to_nodal[~b.translation].T,
                               _node_sums(b.node[b.translation]),
                               _node_sums(b.node[~b.translation])))

    def update(self, t, y):
        """Take the rows y (k, n) of the state at the times t (k,)."""
        for b, (to_t, to_r, sum_t, sum_r) in zip(self.beams, self._maps):
            x = y[:, b.columns]
            w = self.worst[b.name]
            d = np.sqrt((x @ to_t) ** 2 @ sum_t) / b.length
            r = np.sqrt((x @ to_r) ** 2 @ sum_r)
            if d.size and d.max() > w[0]:
                k = int(np.argmax(d.max(axis=1)))
                w[0], w[1] = float(d[k].max()), float(t[k])
            if r.size and r.max() > w[2]:
                k = int(np.argmax(r.max(axis=1)))
                w[2], w[3] = float(r[k].max()), float(t[k])

    def report(self):
        """Text for the beams that left the small-deformation range, or ''."""
        out = []
        for name, (d, td, r, tr) in self.worst.items():
            parts = []
            if d > DEFLECTION_LIMIT:
                parts.append(f"a node moved {d:.3g} of its length at t = {td:.6g} s "
                             f"(limit {DEFLECTION_LIMIT:g})")
            if r > ROTATION_LIMIT:
                parts.append(f"a node turned {r:.3g} rad at t = {tr:.6g} s "
                             f"(limit {ROTATION_LIMIT:g} rad)")
            if parts:
                out.append(f'beam "{name}": ' + " and ".join(parts))
        if not out:
            return ""
        return ("outside the small-deformation range of the floating-frame beam, so its "
                "results do not describe the beam (a stiffer beam, or the beam split into "
                "several bodies, each with its own floating frame): " + "; ".join(out))


def _node_sums(nodes):
    """(len(nodes), nnodes) ones that sum the rows of each node (nodes: the node of
    each free nodal coordinate): squares times it are the squared norms per node."""
    unique, which = np.unique(nodes, return_inverse=True)
    sums = np.zeros((len(nodes), len(unique)))
    sums[np.arange(len(nodes)), which] = 1.0
    return sums
