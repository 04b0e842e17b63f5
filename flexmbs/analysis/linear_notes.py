"""What a linearization's readers are told beside its matrices: which of its modes are
rigid, judged against the model's own scale, and whether it was taken about an
equilibrium. Below flexmbs.analysis.linearize, statespace and reduction, which all
read them."""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["RIGID_TOL", "rigid_modes", "equilibrium_note"]

# |frequency| below this times the model's highest: a rigid mode. A rigid mode's w^2
# is difference noise of K, which is of the order of eps / FD_STEP (4e-11) of the
# forces a unit of motion makes; a mode 1e6 times slower than the fastest (w^2 1e-12
# of the largest) cannot be told from one.
RIGID_TOL = 1e-6


class _Linearized(Protocol):
    """What equilibrium_note reads of a Linearization."""

    @property
    def at_equilibrium(self) -> bool: ...

    max_acceleration: float
    u: NDArray[np.float64]


def rigid_modes(frequencies: ArrayLike) -> NDArray[np.bool_]:
    """Which of the frequencies (Hz, or rad/s, or the magnitudes of poles) are those
    of rigid modes: abs(f) at most RIGID_TOL times the largest abs(f), the model's
    scale (a tolerance relative to it, since K's difference noise scales with the
    forces)."""
    f = np.abs(np.asarray(frequencies)).astype(float)
    return np.asarray(f <= RIGID_TOL * f.max(initial=0.0))


def equilibrium_note(lin: _Linearized) -> str:
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
