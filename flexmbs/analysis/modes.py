"""Natural frequencies for `flexmbs modes`: each beam body alone under its reference
conditions (and the modes the model keeps of it), and the whole model linearised
about its initial state (docs/explanation/formulation.md sections 8 and 9).

The whole-model linearisation of a tree about (q0, u = 0, t = 0):

    M = M*(q0),    K = -dQ*/dq (q0, u = 0),    K y = w^2 M y,

K by central differences of `flexmbs.dynamics.api.generalized_forces` (gravity, joint
springs, actuators, loads, elastic forces), the step of coordinate i
FD_STEP max(|q0_i|, 1) (m, rad, or kg^(1/2) m for a modal coordinate: a unit of any of
them moves the model by about a metre or a radian, where the forces change on that
scale). Damping is left out (undamped frequencies). Without equilibrium, Q*(q0, 0)
not zero, the model accelerates away from q0 and the frequencies describe only the
instantaneous stiffness; with nonzero initial rates it is not at rest. Both are
reported with the linearisation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ..elements.modal import ENERGY_PARTS, axial_stretch_capability, body_modes
from ..errors import ModelError
from ..model.description import BeamBody, FeBody
from .linearize import FD_STEP, central_differences, undamped_modes

if TYPE_CHECKING:
    from ..model.compiled import CompiledModel
    from ..model.description import Model

__all__ = [
    "FD_STEP",
    "BODY_MODE_COUNT",
    "BeamModes",
    "SystemModes",
    "beam_modes",
    "system_modes",
    "model_modes",
    "format_modes",
    "modes_to_dict",
]

BODY_MODE_COUNT = 10  # modes of a body alone listed
EQUILIBRIUM_TOL = 1e-8  # m or rad: largest |Q*_i| / K_ii still called an equilibrium
STIFFNESS_FLOOR = 1e-9  # of the largest |K_ii|: the K_ii of a coordinate with no stiffness
DOMINANT_SHARE = 0.1  # kinetic-energy share of a coordinate named as dominant
DOMINANT_MAX = 3  # coordinates named per mode
STRETCH_NONE = 1e-6  # axial_stretch_capability below this: no stretch representable
STRETCH_PURE = 0.5  # at or above this: a mostly axial deformation is representable


@dataclass
class BeamModes:
    """A beam body alone under its reference conditions (the nodal eigenproblem):
    frequencies (Hz), descriptions and strain-energy fractions of its lowest modes
    (`count` of `nodal`), and what the model keeps of it: `kept` is None for nodal
    coordinates, else a dict of the ModalBasis (coordinates, kinds, frequencies,
    reduced_frequencies, descriptions) with `axial_stretch_capability`."""

    body: str
    nodal: int
    frequencies: np.ndarray
    descriptions: list[str]
    energy_fractions: np.ndarray
    kept: dict[str, Any] | None = None
    axial_stretch_capability: float = 1.0
    heading: str | None = None  # a finite-element body's: what its modes are


@dataclass
class SystemModes:
    """The whole model linearised about (q0, u = 0): coordinates (nq,), M and K
    (nq, nq), eigenvalues w^2 (1/s^2, ascending; negative: unstable, NaN-free), the
    frequencies (Hz; NaN where w^2 < 0), mode shapes (nq, nq) as columns, the
    dominant coordinates of each mode [(name, kinetic-energy share)], the residual
    Q*(q0, 0) (nq,), whether it is an equilibrium, whether it is at rest (all initial
    rates zero, and no driver moving a joint at t = 0) and the largest initial rate
    (m/s, rad/s: of the coordinates, or of a body moved by a driver), the
    finite-difference steps, and whether K was symmetric."""

    coordinates: list[str]
    mass: np.ndarray
    stiffness: np.ndarray
    eigenvalues: np.ndarray
    frequencies: np.ndarray
    shapes: np.ndarray
    dominant: list[list[tuple[str, float]]]
    residual: np.ndarray
    in_equilibrium: bool
    at_rest: bool
    largest_rate: float
    steps: np.ndarray
    symmetric: bool


def beam_modes(beam: BeamBody, count: int = BODY_MODE_COUNT) -> BeamModes:
    """BeamModes of a beam body: its `count` lowest nodal modes (all if fewer)."""
    alone = body_modes(beam)
    n = min(count, len(alone.frequencies))
    kept = None
    if beam.basis is not None:
        b = beam.basis
        kept = {
            "coordinates": list(b.names),
            "kinds": list(b.kinds),
            "frequencies": b.frequencies.copy(),
            "reduced_frequencies": b.reduced_frequencies.copy(),
            "descriptions": list(b.descriptions),
            "dropped_corrections": list(b.dropped_corrections),
            "modes_below": b.modes_below,
        }
    return BeamModes(
        body=beam.name,
        nodal=len(beam.free),
        frequencies=alone.frequencies[:n].copy(),
        descriptions=list(alone.descriptions[:n]),
        energy_fractions=alone.energy_fractions[:n].copy(),
        kept=kept,
        axial_stretch_capability=axial_stretch_capability(beam),
    )


def fe_body_modes(body: FeBody) -> BeamModes:
    """BeamModes of a finite-element body: the component modes that went into its
    basis (fixed-interface modes for Craig-Bampton, free modes for free-free), and
    the reduced body it keeps, with its floating frame."""
    b = body.basis
    kind = {"craig-bampton": "fixed-interface", "free": "free-free", "file": "file's"}[b.reduction]
    n = len(b.component_frequencies)
    nodes = len(body.data.nodes)
    heading = (
        f'finite-element body "{body.name}" ({nodes} nodes x {body.data.node_dofs} '
        f"coordinates, {body.data.source}; {b.reduction} reduction, floating frame: "
        f"{b.frame}); its {n} {kind} modes:"
    )
    return BeamModes(
        body=body.name,
        nodal=nodes * body.data.node_dofs,
        frequencies=np.asarray(b.component_frequencies).copy(),
        descriptions=[f"{kind} mode"] * n,
        energy_fractions=np.zeros((n, len(ENERGY_PARTS))),
        kept={
            "coordinates": list(b.names),
            "kinds": ["mode"] * b.nm,
            "frequencies": b.frequencies.copy(),
            "reduced_frequencies": b.frequencies.copy(),
            "descriptions": [
                f"mode {k + 1} of the reduced body ({b.boundary} interface coordinates went in)"
                for k in range(b.nm)
            ],
            "dropped_corrections": [],
            "modes_below": b.modes_below,
        },
        heading=heading,
    )


def _dominant(
    shape: NDArray[np.float64], mass: NDArray[np.float64], names: Sequence[str]
) -> list[tuple[str, float]]:
    """[(name, share)] of the coordinates holding at least DOMINANT_SHARE of the
    mode's kinetic energy |y_i (M y)_i| / sum_j |y_j (M y)_j| (largest first, at most
    DOMINANT_MAX; the largest one always)."""
    share = np.abs(shape * (mass @ shape))
    total = share.sum()
    if not total > 0:
        return []
    share = share / total
    order = np.argsort(-share)
    out = [(names[i], float(share[i])) for i in order[:DOMINANT_MAX] if share[i] >= DOMINANT_SHARE]
    return out or [(names[order[0]], float(share[order[0]]))]


def system_modes(cm: CompiledModel) -> SystemModes:
    """SystemModes of a compiled model about its initial state (module docstring)."""
    from ..dynamics import api

    q0 = cm.q0.copy()
    zero = np.zeros(cm.nq)
    mass = api.mass_matrix(cm, q0)
    residual = api.generalized_forces(cm, q0, zero)
    steps = FD_STEP * np.maximum(np.abs(q0), 1.0)
    _, jac = central_differences(lambda q: api.generalized_forces(cm, q, zero), q0, steps)
    stiffness = -jac
    w2, shapes, symmetric = undamped_modes(mass, stiffness)
    freq = np.where(w2 >= 0, np.sqrt(np.abs(w2)), np.nan) / (2 * np.pi)
    names = list(cm.coordinate_names)
    kii = np.abs(np.diag(stiffness))
    floor = STIFFNESS_FLOOR * (kii.max() if kii.size else 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        offset = np.abs(residual) / np.maximum(kii, max(floor, 1e-300))
    u0 = np.asarray(cm.u0)
    prescribed = api.prescribed_velocity(cm, q0)  # body velocities of driven joints
    rates = np.concatenate([np.abs(u0), np.abs(prescribed)])
    return SystemModes(
        coordinates=names,
        mass=mass,
        stiffness=stiffness,
        eigenvalues=w2,
        frequencies=freq,
        shapes=shapes,
        dominant=[_dominant(shapes[:, k], mass, names) for k in range(len(w2))],
        residual=residual,
        in_equilibrium=bool(offset.size == 0 or offset.max() <= EQUILIBRIUM_TOL),
        at_rest=bool(not np.any(rates != 0.0)),
        largest_rate=float(rates.max()) if rates.size else 0.0,
        steps=steps,
        symmetric=symmetric,
    )


def model_modes(
    model: Model, body: str | None = None, count: int = BODY_MODE_COUNT
) -> tuple[list[BeamModes], SystemModes]:
    """(list of BeamModes, SystemModes) of a Model: every beam body (or only `body`)
    and the whole model about its initial state. ModelError for an unknown body."""
    from ..model.compiled import compile_model

    beams = [b for b in model.bodies.values() if isinstance(b, (BeamBody, FeBody))]
    if body is not None:
        names = [b.name for b in beams]
        if body not in names:
            raise ModelError(
                f'no beam body "{body}"; beam bodies: {", ".join(names) or "(none)"}',
                "--body",
                source=model.source_path,
            )
        beams = [b for b in beams if b.name == body]
    try:
        cm = compile_model(model)
    except ModelError as exc:
        raise exc.with_source(model.source_path or "<python>") from None
    return [
        fe_body_modes(b) if isinstance(b, FeBody) else beam_modes(b, count) for b in beams
    ], system_modes(cm)


def _stretch_text(capability: float) -> str:
    """What `axial_stretch_capability` says, in words."""
    if capability < STRETCH_NONE:
        what = "not representable"
    elif capability >= STRETCH_PURE:
        what = "representable"
    else:
        what = "only together with bending or torsion"
    return f"{what} (largest axial share of the strain energy {capability:.3g})"


def _hz(f: float) -> str:
    """A frequency as the table prints it: "unstable" for w^2 < 0, "rigid" for a rigid
    mode (undamped_modes sets its w^2 to 0)."""
    return "unstable" if not np.isfinite(f) else "rigid" if f == 0 else f"{f:.6g}"


def _count(n: int, noun: str) -> str:
    """'1 mode', '2 modes'."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def format_modes(beams: Sequence[BeamModes], system: SystemModes, title: str = "") -> str:
    """The text report of `flexmbs modes`."""
    lines = [title] if title else []
    for b in beams:
        lines.append(
            b.heading
            or f'beam "{b.body}" alone under its reference conditions '
            f"({b.nodal} nodal coordinates; the lowest {len(b.frequencies)} "
            "modes):"
        )
        lines.append(f"  {'mode':>4}  {'frequency (Hz)':>14}  description")
        for k, (f, d) in enumerate(zip(b.frequencies, b.descriptions)):
            lines.append(f"  {k + 1:>4}  {f:>14.6g}  {d}")
        if b.kept is None:
            lines.append('  the model keeps the nodal coordinates (modes = "all")')
        else:
            kept = b.kept
            nmode = kept["kinds"].count("mode")
            ncorr = kept["kinds"].count("correction")
            nder = kept["kinds"].count("derivative")
            below = kept.get("modes_below")
            chosen = f" (those below {below:g} Hz)" if below is not None else ""
            lines.append(
                f"  the model keeps {_count(nmode, 'coordinate')}:"
                if b.heading is not None
                else f"  the model keeps {_count(nmode, 'mode')}{chosen}, "
                f"{_count(ncorr, 'static correction mode')} and "
                f"{_count(nder, 'modal derivative')}:"
            )
            width = max(len(c) for c in kept["coordinates"])
            lines.append(f"  {'coordinate':<{width}}  {'frequency (Hz)':>14}  description")
            for c, f, d in zip(kept["coordinates"], kept["frequencies"], kept["descriptions"]):
                lines.append(f"  {c:<{width}}  {f:>14.6g}  {d}")
            lines.append(
                "  reduced body's frequencies (Hz): "
                + ", ".join(f"{f:.6g}" for f in kept["reduced_frequencies"])
            )
            if kept["dropped_corrections"]:
                lines.append(
                    f"  {len(kept['dropped_corrections'])} correction shapes "
                    "left out: already in the basis"
                )
        if b.heading is None:
            lines.append(f"  axial stretch: {_stretch_text(b.axial_stretch_capability)}")
        lines.append("")
    if not beams:
        lines += ["no beam bodies", ""]
    s = system
    lines.append(
        f"whole model linearised about its initial state ({len(s.coordinates)} "
        "coordinates, u = 0; M = M*(q0), K = -dQ*/dq):"
    )
    if not s.at_rest:
        lines.append(
            f"  warning: not at rest: initial rates up to {s.largest_rate:.3g}; "
            "linearised about the initial configuration at rest"
        )
    if s.residual.size:
        k = int(np.argmax(np.abs(s.residual)))
        text = f"largest |Q*(q0, 0)| = {abs(s.residual[k]):.3g} at {s.coordinates[k]}"
        if s.in_equilibrium:
            lines.append(f"  in equilibrium ({text})")
        else:
            lines.append(
                f"  warning: not in equilibrium: {text} (N, N m or kg^1/2 m/s^2 "
                "by coordinate); the model accelerates away from q0"
            )
    if not s.symmetric:
        lines.append(
            "  note: K is not symmetric (non-conservative or unbalanced forces); "
            "the frequencies come from the real parts of its eigenvalues"
        )
    if not s.coordinates:
        lines.append("  no coordinates")
    else:
        lines.append(
            f"  {'mode':>4}  {'frequency (Hz)':>14}  dominant coordinates (kinetic-energy share)"
        )
        for k, (f, dom) in enumerate(zip(s.frequencies, s.dominant)):
            names = ", ".join(f"{n} {100 * share:.0f} %" for n, share in dom)
            lines.append(f"  {k + 1:>4}  {_hz(f):>14}  {names}")
    return "\n".join(lines)


