"""The magnification that makes a run's bend visible in a drawing of the whole arm.

A beam's elastic displacement is often a thousandth of the arm's size: drawn true to
scale the arm looks straight. `readable_scale` picks the factor K that brings the
largest elastic displacement of the run to about `VISIBLE_FRACTION` of the arm's size,

    K = 10 ** round_to_1_2_5(log10(VISIBLE_FRACTION * size / largest)),  K >= 1,

rounded to the nearest of 1, 2, 5, 10, 20, 50, ... (log scale), so that the number read
on the drawing is a round one; K = 1 when the deflection is already that large (or
when nothing bends). `flexmbs animate` and `flexmbs view` start at this K and say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["readable_scale", "DeflectionScale", "VISIBLE_FRACTION", "arm_size"]

VISIBLE_FRACTION = 0.1
_STEPS = (1.0, 2.0, 5.0, 10.0)


@dataclass(frozen=True)
class DeflectionScale:
    """`scale`: the factor; `largest` (m): the largest elastic displacement of the run;
    `size` (m): the arm's size it is compared with."""

    scale: float
    largest: float
    size: float

    def describe(self) -> str:
        """One line for the user: the factor and why."""
        if self.largest <= 0.0:
            return "deflection x1: nothing is bent"
        return (
            f"deflection x{self.scale:g}: the largest elastic displacement is "
            f"{_length(self.largest)} on an arm of {_length(self.size)} "
            "(--scale K to choose another)"
        )


def _length(x: float) -> str:
    if x >= 1.0:
        return f"{x:.3g} m"
    if x >= 1e-4:
        return f"{x * 1e3:.3g} mm"
    return f"{x * 1e6:.3g} um"


def arm_size(points: NDArray[np.float64]) -> float:
    """The arm's size (m): the largest diagonal of the bounding box of one frame's
    points, over the frames of `points` (n frames, k points, 3)."""
    pts = np.asarray(points, dtype=float).reshape(-1, *np.shape(points)[-2:])
    if pts.size == 0:
        return 0.0
    return float(np.linalg.norm(pts.max(axis=1) - pts.min(axis=1), axis=1).max())


def readable_scale(largest: float, size: float) -> DeflectionScale:
    """The factor of the module docstring for a largest elastic displacement `largest`
    (m) on an arm of size `size` (m)."""
    if not largest > 0.0 or not size > 0.0:
        return DeflectionScale(1.0, max(float(largest), 0.0), float(size))
    wanted = VISIBLE_FRACTION * size / largest
    if wanted <= 1.0:
        return DeflectionScale(1.0, largest, size)
    decade = math.floor(math.log10(wanted))
    mantissa = wanted / 10.0**decade
    step = min(_STEPS, key=lambda s: abs(math.log10(mantissa / s)))
    return DeflectionScale(float(step * 10.0**decade), float(largest), float(size))
