"""A linear state-space model x' = A x + B p, y = C x + D p reduced to the modes a
controller is designed for (`Linearization.to_statespace(keep=...)`).

Which poles s of A are kept (`keep`):

    n             the n slowest modes: the 2n poles of least |s| (a mode of the
                  mechanical system is a pair of poles, complex or real), and any pole
                  of the same |s| as the last of them (a complex pair is not split)
    (low, high)   the poles whose natural frequency |s| / 2 pi (Hz) is in the band

Modal separation (the kept and the dropped modes share A's physical states), after a
diagonal similarity that makes A's rows and columns of like size (Parlett and
Reinsch's balancing: the rates of kHz modes and the positions weigh alike): the real
Schur form A = U S U^T ordered with the kept poles
first, S = [[S_11, S_12], [0, S_22]], and the Sylvester equation S_11 X - X S_22 =
-S_12 give the block-diagonal form

    T = U [[I, X], [0, I]],   T^-1 A T = diag(S_11, S_22),   x = T [z_1; z_2],

in which the dropped modes z_2' = S_22 z_2 + B_2 p are uncoupled from the kept ones.
Then (method)

    "residualize"  z_2' = 0: z_2 = -S_22^-1 B_2 p, and D_r = D - C_2 S_22^-1 B_2 (the
                   dropped modes' static response, so that the reduced model's static
                   gain D_r - C_1 S_11^-1 B_1 is the full model's, -C A^-1 B + D;
                   singular perturbation of the modal coordinates). The error is
                   that of the dropped modes' response beyond their static part,
                   of the order of (f / f_dropped)^2 at a frequency f below them.
    "truncate"     z_2 left out: D_r = D.

Modes dropped below a band are truncated with either method: their static response is
no part of the band's (a rigid mode has none that is finite).

The kept block is written in modal coordinates: its rigid poles (|s| at most
RIGID_TOL times the model's largest) as `rigidK`, their Schur vectors (a rigid mode
without damping is a double pole at 0, not diagonalizable); the others in the real
modal form, the eigenvectors v of the rest of S_11 giving a state `modeK` per real
pole and a pair `modeK.re`, `modeK.im` per complex pair sigma +- j omega (the block
[[sigma, omega], [-omega, sigma]]), K counting them in the order of |s|; each vector
scaled to a largest entry of 1 in the full model's states; the Schur vectors `xK`
where the rest is defective too.

"balanced" is python-control's `balred` (method "matchdc", the static gain kept; the
poles at or right of -RIGID_TOL max |s| kept as they are), to as many states as the
modal selection keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import NDArray

from ..errors import ModelError
from .linearize import RIGID_TOL

__all__ = ["REDUCTION_METHODS", "Reduced", "kept_band", "reduce_model", "static_gain"]

REDUCTION_METHODS = ("residualize", "truncate", "balanced")
TIE = 1e-6  # relative: poles this close in |s| to the last kept one are kept with it
DEFECTIVE = 1e8  # condition number of the kept eigenvectors above which S_11 is defective

Array = NDArray[np.float64]


@dataclass
class Reduced:
    """The reduced A, B, C, D, the names of its states and its poles."""

    A: Array
    B: Array
    C: Array
    D: Array
    states: list[str]
    poles: NDArray[Any]


def _check_keep(keep: Any) -> int | tuple[float, float]:
    if isinstance(keep, (bool, np.bool_)):
        raise ModelError(
            f"expected a number of modes or a band (low, high) in Hz, got {keep!r}", "keep"
        )
    if isinstance(keep, (int, np.integer)):
        if keep < 1:
            raise ModelError(f"expected at least one mode, got {keep}", "keep")
        return int(keep)
    try:
        low, high = (float(v) for v in keep)
    except (TypeError, ValueError):
        raise ModelError(
            f"expected a number of modes (int) or a band (low, high) in Hz, got {keep!r}", "keep"
        ) from None
    if not (0.0 <= low < high):
        raise ModelError(f"expected a band 0 <= low < high (Hz), got ({low:g}, {high:g})", "keep")
    return low, high


def kept_band(poles: NDArray[Any], keep: Any) -> tuple[float, float]:
    """(low, high): the band of |s| (rad/s) of the poles `keep` keeps (module text);
    low 0 for a number of modes."""
    keep = _check_keep(keep)
    size = np.abs(poles)
    if isinstance(keep, int):
        order = np.sort(size)
        count = min(2 * keep, len(poles))
        last = order[count - 1]
        # the kept poles with any of the same |s|; the cut in the gap to the next
        rest = order[order > last * (1.0 + TIE)]
        return 0.0, float(
            np.sqrt(last * rest[0])
            if rest.size and last > 0
            else 0.5 * rest[0]
            if rest.size
            else np.inf
        )
    low, high = (2 * np.pi * f for f in keep)
    if not np.any((size >= low) & (size <= high)):
        listed = ", ".join(f"{f:.4g}" for f in np.unique(size / (2 * np.pi)))
        raise ModelError(
            f"no pole in the band ({keep[0]:g}, {keep[1]:g}) Hz; the poles' natural "
            f"frequencies are {listed} Hz",
            "keep",
        )
    return low, high


def _separate(a: Array, first: Callable[[complex], bool]) -> tuple[Array, Array, int]:
    """(T, T^-1, k): T^-1 a T = diag(S_11, S_22), S_11 (k x k) holding the
    eigenvalues s of a for which first(s) holds (module text)."""
    expected = sum(first(s) for s in np.linalg.eigvals(a))
    s, u, k = scipy.linalg.schur(a, output="real", sort=lambda re, im: first(complex(re, im)))
    if k != expected:
        raise ModelError(
            "the kept poles cannot be told from the dropped ones (poles at the edge "
            "of the band): choose another number of modes or band",
            "keep",
        )
    n = len(a)
    x = scipy.linalg.solve_sylvester(s[:k, :k], -s[k:, k:], -s[:k, k:])
    t2 = np.eye(n)
    t2[:k, k:] = x
    t2inv = np.eye(n)
    t2inv[:k, k:] = -x
    return u @ t2, t2inv @ u.T, k


def _scaled(vec: NDArray[Any], basis: Array) -> NDArray[Any]:
    """vec scaled to a largest entry of 1 in the full model's states, basis @ vec."""
    full = basis @ vec
    return vec / full[np.argmax(np.abs(full))]


