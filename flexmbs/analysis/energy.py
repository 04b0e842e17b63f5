"""The energy balance of a run and Huang's criterion (docs/explanation/formulation.md section 7).

    E(t) = T + V_g + U + V_s - W_nc       (J)

is constant for every model, damped or driven, because W_nc (the `dissipated` series of
the result file) is the work done on the system by the non-conservative forces. How far
E(t) drifts from E(0) measures the integration error, read against each scale:

* the largest energy the system holds, largest_component: the largest of max |T|,
  max |U|, max |V_s| and max |V_g(t) - V_g(0)| (the variation of V_g: its zero is
  arbitrary, so its absolute value would make the drift look small by moving the
  origin); relative_drift = max |E(t) - E(0)| / largest_component;
* the work the non-conservative forces did, work_done (the total variation of W_nc:
  what went in through the motors and out through the dampers). W_nc is not an energy
  held: it grows with a damped or driven run's length;
* the run's own tolerance: tolerances = drift_max / (rtol (largest_component +
  work_done)), the drift in units of the error the integrator was asked to keep. An
  integrator that kept its tolerance leaves a balance of a few tolerances at most
  (tens over thousands of steps); one far above TOLERANCE_LIMIT says that the
  integration was less accurate than its tolerance;
* the largest strain energy, Huang's ratio max |E(t) - E(0)| / max U(t), reported: it
  measures the drift against the elastic energy alone, which in a stiff body is a
  millionth of what the system holds (it is no verdict: a drift of 1e-9 of the energy
  held would fail it).

The criterion (the verdict's) is the drift against what the balance sums:
max |E(t) - E(0)| / (largest_component + work_done) below `ratio_limit`. The check
passes when the criterion holds, the balance closes to within TOLERANCE_LIMIT
tolerances (not asked of `galpha`, whose numerical dissipation of the modes it does not
resolve is drift by design, reported as such), and no beam left the small-deformation
range (unless `accept_large_deformation`: the balance of a beam outside it still closes,
but the beam model no longer describes the beam). When it fails, the report names the
next step: past the criterion, the rtol that meets it (the drift scales with rtol: the
present rtol over twice the margin it misses by). Beams with the thesis's
geometric-stiffness variants ("huang-axial", "huang-foreshortening") are not
conservative (docs/explanation/formulation.md section 6): the report names them, since
their balance is not expected to close.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ResultFileError
from ..io.results import ENERGY_COMPONENTS, Result, open_result

__all__ = ["DEFAULT_RATIO_LIMIT", "energy_balance", "format_energy_report", "total_energy"]

DEFAULT_RATIO_LIMIT = 1e-2  # "orders of magnitude below": two
TOLERANCE_LIMIT = 1e3
"""Largest drift, in tolerances (module text), of a balance that closes to the run's
tolerance."""
CRITERION_BALANCE = "balance"
CRITERION_TEXT = {
    CRITERION_BALANCE: "max |E(t) - E(0)| / (largest energy held + work done)",
}


def _float(x: float) -> float | None:
    """A JSON-able float: Python float, None for nan or inf."""
    x = float(x)
    return x if math.isfinite(x) else None


def _component_scales(energy: Mapping[str, ArrayLike]) -> dict[str, float]:
    """dict name -> max over time of |component| (J) of the energies the system holds
    (W_nc is not one); gravity: max |V_g(t) - V_g(0)|."""
    scales = {}
    for name in ENERGY_COMPONENTS:
        if name not in energy or name.startswith("strain_") or name == "dissipated":
            continue
        e = np.asarray(energy[name], dtype=float)
        if name == "gravity":
            e = e - e[0]
        scales[name] = float(np.max(np.abs(e)))
    return scales


def total_energy(energy: Mapping[str, ArrayLike]) -> NDArray[np.float64]:
    """E(t) = kinetic + gravity + strain + spring - dissipated (J), (n,)."""
    e = {k: np.asarray(energy[k], dtype=float) for k in ENERGY_COMPONENTS[:5]}
    return e["kinetic"] + e["gravity"] + e["strain"] + e["spring"] - e["dissipated"]


NONCONSERVATIVE_GEOMETRIC = ("huang-axial", "huang-foreshortening")


def nonconservative_beams(model_json: str | None) -> list[tuple[str, str | None]]:
    """[(beam, geometric option)] of the beams whose geometric stiffness is one of the
    thesis's non-conservative variants, from a result file's normalised model."""
    try:
        bodies = json.loads(model_json).get("bodies", {}) if model_json else {}
    except ValueError:
        return []
    return [
        (name, b.get("geometric"))
        for name, b in bodies.items()
        if isinstance(b, dict) and b.get("geometric") in NONCONSERVATIVE_GEOMETRIC
    ]


def energy_balance(
    result: Result | str | os.PathLike[str],
    ratio_limit: float = DEFAULT_RATIO_LIMIT,
    accept_large_deformation: bool = False,
) -> dict[str, Any]:
    """The energy balance of a result (a Result or the path of a result file).

    Returns a JSON-able dict (floats in J unless said; None where undefined or not
    finite):

    - path, status, t_reached (s), samples, t_start, t_end (s);
    - energy_initial = E(0), energy_final = E(t_end);
    - drift_max = ``max |E(t) - E(0)|``, t_drift_max (s) where it occurs;
    - strain_max = max U(t);
    - ratio = drift_max / strain_max, Huang's (None for rigid models, strain_max == 0);
    - largest_component (see the module docstring) and largest_component_name;
    - relative_drift = drift_max / largest_component (None if that is 0);
    - work_done: the total variation of W_nc (J), drift_per_work = drift_max /
      work_done (None without work);
    - rtol (of the run, None if unknown), tolerances = drift_max / (rtol (largest +
      work_done)), tolerance_limit, closes_to_tolerance (None when not asked: galpha,
      or rtol unknown);
    - criterion ("balance"), criterion_text, criterion_value = drift_max /
      (largest_component + work_done), ratio_limit, finite (all energies finite),
      passed (bool: the criterion, closes_to_tolerance unless None, and no
      small_deformation text unless accept_large_deformation), failed_because (the
      reasons, a list of str), next_step (what to do when it fails: the rtol to
      tighten to; None when it passes);
    - nonconservative: [[beam, option]] of beams with a non-conservative geometric
      stiffness (their balance is not expected to close);
    - method (the solver's name, None if unknown); for `galpha`, rho_inf and
      numerical_dissipation = E(0) - E(t_end): the energy its damping of the modes
      its steps do not resolve took (none with rho_inf = 1 on linear modes);
    - small_deformation: the run's text about beams that left the small-deformation
      range (flexmbs.elements.deformation_range), None if none did.

    Raises ResultFileError if the result holds no samples.
    """
    if isinstance(result, (str, os.PathLike)):
        result = open_result(result)
    if not ratio_limit > 0:
        raise ValueError(f"ratio_limit must be positive, got {ratio_limit}")
    t = np.asarray(result.time, dtype=float)
    if len(t) == 0:
        raise ResultFileError(
            f"{result.path}: holds no samples (the run stopped before "
            "its first output); there is no energy balance to check"
        )
    e = total_energy(result.energy)
    d = _drift(t, e, result.energy)
    drift_max, largest, work, value = d["drift_max"], d["largest"], d["work"], d["value"]
    finite = bool(np.all(np.isfinite(e)))
    solver = getattr(result, "solver", None) or {}
    rtol = _scalar_tolerance(solver.get("rtol"))
    tolerances = None
    if rtol is not None and rtol > 0 and largest + work > 0:
        tolerances = drift_max / (rtol * (largest + work))
    closes = None
    if tolerances is not None and solver.get("method") != "galpha":
        closes = bool(tolerances <= TOLERANCE_LIMIT)
    failed, next_step = _verdict(
        finite, value, ratio_limit, tolerances, closes, rtol, solver, accept_large_deformation
    )
    return {
        "path": str(result.path),
        "status": result.status_text,
        "t_reached": _float(result.t_reached),
        "samples": int(len(t)),
        "t_start": _float(t[0]),
        "t_end": _float(t[-1]),
        "energy_initial": _float(e[0]),
        "energy_final": _float(e[-1]),
        "drift_max": _float(drift_max),
        "t_drift_max": d["t_drift_max"],
        "strain_max": d["strain_max"],
        "ratio": d["ratio"],
        "largest_component": _float(largest),
        "largest_component_name": d["largest_name"],
        "relative_drift": d["relative"],
        "work_done": _float(work),
        "drift_per_work": None if work <= 0 else _float(drift_max / work),
        "rtol": rtol,
        "tolerances": None if tolerances is None else _float(tolerances),
        "tolerance_limit": TOLERANCE_LIMIT,
        "closes_to_tolerance": closes,
        "criterion": CRITERION_BALANCE,
        "criterion_text": CRITERION_TEXT[CRITERION_BALANCE],
        "criterion_value": _float(value),
        "ratio_limit": float(ratio_limit),
        "finite": finite,
        "passed": not failed,
        "failed_because": failed,
        "next_step": next_step,
        "accept_large_deformation": bool(accept_large_deformation),
        "nonconservative": [
            list(x) for x in nonconservative_beams(getattr(result, "model_json", None))
        ],
        **_integrator_dissipation(result, e),
        "small_deformation": solver.get("small_deformation") or None,
    }


def _drift(t: NDArray[np.float64], e: NDArray[np.float64], energy: Any) -> dict[str, Any]:
    """The drift of the total energy `e` at the times `t` and its scales: drift_max =
    max |E(t) - E(0)| (nan if a sample is), t_drift_max, strain_max, ratio (Huang's,
    None for a rigid model), the largest component (largest, largest_name), relative
    drift, the work done (W_nc's total variation) and the criterion's value
    drift_max / (largest + work)."""
    drift = np.abs(e - e[0])
    k = int(np.nanargmax(drift)) if np.any(np.isfinite(drift)) else 0
    drift_max = float(np.max(drift))  # nan if any sample is nan
    strain_max = float(np.max(np.asarray(energy["strain"], dtype=float)))
    scales = _component_scales(energy)
    largest_name = max(scales, key=lambda n: scales[n] if math.isfinite(scales[n]) else -1)
    largest = scales[largest_name]
    w_nc = np.asarray(energy["dissipated"], dtype=float)
    work = float(np.sum(np.abs(np.diff(w_nc)))) if len(w_nc) > 1 else 0.0
    if largest + work > 0:
        value = drift_max / (largest + work)
    else:  # nothing moves: no energy at all, and no drift either
        value = 0.0 if drift_max == 0 else math.inf
    return {
        "drift_max": drift_max,
        "t_drift_max": _float(t[k]),
        "strain_max": _float(strain_max),
        "ratio": _float(drift_max / strain_max) if strain_max > 0 else None,
        "largest": largest,
        "largest_name": largest_name,
        "relative": _float(drift_max / largest) if largest > 0 else None,
        "work": work,
        "value": value,
    }


def _verdict(
    finite: bool,
    value: float,
    ratio_limit: float,
    tolerances: float | None,
    closes: bool | None,
    rtol: float | None,
    solver: Mapping[str, Any],
    accept_large_deformation: bool,
) -> tuple[list[str], str | None]:
    """(the reasons the balance fails, none when it passes; what to do then): the
    criterion `value` against `ratio_limit`, the drift in `tolerances` of the run's
    rtol, and the run's text about beams outside the small-deformation range."""
    failed = []
    if not finite:
        failed.append("the energies are not finite")
    elif not value < ratio_limit:
        failed.append(
            f"{CRITERION_TEXT[CRITERION_BALANCE]} = {value:.3g} is not below {ratio_limit:g}"
        )
    if closes is False:
        failed.append(
            f"the balance does not close to the run's tolerance: its drift is "
            f"{tolerances:.3g} tolerances (rtol {rtol:g} of the largest energy and the "
            f"work done), more than {TOLERANCE_LIMIT:g}"
        )
    next_step = None
    if failed and finite:
        next_step = _next_step(value, ratio_limit, tolerances, rtol, solver.get("method"))
    if solver.get("small_deformation") and not accept_large_deformation:
        failed.append("a beam went outside the small-deformation range")
        next_step = next_step or (
            "stiffen or shorten the beam, or load it less (or pass "
            "--accept-large-deformation to accept a beam model outside its range)"
        )
    return failed, next_step


def _next_step(
    value: float,
    limit: float,
    tolerances: float | None,
    rtol: float | None,
    method: str | None,
) -> str | None:
    """What to do about a drift that fails: past the criterion, the rtol that meets it
    (the drift scales with rtol: the present one over twice the margin missed); within
    it but not closing to the tolerance, the run's accuracy to be checked (tightening
    rtol scales the drift and the tolerance alike). None if neither fails."""
    if value >= limit:
        if rtol is None:
            return "tighten the run's rtol"
        target = rtol / (2.0 * value / limit)
        exponent = math.floor(math.log10(target))
        text = f"tighten rtol to {math.floor(target / 10.0**exponent)}e{exponent}"
        if method == "galpha":
            text += ' (or run with rho_inf = 1, or with "bdf": galpha\'s damping is drift)'
        return text
    if tolerances is not None and tolerances > TOLERANCE_LIMIT and method != "galpha":
        return (
            "the integration was less accurate than its rtol asked: check it with "
            "flexmbs verify, and bound its steps (max_step) where the model changes fast"
        )
    return None


def _scalar_tolerance(value: object) -> float | None:
    """A run's rtol as one number (the smallest of an array), None if unknown."""
    if value is None:
        return None
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    if a.size == 0 or not np.all(np.isfinite(a)):
        return None
    return float(np.min(a))


def _integrator_dissipation(
    result: Result, e: NDArray[np.float64]
) -> dict[str, str | float | None]:
    """method, and for galpha rho_inf and numerical_dissipation (see energy_balance)."""
    solver = getattr(result, "solver", None) or {}
    method = solver.get("method")
    out: dict[str, str | float | None] = {"method": None if method is None else str(method)}
    if method == "galpha":
        rho = solver.get("rho_inf")
        out["rho_inf"] = None if rho is None else _float(rho)
        out["numerical_dissipation"] = _float(e[0] - e[-1])
    return out


def _galpha_note(rho_inf: float | None, dissipation: float | None) -> str:
    """The line that says what `galpha`'s E(0) - E(t_end) (J) is at its rho_inf."""
    lost = f"E(0) - E(t_end) = {_g(dissipation, 'J')}"
    if rho_inf is not None and rho_inf >= 1.0:
        return (
            "note: galpha (rho_inf = 1) keeps the energy of linear undamped modes at "
            f"any step: {lost} is its integration error on the nonlinear terms, "
            "counted as drift (tighten rtol to reduce it)"
        )
    return (
        f"note: galpha (rho_inf = {_g(rho_inf)}) damps the modes its steps do not "
        f"resolve: {lost} is that numerical dissipation, and the criterion counts it "
        "as drift (validate with bdf at a tight tolerance, or rho_inf = 1)"
    )


def _g(x: float | None, unit: str = "") -> str:
    """A number for the report ("n/a" for None)."""
    if x is None:
        return "n/a"
    return f"{x:.6g}{' ' + unit if unit else ''}"


def format_energy_report(balance: Mapping[str, Any]) -> str:
    """The energy balance (a dict from energy_balance) as text for people: the drift
    against each scale it can be measured by, then the verdict and its reasons."""
    b = balance
    lines = [
        f"energy balance of {b['path']}",
        f"  status                     {b['status']}",
        f"  time                       {_g(b['t_start'])} .. {_g(b['t_end'], 's')} "
        f"({b['samples']} samples)",
        f"  E(0)                       {_g(b['energy_initial'], 'J')}",
        f"  E(t_end)                   {_g(b['energy_final'], 'J')}",
        f"  max |E(t) - E(0)|          {_g(b['drift_max'], 'J')} at t = "
        f"{_g(b['t_drift_max'], 's')}",
        f"  max strain energy U        {_g(b['strain_max'], 'J')}",
        f"  largest energy held        {_g(b['largest_component'], 'J')} "
        f"({b['largest_component_name']})",
        f"  work done (|dW_nc| summed) {_g(b.get('work_done'), 'J')}",
        "the drift relative to",
        f"  max U (Huang's ratio)      {_g(b['ratio'])}"
        + ("   (rigid model: no strain energy)" if b["ratio"] is None else ""),
        f"  the largest energy held    {_g(b['relative_drift'])}",
        f"  the work done              {_g(b.get('drift_per_work'))}",
    ]
    if b.get("tolerances") is not None:
        lines.append(
            f"  the run's tolerance        {_g(b['tolerances'])} tolerances (rtol "
            f"{b['rtol']:g} of the largest energy and the work done; closing to the "
            f"tolerance: at most {b['tolerance_limit']:g})"
        )
    verdict = "PASS" if b["passed"] else "FAIL"
    lines.append(
        f"criterion: {b['criterion_text']} = {_g(b['criterion_value'])} "
        f"(limit {b['ratio_limit']:g}): {verdict}"
    )
    for reason in b.get("failed_because", []):
        lines.append(f"  fails: {reason}")
    if b.get("next_step"):
        lines.append(f"  next: {b['next_step']}")
    if b.get("numerical_dissipation") is not None:
        lines.append(_galpha_note(b.get("rho_inf"), b["numerical_dissipation"]))
    for beam, option in b.get("nonconservative", []):
        lines.append(
            f'note: beam "{beam}" uses geometric = "{option}", a variant of '
            "Huang's thesis that is not conservative (docs/explanation/"
            "formulation.md, section 6): "
            "its energy balance is not expected to close"
        )
    if b.get("small_deformation"):
        lines.append("warning: a beam went " + b["small_deformation"])
        if b.get("accept_large_deformation"):
            lines.append("  (accepted: --accept-large-deformation)")
    if not b["finite"]:
        lines.append("the energies are not finite (the run diverged)")
    if b["status"] != "finished":
        lines.append(
            f"note: the run did not finish (status: {b['status']}); the balance "
            "covers the samples written"
        )
    return "\n".join(lines)
