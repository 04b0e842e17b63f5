"""Linearized equations of motion about a state, in independent physical coordinates
(docs/explanation/formulation.md section 9; Führer and Wallrapp 1984; Bae, Choi and Kim):

    M dy'' + D dy' + K dy = 0

with y independent coordinates chosen among the generalized coordinates q.

Full tangents at the nominal state (q0, u0, t), u0' and lambda0 the nominal
accelerations and multipliers of `M* u' + Phi_q^T lambda = Q*` (Phi_q over the active
rows of the cut joints):

    M_q = M*(q0)                                            (analytic, the kernel)
    D_q = -dQ*/du                                           (central differences)
    K_q = d/dq [M*(q) u0' - Q*(q, u0) + Phi_q(q)^T lambda0]  (central differences)

K_q holds the elastic and geometric stiffness, gravity, springs and the pre-load of
the constraint forces (the last term; it vanishes for trees).

Trees: y = q, and M, D, K are M_q, D_q, K_q.

Closed loops, method "qr" (Führer and Wallrapp 1984): QR with column pivoting of the constraint
Jacobian, Phi_q P = Q_c [R_1 S] (Führer and Wallrapp (12)-(13)), gives its rank r and r dependent
coordinates (the first r pivots); the others are the independent coordinates y, so
that they are physical coordinates. Coordinates the user names are kept independent
(Führer and Wallrapp (8)-(10)): they are left out of the pivoting. Then (Führer and Wallrapp
(16), (17), (21))

    J_y = [I on y;  -R_1^-1 Q_c^T Phi_y on the dependent ones]   (Phi_q J_y = 0)
    [Phi_q; J_y^T] J_z = [I; 0]                                 (active rows)
    M = J_y^T M_q J_y,  D = J_y^T D_q J_y,  K = J_y^T K_q J_y

and the generalized constraint forces f_z = J_z^T (M* u0' - Q*) = -lambda0 with their
change f_z' = J_z^T (M_q J_y dy'' + D_q J_y dy' + K_q J_y dy) (Führer and Wallrapp (23): J_z^T times
Führer and Wallrapp (1); the scanned (23) shows a minus sign, which differences of the multipliers
contradict, tests/test_linearize.py); the forces on the coordinates are
g_z = Phi_q^T f_z (Führer and Wallrapp (24)).

Closed loops, method "perturbation" (Bae, Choi and Kim): the reduced equations
F*(q, q', q'') = N(q)^T (M*(q) q'' - Q*(q, q')), N = [-Phi_d^-1 Phi_i; I] (Bae, Choi and Kim (19)-
(21)), are differentiated with respect to all of q, q', q'' (central differences; N's
own dependence on q gives the pre-load), and the position, velocity and acceleration
constraints, perturbed,

    Phi_q dq = 0
    (Phi_q q')_q dq + Phi_q dq' = 0
    (Phi_q q'' + gamma)_q dq + gamma_q' dq' + Phi_q dq'' = 0

give dq, dq', dq'' in terms of the independent ones (Bae, Choi and Kim (22)); substituted, they
give M, D, K (Bae, Choi and Kim (23)-(24)). At an equilibrium (u0 = 0, u0' = 0) both methods give
the same matrices. Elsewhere the condensation misses the constraints' curvature
(dq'' = J_y dy'' - Phi_d^-1 (Phi_q u0')_q dq, and the velocity coupling): "qr" then
takes M, D, K from the perturbation and says so (`note`); gamma and the constraint
derivatives are nested differences there (relative accuracy about 1e-6), rheonomic
terms (a driver in the loop) included.

Modes: the undamped natural frequencies from K v = w^2 M v (a negative w^2, an
unstable direction, is reported as a negative frequency; one within RIGID_TOL of the
highest, relative, is a rigid mode and reported as 0) and the poles s of
det(M s^2 + D s + K) = 0, with natural frequency |s| / 2 pi, damping ratio
-Re(s) / |s| and damped frequency Im(s) / 2 pi. Mode shapes are given in every
coordinate q (J_y v), scaled to a largest component of 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from ..dynamics import api
from ..dynamics.constrained import (
    RESELECT_RATIO,
    active_rows,
    constrained_accelerations,
    independent_rows,
)
from ..errors import ModelError

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel

__all__ = [
    "Linearization",
    "linearize",
    "full_tangents",
    "independent_coordinates",
    "constraint_force_basis",
    "perturbation_matrices",
    "modal_analysis",
    "nominal_state",
    "undamped_modes",
    "rigid_modes",
    "equilibrium_note",
    "METHODS",
    "FD_STEP",
]

METHODS = ("qr", "perturbation")
# central differences extrapolated (central_differences): error ~ h^4 + eps/h; the
# step of x_i is FD_STEP max(|x_i|, 1)
# (m, rad, m/s, rad/s, or a modal amplitude: a unit of each moves the model by about
# a metre or a radian, where the forces change on that scale)
FD_STEP = np.finfo(float).eps ** (1.0 / 3.0)
NEUTRAL_TOL = 1e-8  # |w^2| below this times its terms' size: 0 (a neutral mode)
RANK_TOLERANCE = 1e-9  # |R_kk| / |R_11| below this: a dependent constraint row
SYMMETRY_TOLERANCE = 1e-6  # relative asymmetry below which M and K count symmetric
AT_REST = 1e-6  # m/s^2, rad/s^2: nominal accelerations below this make an equilibrium
# |frequency| below this times the model's highest: a rigid mode. A rigid mode's w^2
# is difference noise of K, which is of the order of eps / FD_STEP (4e-11) of the
# forces a unit of motion makes; a mode 1e6 times slower than the fastest (w^2 1e-12
# of the largest) cannot be told from one.
RIGID_TOL = 1e-6


@dataclass
class Linearization:
    """The linear model M dy'' + D dy' + K dy = 0 about a state (module docstring).
    Units: y in m and rad; M in kg, kg m, kg m^2; D in N s/m ...; K in N/m, N m/rad.
    Frequencies in Hz."""

    method: str
    t: float
    q: np.ndarray
    u: np.ndarray
    coordinate_names: list[str]
    names: list[str]  # the independent coordinates y
    independent: np.ndarray  # their indices in q
    M: np.ndarray
    D: np.ndarray
    K: np.ndarray
    J_y: np.ndarray  # (nq, ny): dq = J_y dy
    frequencies: np.ndarray  # undamped natural frequencies (Hz), ascending
    shapes: np.ndarray  # (nq, ny) their mode shapes in every coordinate
    poles: np.ndarray  # complex, Im >= 0, by |s|
    max_acceleration: float  # of the nominal state (0 at an equilibrium)
    rows: int = 0  # constraint equations of the cut joints
    rank: int = 0
    row_texts: list[str] = field(default_factory=list)  # the active rows
    J_z: np.ndarray | None = None  # (nq, rank)
    # f_z = -lambda (Führer and Wallrapp (23) at dy = 0)
    constraint_forces: np.ndarray | None = None
    # g_z = Phi_q^T f_z (nq,), Führer and Wallrapp (24)
    coordinate_forces: np.ndarray | None = None
    Fz_M: np.ndarray | None = None  # f_z' = Fz_M dy'' + Fz_D dy' + Fz_K dy
    Fz_D: np.ndarray | None = None
    Fz_K: np.ndarray | None = None
    prescribed: list[str] = field(default_factory=list)  # names the user kept independent
    note: str = ""
    # the currents (A) of the DC motors with an inductance at the operating point, one
    # per actuator (0 for the others): the steady ones unless given
    currents: np.ndarray = field(default_factory=lambda: np.zeros(0))
    compiled: CompiledModel | None = field(default=None, repr=False)  # for to_statespace
    # whether to_statespace warned that the state is not an equilibrium (it does once)
    equilibrium_warned: bool = field(default=False, repr=False, compare=False)

    @property
    def at_equilibrium(self) -> bool:
        return bool(self.max_acceleration <= AT_REST and np.abs(self.u).max(initial=0.0) <= AT_REST)

    @property
    def rigid(self) -> NDArray[np.bool_]:
        """Which undamped modes are rigid (rigid_modes of the frequencies)."""
        return rigid_modes(self.frequencies)

    @property
    def natural_frequencies(self) -> NDArray[np.float64]:
        """|s| / 2 pi of the poles (Hz)."""
        return np.abs(self.poles) / (2 * np.pi)

    @property
    def damping_ratios(self) -> NDArray[np.float64]:
        s = self.poles
        return np.where(np.abs(s) > 0, -s.real / np.where(s == 0, 1, np.abs(s)), 0.0)

    @property
    def damped_frequencies(self) -> NDArray[np.float64]:
        return self.poles.imag / (2 * np.pi)

    def to_statespace(
        self,
        inputs: Sequence[str] | None = None,
        outputs: Sequence[str] | None = None,
        keep: int | tuple[float, float] | None = None,
        method: str = "residualize",
    ) -> Any:
        """The python-control StateSpace of this linear model, the model's input ports
        as its inputs and its sensors as its outputs (flexmbs.analysis.statespace;
        `inputs`, `outputs`: those to keep, by name). Warns (NotEquilibriumWarning,
        once) when the state is not an equilibrium.

        `keep` reduces it (flexmbs.analysis.reduction): an int n keeps the n slowest
        modes (the 2n poles of least magnitude), a pair (low, high) the poles whose
        natural frequency abs(s) / 2 pi is in the band (Hz); `method` "residualize" (default)
        adds the dropped modes' static response to D, so that the static gain is the
        full model's; "truncate" leaves them out; "balanced" is python-control's
        balanced reduction (balred, which needs slycot) to as many states."""
        from .statespace import to_statespace

        if self.compiled is None:
            raise ValueError("a Linearization made by flexmbs.linearize knows its model")
        return to_statespace(self, self.compiled, inputs, outputs, keep, method)

    def asymmetry(self, name: str) -> float:
        """|A - A^T| / |A| (max norms) of "M", "D" or "K"."""
        a = getattr(self, name)
        scale = np.abs(a).max(initial=0.0)
        return float(np.abs(a - a.T).max(initial=0.0) / scale) if scale > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        d = dict(
            method=self.method,
            t=self.t,
            independent=list(self.names),
            prescribed=list(self.prescribed),
            coordinates=list(self.coordinate_names),
            q=self.q.tolist(),
            u=self.u.tolist(),
            max_acceleration=self.max_acceleration,
            M=self.M.tolist(),
            D=self.D.tolist(),
            K=self.K.tolist(),
            J_y=self.J_y.tolist(),
            frequencies_hz=self.frequencies.tolist(),
            rigid=self.rigid.tolist(),
            mode_shapes=self.shapes.tolist(),
            poles=[[float(s.real), float(s.imag)] for s in self.poles],
            natural_frequencies_hz=self.natural_frequencies.tolist(),
            damping_ratios=self.damping_ratios.tolist(),
            damped_frequencies_hz=self.damped_frequencies.tolist(),
            asymmetry={k: self.asymmetry(k) for k in "MDK"},
            constraint_rows=self.rows,
            constraint_rank=self.rank,
            note=self.note,
        )
        if self.J_z is not None:
            # linearize sets them all together with J_z
            assert self.constraint_forces is not None and self.coordinate_forces is not None
            assert self.Fz_M is not None and self.Fz_D is not None and self.Fz_K is not None
            d.update(
                active_rows=list(self.row_texts),
                J_z=self.J_z.tolist(),
                constraint_forces=self.constraint_forces.tolist(),
                coordinate_forces=self.coordinate_forces.tolist(),
                Fz_M=self.Fz_M.tolist(),
                Fz_D=self.Fz_D.tolist(),
                Fz_K=self.Fz_K.tolist(),
            )
        return d


def central_differences(
    fun: Callable[[NDArray[np.float64]], ArrayLike],
    x: NDArray[np.float64],
    steps: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(f(x), df/dx) of shape (len(f), len(x)): central differences D(h) and D(h/2)
    combined by Richardson's extrapolation, (4 D(h/2) - D(h)) / 3, the steps h by
    default FD_STEP max(|x_i|, 1). One central difference is off by h^2 f'''(x) / 6 +
    O(h^4); the extrapolation removes the h^2 term. It matters on beams under the
    consistent geometric stiffness: their elastic forces are cubic in the elastic
    coordinates, with a third derivative that grows with a coordinate's stiffness
    (modal derivatives, 1e10 N/m and more), where one central difference at
    eps^(1/3) puts a first bending mode's stiffness a percent off and leaves
    unsymmetric couplings."""
    f0 = np.asarray(fun(x), dtype=float)
    steps = FD_STEP * np.maximum(np.abs(x), 1.0) if steps is None else steps
    out = np.zeros((f0.size, x.size))

    def difference(k: int, h: float) -> NDArray[np.float64]:
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        return (np.asarray(fun(xp)) - np.asarray(fun(xm))) / (xp[k] - xm[k])

    for k in range(x.size):
        out[:, k] = (4.0 * difference(k, 0.5 * steps[k]) - difference(k, steps[k])) / 3.0
    return f0, out