def _modes(s11: Array, basis: Array) -> tuple[Array, list[str]] | None:
    """(V, names) of the real modal form of s11 (module text); None where s11 is
    defective."""
    k = len(s11)
    w, v = np.linalg.eig(s11)
    if np.linalg.cond(v) > DEFECTIVE:
        return None
    columns, names, mode = [], [], 0
    for j in np.argsort(np.abs(w), kind="stable"):
        if w[j].imag < 0:
            continue
        vec = _scaled(v[:, j], basis)
        mode += 1
        if w[j].imag == 0:
            columns.append(vec.real)
            names.append(f"mode{mode}")
        else:
            columns += [vec.real, vec.imag]
            names += [f"mode{mode}.re", f"mode{mode}.im"]
    if len(columns) != k:  # a pair whose imaginary parts are not mirrored
        return None
    return np.column_stack(columns), names


def _modal_form(s11: Array, basis: Array, rigid: float) -> tuple[Array, list[str]]:
    """(V, names): the coordinates of the kept block, z_1 = V w (module text): the
    poles of |s| up to `rigid` (rad/s) as `rigidK` (their Schur vectors: a rigid mode
    without damping is a double pole at 0, not diagonalizable), the others in the real
    modal form; `basis` the kept block's columns of T (for the scaling); the Schur
    vectors `xK` where the others are defective too."""
    k = len(s11)
    r = int(np.sum(np.abs(np.linalg.eigvals(s11)) <= rigid)) if k else 0
    t, tinv, first = np.eye(k), np.eye(k), r
    if 0 < r < k:
        t, tinv, first = _separate(s11, lambda s: abs(s) <= rigid)
    elastic = (tinv @ s11 @ t)[first:, first:]
    modal = _modes(elastic, basis @ t[:, first:]) if first < k else (np.eye(0), [])
    if modal is None:
        return np.eye(k), [f"x{j + 1}" for j in range(k)]
    v = np.zeros((k, k))
    for j in range(first):
        v[:, j] = _scaled(t[:, j], basis)
    v[:, first:] = t[:, first:] @ modal[0]
    return v, [f"rigid{j + 1}" for j in range(first)] + modal[1]


