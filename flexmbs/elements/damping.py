"""Modal damping of a beam body: a damping ratio per natural mode of the body under
its reference conditions, as a damping matrix in its elastic coordinates.

With K psi_i = w_i^2 M psi_i, psi_i^T M psi_j = delta_ij (the body's own modes, of its
elastic coordinates: nodal, or the reduced ones of a modal basis),

    D = M Psi diag(2 zeta_i w_i) Psi^T M,

so that each mode i alone decays as exp(-zeta_i w_i t) (Psi^T D Psi = diag(2 zeta_i
w_i)). The ratios are given per mode in order of frequency, as one number for every
mode, or by the frequency-band rule of the commercial codes (`"bands"`, BAND_RULE: 1 %
below 100 Hz, 10 % below 1 kHz, critical above). It adds to the Rayleigh damping
alpha K + beta M and enters the energy balance with it (work of the damping forces).
"""

import numpy as np

from ..errors import ModelError

__all__ = ["BAND_RULE", "modal_damping_ratios", "modal_damping_matrix"]

BAND_RULE = ((100.0, 0.01), (1000.0, 0.1), (np.inf, 1.0))
"""(upper frequency in Hz, damping ratio) of each band, in increasing order."""


def modal_damping_ratios(frequencies, spec, item=None, fld="modal_damping"):
    """Damping ratio of each mode (frequencies in Hz, increasing): `spec` is a number
    (every mode), a list with one ratio per mode, or "bands" (BAND_RULE)."""
    n = len(frequencies)
    if isinstance(spec, str):
        if spec != "bands":
            raise ModelError(f'expected "bands", a number or a list of numbers, got '
                             f"{spec!r}", item, fld)
        return np.array([next(z for top, z in BAND_RULE if f < top)
                         for f in frequencies])
    ratios = np.atleast_1d(np.asarray(spec, dtype=float))
    if ratios.ndim != 1 or not np.all(np.isfinite(ratios)) or np.any(ratios < 0):
        raise ModelError(f"expected damping ratios >= 0, got {spec!r}", item, fld)
    if ratios.size == 1:
        return np.full(n, float(ratios[0]))
    if ratios.size != n:
        raise ModelError(f"expected one damping ratio per mode of the body ({n}), got "
                         f"{ratios.size}", item, fld)
    return ratios


def modal_damping_matrix(stiffness, mass, spec, item=None):
    """D (nf, nf) of the module text for the body's stiffness K and mass M (nf, nf)
    of its elastic coordinates, and the ratios `spec` (modal_damping_ratios)."""
    import scipy.linalg  # here, not at the top: a rigid model does without it

    w2, psi = scipy.linalg.eigh(stiffness, mass)
    w = np.sqrt(np.clip(w2, 0.0, None))
    zeta = modal_damping_ratios(w / (2 * np.pi), spec, item)
    mp = mass @ psi
    d = (mp * (2.0 * zeta * w)) @ mp.T
    return 0.5 * (d + d.T)