def nominal_state(
    cm: CompiledModel, q: NDArray[np.float64], u: NDArray[np.float64], t: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.intp]]:
    """(u0', lambda0, rows): the accelerations and multipliers at (q, u, t); rows the
    active constraint rows (empty for a tree)."""
    if len(cm.arrays.con_kind) == 0:
        return api.accelerations(cm, q, u, t), np.zeros(0), np.zeros(0, dtype=int)
    udot, lam = constrained_accelerations(cm, q, u, t)
    return udot, lam, active_rows(cm)


def full_tangents(
    cm: CompiledModel,
    q: NDArray[np.float64],
    u: NDArray[np.float64],
    t: float,
    udot: NDArray[np.float64],
    lam: NDArray[np.float64],
    rows: NDArray[np.intp],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(M_q, D_q, K_q) of the module docstring (nq x nq)."""
    mass = api.mass_matrix(cm, q, t)
    _, d = central_differences(lambda x: -api.generalized_forces(cm, q, x, t), u)

    def dynamic(x: NDArray[np.float64]) -> NDArray[np.float64]:
        f = api.mass_matrix(cm, x, t) @ udot - api.generalized_forces(cm, x, u, t)
        if len(rows):
            f = f + api.constraint_values(cm, x, u, t)[2][rows].T @ lam
        return f

    _, k = central_differences(dynamic, q)
    return mass, d, k


def independent_coordinates(
    jac: NDArray[np.float64],
    prescribed: Sequence[int] | NDArray[np.integer[Any]] = (),
    tolerance: float = RANK_TOLERANCE,
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], int]:
    """(independent, dependent, J_y, rank) by QR with column pivoting of the
    constraint Jacobian jac (rows, nq) (Führer and Wallrapp (12)-(16)): `independent` the prescribed
    coordinates (indices) first, then those the pivoting leaves; J_y (nq, ny) with
    identity rows at them, so that jac J_y = 0. ModelError when the prescribed
    coordinates cannot all be independent (their columns and the constraints'
    dependent ones are not independent, Führer and Wallrapp section 2)."""
    nq = jac.shape[1]
    prescribed = np.asarray(prescribed, dtype=int)
    candidates = np.setdiff1d(np.arange(nq), prescribed)
    if jac.shape[0] == 0:
        return (
            np.concatenate([prescribed, candidates]),
            np.zeros(0, int),
            np.eye(nq)[:, np.concatenate([prescribed, candidates])],
            0,
        )
    _, r_all, _ = scipy.linalg.qr(jac.T, pivoting=True, mode="economic")
    diag = np.abs(np.diag(r_all))
    rank = int(np.sum(diag > tolerance * diag[0])) if diag.size and diag[0] > 0 else 0
    qc, r, piv = scipy.linalg.qr(jac[:, candidates], pivoting=True)
    rdiag = np.abs(np.diag(r))
    if rank and (len(rdiag) < rank or rdiag[rank - 1] <= tolerance * diag[0]):
        raise ModelError(
            "the coordinates asked to stay independent are themselves "
            "constrained: with them fixed the loops leave no coordinates "
            "to close them (choose others)",
            "--independent",
        )
    dependent = candidates[piv[:rank]]
    independent = np.concatenate([prescribed, candidates[piv[rank:]]])
    j_y = np.zeros((nq, len(independent)))
    j_y[independent, np.arange(len(independent))] = 1.0
    if rank:
        rhs = qc[:, :rank].T @ jac[:, independent]
        j_y[dependent] = -scipy.linalg.solve_triangular(r[:rank, :rank], rhs)
    return independent, dependent, j_y, rank


def constraint_force_basis(
    jac: NDArray[np.float64], j_y: NDArray[np.float64]
) -> NDArray[np.floating[Any]]:
    """J_z (nq, rows) from [jac; J_y^T] J_z = [I; 0] (Führer and Wallrapp (17)), jac of full
    rank."""
    a = np.vstack([jac, j_y.T])
    rhs = np.vstack([np.eye(len(jac)), np.zeros((j_y.shape[1], len(jac)))])
    return np.linalg.solve(a, rhs)


def _null_basis(
    jac: NDArray[np.float64], independent: NDArray[np.intp], dependent: NDArray[np.intp]
) -> NDArray[np.float64]:
    """N (nq, ni) = [-Phi_d^-1 Phi_i; I] (Bae, Choi and Kim (20)) over full-rank rows."""
    n = np.zeros((jac.shape[1], len(independent)))
    n[independent, np.arange(len(independent))] = 1.0
    if len(dependent):
        n[dependent] = -np.linalg.solve(jac[:, dependent], jac[:, independent])
    return n


def perturbation_matrices(
    cm: CompiledModel,
    q: NDArray[np.float64],
    u: NDArray[np.float64],
    t: float,
    udot: NDArray[np.float64],
    rows: NDArray[np.intp],
    independent: NDArray[np.intp],
    dependent: NDArray[np.intp],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(M, D, K) by the perturbation of Bae, Choi and Kim (module docstring)."""
    nq = cm.nq

    def reduced(
        x: NDArray[np.float64], xd: NDArray[np.float64], xdd: NDArray[np.float64]
    ) -> NDArray[np.float64]:
        jac = api.constraint_values(cm, x, xd, t)[2][rows]
        n = _null_basis(jac, independent, dependent)
        return n.T @ (api.mass_matrix(cm, x, t) @ xdd - api.generalized_forces(cm, x, xd, t))

    _, f_q = central_differences(lambda x: reduced(x, u, udot), q)
    _, f_u = central_differences(lambda x: reduced(q, x, udot), u)
    jac = api.constraint_values(cm, q, u, t)[2][rows]
    f_a = _null_basis(jac, independent, dependent).T @ api.mass_matrix(cm, q, t)

    def velocity(x: NDArray[np.float64], xd: NDArray[np.float64]) -> NDArray[np.float64]:
        return api.constraint_values(cm, x, xd, t)[1][rows]

    def acceleration(x: NDArray[np.float64], xd: NDArray[np.float64]) -> NDArray[np.float64]:
        """Phi_q(x) u0' + gamma(x, xd): d/dt of the velocity residual along the
        motion."""
        h = 1e-5 / (1.0 + np.abs(xd).max(initial=0.0))
        gamma = (
            api.constraint_values(cm, x + h * xd, xd, t + h)[1][rows]
            - api.constraint_values(cm, x - h * xd, xd, t - h)[1][rows]
        ) / (2 * h)
        return api.constraint_values(cm, x, xd, t)[2][rows] @ udot + gamma

    _, v_q = central_differences(lambda x: velocity(x, u), q)
    _, a_q = central_differences(lambda x: acceleration(x, u), q)
    _, a_u = central_differences(lambda x: acceleration(q, x), u)
    r, ni = len(rows), len(independent)
    z = np.zeros((r, nq))
    e = np.zeros((ni, nq))
    e[np.arange(ni), independent] = 1.0
    zi = np.zeros((ni, nq))
    big = np.block(
        [[jac, z, z], [v_q, jac, z], [a_q, a_u, jac], [e, zi, zi], [zi, e, zi], [zi, zi, e]]
    )
    rhs = np.zeros((3 * nq, 3 * ni))
    rhs[3 * r :, :] = np.eye(3 * ni)
    t_map = np.linalg.solve(big, rhs)
    total = np.hstack([f_q, f_u, f_a]) @ t_map
    return total[:, 2 * ni :], total[:, ni : 2 * ni], total[:, :ni]


def rigid_modes(frequencies: ArrayLike) -> NDArray[np.bool_]:
    """Which of the frequencies (Hz, or rad/s, or the magnitudes of poles) are those
    of rigid modes: abs(f) at most RIGID_TOL times the largest abs(f), the model's
    scale (a tolerance relative to it, since K's difference noise scales with the
    forces)."""
    f = np.abs(np.asarray(frequencies)).astype(float)
    return np.asarray(f <= RIGID_TOL * f.max(initial=0.0))


def equilibrium_note(lin: Linearization) -> str:
    """ "" at an equilibrium; else what `flexmbs linearize` reports and
    Linearization.to_statespace warns of: the largest nominal acceleration and speed,
    and that the matrices hold at this instant only."""
    if lin.at_equilibrium:
        return ""
    return (
        f"NOT an equilibrium (accelerations up to {lin.max_acceleration:.3g}, speeds "
        f"up to {np.abs(lin.u).max(initial=0.0):.3g}): the matrices hold at this "
        "instant only"
    )


def _asymmetry(a: NDArray[np.float64]) -> float:
    s = np.abs(a).max(initial=0.0)
    return np.abs(a - a.T).max(initial=0.0) / s if s > 0 else 0.0


def undamped_modes(
    m: NDArray[np.float64], k: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], bool]:
    """(w^2 ascending (1/s^2), shapes (n, n), symmetric) of K v = w^2 M v. M and K are
    symmetrised when their asymmetry is below SYMMETRY_TOLERANCE (difference noise);
    a w^2 within NEUTRAL_TOL of the size of the terms that make it up,
    |v|^T |K| |v| / v^T M v, or whose frequency is rigid by the model's scale
    (rigid_modes), is a neutral mode's difference noise and set to 0."""
    symmetric = bool(_asymmetry(m) <= SYMMETRY_TOLERANCE and _asymmetry(k) <= SYMMETRY_TOLERANCE)
    if len(m) == 0:
        return np.zeros(0), np.zeros((0, 0)), symmetric
    if symmetric:
        w2, v = scipy.linalg.eigh(0.5 * (k + k.T), 0.5 * (m + m.T))
    else:
        w2, v = scipy.linalg.eig(k, m)
        order = np.argsort(w2.real)
        w2, v = w2.real[order], v[:, order].real
    for j in range(len(w2)):
        y = np.abs(v[:, j])
        scale = (y @ np.abs(k) @ y) / max(abs(v[:, j] @ m @ v[:, j]), 1e-300)
        if abs(w2[j]) <= NEUTRAL_TOL * scale:
            w2[j] = 0.0
    w2[rigid_modes(np.sqrt(np.abs(w2)))] = 0.0
    return w2, v, symmetric