def reduce_model(
    a: Array, b: Array, c: Array, d: Array, keep: Any, method: str = "residualize"
) -> Reduced:
    """The model (a, b, c, d) reduced to the poles `keep` keeps by `method` (module
    text)."""
    if method not in REDUCTION_METHODS:
        raise ModelError(
            f"expected one of {', '.join(REDUCTION_METHODS)}, got {method!r}", "method"
        )
    poles = np.linalg.eigvals(a)
    low, high = kept_band(poles, keep)
    size = np.abs(poles)
    if method == "balanced":
        return _balanced(a, b, c, d, int(np.sum((size >= low) & (size <= high))), poles)
    d_r = d.copy()
    # a diagonal similarity first, so that the rates of the kHz modes and the
    # positions weigh alike in the Schur form (Parlett and Reinsch's balancing)
    _, (scale, _) = scipy.linalg.matrix_balance(a, permute=False, separate=True)
    a, b, c = a / scale[:, None] * scale, b / scale[:, None], c * scale
    basis = np.diag(scale)
    if np.any(size > high):
        t, tinv, k = _separate(a, lambda s: abs(s) <= high)
        a_s = tinv @ a @ t
        b_s, c_s = tinv @ b, c @ t
        if method == "residualize":
            d_r = d_r - c_s[:, k:] @ np.linalg.solve(a_s[k:, k:], b_s[k:])
        a, b, c = a_s[:k, :k], b_s[:k], c_s[:, :k]
        basis = basis @ t[:, :k]
    if np.any(size < low):
        t, tinv, k = _separate(a, lambda s: abs(s) >= low)
        a, b, c = (tinv @ a @ t)[:k, :k], (tinv @ b)[:k], (c @ t)[:, :k]
        basis = basis @ t[:, :k]
    v, names = _modal_form(a, basis, RIGID_TOL * float(size.max(initial=0.0)))
    vinv = np.linalg.inv(v)
    a_r = vinv @ a @ v
    return Reduced(a_r, vinv @ b, c @ v, d_r, names, np.linalg.eigvals(a_r))


def _balanced(a: Array, b: Array, c: Array, d: Array, order: int, poles: NDArray[Any]) -> Reduced:
    try:
        import control
    except ImportError:
        raise ImportError(
            "method 'balanced' needs python-control: pip install 'flexmbs[control]'"
        ) from None
    alpha = -RIGID_TOL * max(float(np.abs(poles).max(initial=0.0)), 1.0)
    marginal = int(np.sum(poles.real >= alpha))
    if order < marginal:
        raise ModelError(
            f"the balanced reduction keeps the {marginal} rigid or unstable poles as they "
            f"are, more than the {order} poles asked for",
            "keep",
        )
    try:
        r = control.balred(control.ss(a, b, c, d), order, method="matchdc", alpha=alpha)
    except control.ControlSlycot:
        raise ImportError(
            "method 'balanced' needs python-control's balred, which needs "
            "slycot: pip install slycot"
        ) from None
    a_r, b_r, c_r, d_r = (np.asarray(m, dtype=float) for m in (r.A, r.B, r.C, r.D))
    return Reduced(
        a_r, b_r, c_r, d_r, [f"x{j + 1}" for j in range(len(a_r))], np.linalg.eigvals(a_r)
    )


def static_gain(a: Array, b: Array, c: Array, d: Array) -> Array:
    """D - C A^-1 B, the response to a constant input (A regular: no rigid mode)."""
    return d - c @ np.linalg.solve(a, b)
