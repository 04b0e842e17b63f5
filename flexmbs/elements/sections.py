"""Cross-section properties of a beam (docs/explanation/formulation.md section 3).

The section lies in the element's y-z plane, y and z its principal axes through the
centroid:

    A   = int dA          (m^2)
    I_y = int z^2 dA      (m^4), bending in the x-z plane (w, ty = -w')
    I_z = int y^2 dA      (m^4), bending in the x-y plane (v, tz = v')
    J   = Saint-Venant torsion constant (m^4), torsion stiffness G J

and `int y dA = int z dA = int y z dA = 0`. The rotary inertia of the mass integrals
uses I_y + I_z (the polar moment); torsion stiffness uses J, and J <= I_y + I_z with
equality only for circles and round tubes.
"""

import math
from dataclasses import dataclass

from ..errors import ModelError

__all__ = [
    "Section", "rectangle_section", "circle_section", "round_tube_section",
    "rectangular_tube_section", "general_section", "rectangle_torsion_constant",
]

ZETA_5 = 1.0369277551433699263  # Riemann zeta(5)
RECTANGLE_SERIES_TERMS = 20  # odd n <= 39; 1 - tanh(n x) < 2 exp(-41 pi) beyond
TORSION_BOUND_SLACK = 1e-3  # J may exceed I_y + I_z by this fraction (rounded input)


def _positive(value, item, fld):
    """`value` as a float, or ModelError if it is not a finite number > 0."""
    if isinstance(value, bool):
        raise ModelError(f"expected a positive number, got {value!r}", item, fld)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"expected a positive number, got {value!r}", item, fld) from None
    if not (math.isfinite(v) and v > 0):
        raise ModelError(f"expected a positive finite number, got {value!r}", item, fld)
    return v


@dataclass(frozen=True)
class Section:
    """Properties of a beam cross-section in its principal axes (SI units).

    area : A = int dA (m^2).
    i_y : I_y = int z^2 dA (m^4), stiffness E I_y of bending in the x-z plane.
    i_z : I_z = int y^2 dA (m^4), stiffness E I_z of bending in the x-y plane.
    torsion_constant : Saint-Venant J (m^4), torsion stiffness G J.
    kind : how it was given ("rectangle", "circle", "round tube", "rectangular tube",
        "general").
    max_y, max_z : largest |y| and |z| on the section (m), the outer fibres for surface
        strains; None when not known (a general section given without them).
    """
    area: float
    i_y: float
    i_z: float
    torsion_constant: float
    kind: str = "general"
    max_y: float | None = None
    max_z: float | None = None

    @property
    def polar_moment(self):
        """I_y + I_z = int (y^2 + z^2) dA (m^4), used by the rotary inertia."""
        return self.i_y + self.i_z


def rectangle_torsion_constant(a, b):
    """Saint-Venant torsion constant (m^4) of a solid a x b rectangle.

    Timoshenko and Goodier, Theory of Elasticity, section 109: with a >= b,

        J = a b^3 / 3 [1 - (192 / pi^5) (b / a) sum_{n odd} tanh(n pi a / (2 b)) / n^5]

    This is the exact series solution of the Prandtl stress function, not an
    approximation: the sum is evaluated as (31/32) zeta(5) minus the exponentially
    small sum of (1 - tanh(n pi a / 2 b)) / n^5, so J is correct to round-off
    (relative error ~1e-16). A square of side s gives J = 0.140577 s^4.
    """
    a, b = max(a, b), min(a, b)
    x = math.pi * a / (2.0 * b)
    deficit = 0.0
    for k in range(RECTANGLE_SERIES_TERMS):
        n = 2 * k + 1
        decay = math.exp(-2.0 * n * x)
        deficit += 2.0 * decay / (1.0 + decay) / n**5  # (1 - tanh(n x)) / n^5
    odd_sum = 31.0 / 32.0 * ZETA_5 - deficit
    return a * b**3 / 3.0 * (1.0 - 192.0 / math.pi**5 * (b / a) * odd_sum)


def rectangle_section(width, height, item=None):
    """Solid rectangle, `width` b along section y and `height` h along z (m).

    A = b h, I_y = b h^3 / 12, I_z = h b^3 / 12, J by the exact Saint-Venant series
    (`rectangle_torsion_constant`).
    """
    b = _positive(width, item, "width")
    h = _positive(height, item, "height")
    return Section(area=b * h, i_y=b * h**3 / 12.0, i_z=h * b**3 / 12.0,
                   torsion_constant=rectangle_torsion_constant(b, h), kind="rectangle",
                   max_y=b / 2.0, max_z=h / 2.0)