def modal_analysis(
    m: NDArray[np.float64], d: NDArray[np.float64], k: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.complex128]]:
    """(frequencies (Hz), shapes (ny, ny), poles): module docstring."""
    n = len(m)
    if n == 0:
        return np.zeros(0), np.zeros((0, 0)), np.zeros(0, complex)
    w2, v, _ = undamped_modes(m, k)
    freq = np.sign(w2) * np.sqrt(np.abs(w2)) / (2 * np.pi)
    a = np.block([[np.zeros((n, n)), np.eye(n)], [-k, -d]])
    b = np.block([[np.eye(n), np.zeros((n, n))], [np.zeros((n, n)), m]])
    s = scipy.linalg.eigvals(a, b)
    s = s[np.isfinite(s)]
    scale = max(np.abs(s).max(initial=0.0), 1.0)
    s = s[s.imag >= -1e-12 * scale]
    s = np.where(np.abs(s.imag) <= 1e-12 * scale, s.real + 0j, s)
    s[rigid_modes(s)] = 0.0
    return freq, v, s[np.argsort(np.abs(s))]


def _normalise(shapes: NDArray[np.float64]) -> NDArray[np.float64]:
    out = shapes.copy()
    for j in range(out.shape[1]):
        big = out[np.argmax(np.abs(out[:, j])), j]
        if big != 0:
            out[:, j] /= big
    return out


