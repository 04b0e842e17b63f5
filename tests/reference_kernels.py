"""Slow references assembled from the kernels' own building blocks, each the direct way
to compute what a fast kernel computes by a shortcut; the tests hold the fast kernel to
its reference. (tests/reference.py holds the references that share nothing with the
kernels.)

state_derivative_by_columns: y' = [u; du/dt; P; P_a] of a tree, with the partial
velocities at every column (forward_kinematics, O(N^2)), M* = B^T M B (mass_matrix),
Q* (generalized_forces) and a Cholesky solve; the reference of
flexmbs.dynamics.system.state_derivative (composite rigid bodies and the residual).
"""

import numpy as np

from flexmbs.dynamics.system import (
    derivative_from_accelerations,
    generalized_forces,
    mass_matrix,
    split_state,
)
from flexmbs.kinematics.recursive import forward_kinematics
from flexmbs.numerics.linalg import cholesky_solve_in_place
from flexmbs.runtime.config import jit_entry

__all__ = ["state_derivative_by_columns"]


@jit_entry
def state_derivative_by_columns(m, ws, t, y, out):
    """`state_derivative` the direct way, the reference for it: the partial velocities
    at every column (forward_kinematics, O(N^2)), M* = B^T M B (mass_matrix), Q*
    (generalized_forces), Cholesky, then the dynamic rows at du/dt for P."""
    nq = ws.mass.shape[0]
    q, u, _ = split_state(y, nq)
    forward_kinematics(m, ws, t, q, u)
    mass_matrix(m, ws)
    generalized_forces(m, ws, t)
    if not cholesky_solve_in_place(ws.mass, ws.force, ws.accel):
        ws.accel[:] = np.nan
    derivative_from_accelerations(m, ws, t, u, out)
