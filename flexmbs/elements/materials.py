"""Linear elastic, isotropic (or beam-wise orthotropic) material of a beam.

Units: E and G in Pa, rho in kg/m^3. G is given directly, or through Poisson's
ratio nu as G = E / (2 (1 + nu)).
"""

import math
import numbers
from dataclasses import dataclass

from ..errors import ModelError
from .sections import _positive

__all__ = ["Material", "material"]

POISSON_MIN, POISSON_MAX = -1.0, 0.5  # stable isotropic solid: -1 < nu <= 1/2


@dataclass(frozen=True)
class Material:
    """youngs_modulus : E (Pa). shear_modulus : G (Pa). density : rho (kg/m^3)."""
    youngs_modulus: float
    shear_modulus: float
    density: float


def material(youngs_modulus, density, shear_modulus=None, poisson_ratio=None, item=None):
    """A Material from E (Pa), rho (kg/m^3) and exactly one of G (Pa) or nu.

    G = E / (2 (1 + nu)) when nu is given, with -1 < nu <= 0.5. A G given directly is
    not checked against E (a beam may be orthotropic, e.g. a composite with a low G).
    """
    e = _positive(youngs_modulus, item, "youngs_modulus")
    rho = _positive(density, item, "density")
    if (shear_modulus is None) == (poisson_ratio is None):
        raise ModelError("expected exactly one of shear_modulus or poisson_ratio, got "
                         + ("both" if shear_modulus is not None else "neither"),
                         item, "shear_modulus")
    if shear_modulus is not None:
        g = _positive(shear_modulus, item, "shear_modulus")
    else:
        nu = poisson_ratio
        ok = not isinstance(nu, bool) and isinstance(nu, numbers.Real) and math.isfinite(nu)
        if not ok or not POISSON_MIN < nu <= POISSON_MAX:
            raise ModelError(f"expected a number in ({POISSON_MIN}, {POISSON_MAX}], "
                             f"got {nu!r}", item, "poisson_ratio")
        g = e / (2.0 * (1.0 + float(nu)))
    return Material(youngs_modulus=e, shear_modulus=g, density=rho)