def _choose_rows(cm: CompiledModel, q: NDArray[np.float64], t: float) -> None:
    """Keep the active constraint rows if they are well conditioned at q, else choose
    the rows afresh (cm.arrays.con_active), as the integration does when a linkage
    folds (flexmbs.dynamics.constrained.reselect_rows)."""
    m = cm.arrays
    if len(m.con_kind) == 0:
        return
    jac = api.constraint_values(cm, q, None, t)[2]
    full = np.linalg.svd(jac, compute_uv=False)
    rank = int(np.sum(full > RANK_TOLERANCE * full[0])) if full.size and full[0] > 0 else 0
    active = np.flatnonzero(m.con_active >= 0)
    if (
        len(active) == rank
        and rank
        and np.linalg.svd(jac[active], compute_uv=False)[-1] >= RESELECT_RATIO * full[rank - 1]
    ):
        return
    rows = independent_rows(jac, rank)
    m.con_active[:] = -1
    m.con_active[rows] = np.arange(rank)


def linearize(
    cm: CompiledModel,
    q: ArrayLike | None = None,
    u: ArrayLike | None = None,
    t: float = 0.0,
    method: str = "qr",
    independent: Sequence[str] = (),
    currents: ArrayLike | None = None,
) -> Linearization:
    """The Linearization of the compiled model about (q, u, t) (default: its initial
    state; make it consistent first for a model with loops, flexmbs.dynamics.
    constrained.make_consistent; the active rows are chosen afresh when they are ill
    conditioned at q, cm.arrays.con_active). `independent`:
    coordinate names to keep among the independent coordinates (closed loops).
    `currents`: of the DC motors with an inductance (A, one per actuator), default
    their steady values at (q, u, t), where di/dt = 0."""
    if getattr(cm, "ncontacts", 0):
        raise ModelError(
            "linearization of a model with rolling contacts (velocity "
            "constraints) is not available: the condensation and the "
            "perturbation here assume holonomic constraints",
            "contacts",
        )
    if method not in METHODS:
        raise ModelError(f"expected one of {', '.join(METHODS)}, got {method!r}", "--method")
    q = np.array(cm.q0 if q is None else q, dtype=float)
    u = np.array(cm.u0 if u is None else u, dtype=float)
    names = list(cm.coordinate_names)
    where = {name: k for k, name in enumerate(names)}
    for name in independent:
        if name not in where:
            raise ModelError(
                f"no coordinate {name!r}; the coordinates are {', '.join(names)}", "--independent"
            )
    if len(set(independent)) != len(independent):
        raise ModelError(f"a coordinate is named twice: {', '.join(independent)}", "--independent")
    prescribed = [where[name] for name in independent]
    held = cm.operating_currents.copy()
    cm.operating_currents[:] = (
        steady_currents(cm, q, u, t) if currents is None else np.asarray(currents, dtype=float)
    )
    try:
        lin = _linearize(cm, q, u, t, method, independent, prescribed)
    finally:
        lin_currents = cm.operating_currents.copy()
        cm.operating_currents[:] = held
    lin.currents = lin_currents
    lin.compiled = cm
    return lin