def circle_section(diameter, item=None):
    """Solid circle of `diameter` d (m): A = pi d^2 / 4, I_y = I_z = pi d^4 / 64,
    J = pi d^4 / 32 (exact)."""
    d = _positive(diameter, item, "diameter")
    i = math.pi * d**4 / 64.0
    return Section(area=math.pi * d**2 / 4.0, i_y=i, i_z=i, torsion_constant=2.0 * i,
                   kind="circle", max_y=d / 2.0, max_z=d / 2.0)


def round_tube_section(outer_diameter, wall_thickness, item=None):
    """Round tube, `outer_diameter` D and `wall_thickness` t < D / 2 (m).

    With d = D - 2 t: A = pi (D^2 - d^2) / 4, I_y = I_z = pi (D^4 - d^4) / 64,
    J = pi (D^4 - d^4) / 32 (exact Saint-Venant value for a circular annulus).
    """
    dd = _positive(outer_diameter, item, "outer_diameter")
    t = _positive(wall_thickness, item, "wall_thickness")
    if not t < dd / 2.0:
        raise ModelError(f"expected a wall thickness below half the outer diameter "
                         f"({dd / 2.0!r} m), got {t!r} m (use circle_section for a "
                         "solid bar)", item, "wall_thickness")
    d = dd - 2.0 * t
    i = math.pi * (dd**4 - d**4) / 64.0
    return Section(area=math.pi * (dd**2 - d**2) / 4.0, i_y=i, i_z=i,
                   torsion_constant=2.0 * i, kind="round tube",
                   max_y=dd / 2.0, max_z=dd / 2.0)


def rectangular_tube_section(width, height, wall_thickness, item=None):
    """Rectangular tube, outer `width` b along y, outer `height` h along z, uniform
    `wall_thickness` t < min(b, h) / 2 (m).

    A = b h - (b - 2t)(h - 2t), I_y = [b h^3 - (b - 2t)(h - 2t)^3] / 12,
    I_z = [h b^3 - (h - 2t)(b - 2t)^3] / 12 (exact), and Bredt's thin-walled torsion
    constant J = 4 A_m^2 t / s with the mid-line area A_m = (b - t)(h - t) and
    perimeter s = 2 (b - t + h - t). Bredt's J is exact as t / b -> 0; its error grows
    like t / b (a few per cent at t / b = 0.1, the Huang tube's 1.6 / 12.7 gives
    J = 2.188e-9 m^4 as docs/explanation/benchmark-models.md).
    """
    b = _positive(width, item, "width")
    h = _positive(height, item, "height")
    t = _positive(wall_thickness, item, "wall_thickness")
    if not t < min(b, h) / 2.0:
        raise ModelError(f"expected a wall thickness below half the smaller outer size "
                         f"({min(b, h) / 2.0!r} m), got {t!r} m (use rectangle_section "
                         "for a solid bar)", item, "wall_thickness")
    bi, hi = b - 2.0 * t, h - 2.0 * t
    mid_area = (b - t) * (h - t)
    mid_perimeter = 2.0 * ((b - t) + (h - t))
    return Section(area=b * h - bi * hi,
                   i_y=(b * h**3 - bi * hi**3) / 12.0,
                   i_z=(h * b**3 - hi * bi**3) / 12.0,
                   torsion_constant=4.0 * mid_area**2 * t / mid_perimeter,
                   kind="rectangular tube", max_y=b / 2.0, max_z=h / 2.0)


def general_section(area, i_y, i_z, torsion_constant, max_y=None, max_z=None, item=None):
    """A section given by its properties: A (m^2), I_y = int z^2 dA, I_z = int y^2 dA
    (m^4, principal axes through the centroid), Saint-Venant J (m^4), and optionally
    the outer-fibre distances max_y, max_z (m).

    J may not exceed I_y + I_z (Saint-Venant: J = I_p minus the warping term, so
    J <= I_p), up to a slack of 1e-3 for rounded input: a larger J is a unit mistake.
    """
    a = _positive(area, item, "area")
    iy = _positive(i_y, item, "i_y")
    iz = _positive(i_z, item, "i_z")
    j = _positive(torsion_constant, item, "torsion_constant")
    if j > (1.0 + TORSION_BOUND_SLACK) * (iy + iz):
        raise ModelError(f"expected a torsion constant J <= i_y + i_z = {iy + iz!r} m^4 "
                         f"(Saint-Venant bound), got {j!r} m^4", item, "torsion_constant")
    my = None if max_y is None else _positive(max_y, item, "max_y")
    mz = None if max_z is None else _positive(max_z, item, "max_z")
    return Section(area=a, i_y=iy, i_z=iz, torsion_constant=j, kind="general",
                   max_y=my, max_z=mz)