def modes_to_dict(beams: Sequence[BeamModes], system: SystemModes) -> dict[str, Any]:
    """The report as JSON-able data (`flexmbs modes --json`)."""

    def number(x: float) -> float | None:
        return float(x) if np.isfinite(x) else None

    s = system
    return {
        "bodies": [
            {
                "body": b.body,
                "nodal_coordinates": b.nodal,
                "modes": [
                    {
                        "mode": k + 1,
                        "frequency_hz": float(f),
                        "description": d,
                        "strain_energy_fractions": dict(zip(ENERGY_PARTS, map(float, fr))),
                    }
                    for k, (f, d, fr) in enumerate(
                        zip(b.frequencies, b.descriptions, b.energy_fractions)
                    )
                ],
                "kept": None
                if b.kept is None
                else {
                    "coordinates": b.kept["coordinates"],
                    "kinds": b.kept["kinds"],
                    "frequency_hz": [float(f) for f in b.kept["frequencies"]],
                    "reduced_frequency_hz": [float(f) for f in b.kept["reduced_frequencies"]],
                    "descriptions": b.kept["descriptions"],
                    "dropped_corrections": [
                        list(map(int, d)) for d in b.kept["dropped_corrections"]
                    ],
                },
                "axial_stretch_capability": b.axial_stretch_capability,
            }
            for b in beams
        ],
        "system": {
            "coordinates": s.coordinates,
            "at_rest": s.at_rest,
            "largest_initial_rate": s.largest_rate,
            "in_equilibrium": s.in_equilibrium,
            "residual": [float(r) for r in s.residual],
            "symmetric": s.symmetric,
            "modes": [
                {
                    "mode": k + 1,
                    "eigenvalue": float(w2),
                    "frequency_hz": number(f),
                    "rigid": bool(w2 == 0.0),
                    "dominant": [{"coordinate": n, "share": share} for n, share in dom],
                }
                for k, (w2, f, dom) in enumerate(zip(s.eigenvalues, s.frequencies, s.dominant))
            ],
        },
    }