def steady_currents(
    cm: CompiledModel, q: NDArray[np.float64], u: NDArray[np.float64], t: float
) -> NDArray[np.float64]:
    """The currents (A, one per actuator, 0 but for the DC motors with an inductance)
    at which L di/dt = V - R i - k_e n x' vanishes at (q, u, t): the rate at i = 0
    times L / R (flexmbs.dynamics.motors)."""
    m = cm.arrays
    out = np.zeros(cm.nactuators)
    held = cm.operating_currents.copy()
    cm.operating_currents[:] = 0.0
    try:
        rates = api.state_rates(cm, q, u, t)
    finally:
        cm.operating_currents[:] = held
    first = 2 * cm.nq + 1 + cm.nactuators
    for a in range(cm.nactuators):
        if m.act_electric[a] >= 0 and m.act_inductance[a] > 0:
            rate = rates[first + m.act_electric[a] + 2]
            out[a] = rate * m.act_inductance[a] / m.act_resistance[a]
    return out


def _linearize(
    cm: CompiledModel,
    q: NDArray[np.float64],
    u: NDArray[np.float64],
    t: float,
    method: str,
    independent: Sequence[str],
    prescribed: list[int],
) -> Linearization:
    """linearize's work, the operating currents set."""
    names = list(cm.coordinate_names)
    _choose_rows(cm, q, t)
    udot, lam, rows = nominal_state(cm, q, u, t)
    mass, damping, stiffness = full_tangents(cm, q, u, t, udot, lam, rows)
    nrows = len(cm.arrays.con_kind)
    if nrows:
        _, _, jac_all, _ = api.constraint_values(cm, q, u, t)
        jac = jac_all[rows]
    else:
        jac_all = jac = np.zeros((0, cm.nq))
    indep, dep, j_y, rank = independent_coordinates(jac_all, prescribed)
    if nrows and rank != len(rows):
        raise ModelError(
            f"the constraint Jacobian has rank {rank} here but {len(rows)} "
            "rows are active (make the state consistent first)",
            "state",
        )
    moving = np.abs(udot).max(initial=0.0) > AT_REST or np.abs(u).max(initial=0.0) > AT_REST
    if nrows and (method == "perturbation" or moving):
        m_r, d_r, k_r = perturbation_matrices(cm, q, u, t, udot, rows, indep, dep)
    else:
        m_r, d_r, k_r = (j_y.T @ a @ j_y for a in (mass, damping, stiffness))
    freq, v, poles = modal_analysis(m_r, d_r, k_r)
    lin = Linearization(
        method=method,
        t=float(t),
        q=q,
        u=u,
        coordinate_names=names,
        names=[names[k] for k in indep],
        independent=indep,
        M=m_r,
        D=d_r,
        K=k_r,
        J_y=j_y,
        frequencies=freq,
        shapes=_normalise(j_y @ v),
        poles=poles,
        max_acceleration=float(np.abs(udot).max(initial=0.0)),
        rows=nrows,
        rank=rank,
        prescribed=list(independent),
    )
    if nrows and method == "qr" and moving:
        lin.note = (
            "not at an equilibrium: M, D, K by the perturbation of Bae, Choi and "
            "Kim (the condensation of Führer and Wallrapp 1984 misses the "
            "curvature of the constraints there); J_y, J_z and the constraint "
            "forces by Führer and Wallrapp"
        )
    if nrows:
        j_z = constraint_force_basis(jac, j_y)
        force = api.generalized_forces(cm, q, u, t)
        lin.J_z = j_z
        lin.row_texts = [cm.constraint_texts[k] for k in rows]
        lin.constraint_forces = j_z.T @ (mass @ udot - force)
        lin.coordinate_forces = jac.T @ lin.constraint_forces
        lin.Fz_M = j_z.T @ mass @ j_y
        lin.Fz_D = j_z.T @ damping @ j_y
        lin.Fz_K = j_z.T @ stiffness @ j_y
    return lin
