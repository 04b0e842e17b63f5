"""Text reports of `flexmbs linearize` and `flexmbs equilibrium`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .linearize import equilibrium_note, rigid_modes

if TYPE_CHECKING:
    from .absolute_kinematics import AbsoluteKinematics
    from .equilibrium import Equilibrium
    from .linearize import Linearization

__all__ = ["format_linearization", "format_equilibrium"]

SHAPE_COLUMNS = 6  # mode shapes printed at most


def _shape_table(lin: Linearization) -> list[str]:
    n = min(SHAPE_COLUMNS, lin.shapes.shape[1])
    if n == 0:
        return []
    width = max(len(name) for name in lin.coordinate_names)
    head = "".join(f"{'mode ' + str(k + 1):>11s}" for k in range(n))
    lines = ["mode shapes (largest entry 1):", f"  {'':<{width}s}{head}"]
    for name, row in zip(lin.coordinate_names, lin.shapes[:, :n]):
        lines.append(f"  {name:<{width}s}" + "".join(f"{v:11.4g}" for v in row))
    return lines


def format_linearization(
    lin: Linearization, title: str = "", absolute: AbsoluteKinematics | None = None
) -> str:
    """The independent coordinates, frequencies, poles, shapes and (closed loops)
    J_y and the constraint forces; Führer and Wallrapp's absolute view when given."""
    lines = [title] if title else []
    state = equilibrium_note(lin) or "an equilibrium"
    lines.append(f"linearized about t = {lin.t:g} s, {state}; method {lin.method}")
    if lin.note:
        lines.append(lin.note)
    if lin.rows:
        lines.append(
            f"constraints: {lin.rows} equations of rank {lin.rank}; "
            f"{len(lin.names)} degree(s) of freedom"
        )
    kept = f" (kept by the user: {', '.join(lin.prescribed)})" if lin.prescribed else ""
    lines.append(f"independent coordinates: {', '.join(lin.names)}{kept}")
    lines.append(
        f"asymmetry |A - A^T| / |A|: M {lin.asymmetry('M'):.2g}, "
        f"D {lin.asymmetry('D'):.2g}, K {lin.asymmetry('K'):.2g}"
    )
    lines.append("")
    lines.append(" mode   undamped (Hz)")
    for k, (f, rigid) in enumerate(zip(lin.frequencies, lin.rigid)):
        note = "  rigid" if rigid else "  unstable" if f < 0 else ""
        lines.append(f"{k + 1:5d}   {f + 0.0:13.6g}{note}")
    lines.append("")
    lines.append(" pole   natural (Hz)   damping ratio   damped (Hz)")
    rigid_poles = rigid_modes(lin.poles)
    for k, (s, fn, z, fd) in enumerate(
        zip(lin.poles, lin.natural_frequencies, lin.damping_ratios, lin.damped_frequencies)
    ):
        note = "  rigid" if rigid_poles[k] else "  unstable" if s.real > 0 else ""
        lines.append(f"{k + 1:5d}   {fn:12.6g}   {z + 0.0:13.4g}   {fd:11.6g}{note}")
    lines.append("")
    lines += _shape_table(lin)
    if lin.J_z is not None:
        lines.append("")
        lines.append("J_y (dq = J_y dy):")
        width = max(len(n) for n in lin.coordinate_names)
        for name, row in zip(lin.coordinate_names, lin.J_y):
            lines.append(f"  {name:<{width}s}" + "".join(f"{v:11.4g}" for v in row))
        lines.append(
            "constraint forces f_z = -lambda (Führer and Wallrapp (23)) of the active rows:"
        )
        assert lin.constraint_forces is not None  # set with J_z
        for text, f in zip(lin.row_texts, lin.constraint_forces):
            lines.append(f"  {f:12.6g}  {text}")
    if absolute is not None:
        lines.append("")
        lines.append(
            "absolute coordinates (the view of Führer and Wallrapp 1984): "
            f"{absolute.jacobian.shape[1]} variables, "
            f"{absolute.jacobian.shape[0]} equations of rank "
            f"{absolute.rank}, {absolute.dof} degree(s) of freedom"
        )
        lines.append("independent: " + "; ".join(f"{b}: {v}" for b, v in absolute.independent))
        lines.append(absolute.table())
    return "\n".join(lines)


def format_equilibrium(eq: Equilibrium, lin: Linearization | None, title: str = "") -> str:
    """Iterations, residual, how far each coordinate moved, and the stability."""
    lines = [title] if title else []
    lines.append(
        f"static equilibrium in {eq.iterations} Newton iterations: reduced "
        f"force {eq.residual:.3g}, last step {eq.step:.3g}"
    )
    moved = np.abs(eq.q - eq.start)
    width = max(len(n) for n in eq.names) if eq.names else 0
    lines.append(f"  {'coordinate':<{width}s}  {'start':>12s}  {'equilibrium':>12s}")
    for name, a, b in zip(eq.names, eq.start, eq.q):
        lines.append(f"  {name:<{width}s}  {a:12.6g}  {b:12.6g}")
    lines.append(f"coordinates moved by at most {moved.max(initial=0.0):.3g}")
    if lin is not None:
        f, rigid = lin.frequencies, lin.rigid
        low = f[0] if len(f) else float("nan")
        if np.any((f < 0) & ~rigid):
            verdict = "NOT stable (a negative frequency is an unstable direction)"
        elif np.any(rigid):
            names = sorted(
                {
                    lin.coordinate_names[int(np.argmax(np.abs(lin.shapes[:, k])))]
                    for k in np.flatnonzero(rigid)
                }
            )
            verdict = "neutral: no stiffness holds the direction(s) led by " + ", ".join(names)
        else:
            verdict = "stable"
        lines.append(f"{verdict}; lowest undamped frequency {low:.6g} Hz")
    return "\n".join(lines)
