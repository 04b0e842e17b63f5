"""The work a span of a run is set to do by the values that fix its steps: galpha's
`fixed_step`, the `max_step` of any solver and each sampled controller's
`sample_time`, bounded against the span (MAX_RUN_STEPS steps, MAX_CONTROLLER_SAMPLES
samples), as the output rows and the beam elements are; a value past the bound is a
unit mistake (ns for ms) that would hang the run, refused before any work."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

from ..errors import ModelError
from .vocabulary import MAX_CONTROLLER_SAMPLES, MAX_RUN_STEPS, MAX_STEP_SPAN

__all__ = ["check_run_work", "check_step"]


def check_run_work(model: Any, settings: Any, span: float, what: str = "the run") -> None:
    """ModelError naming the field whose value would take more than the bound over
    `span` seconds (`what`: how the message names the span)."""
    steps = [("max_step", settings.max_step)]
    if settings.method == "galpha":
        steps.append(("fixed_step", settings.fixed_step))
    for fld, step in steps:
        if step and step > 0 and span / step > MAX_RUN_STEPS:
            raise ModelError(
                f"{fld} = {step:g} s makes {span / step:.3g} steps of {what} ({span:g} s): "
                f"expected at most {MAX_RUN_STEPS:.0e} (a step of at least "
                f"{span / MAX_RUN_STEPS:.3g} s)",
                "solver",
                fld,
            )
    for name, controller in model.controllers.items():
        ts = controller.sample_time
        if ts > 0 and span / ts > MAX_CONTROLLER_SAMPLES:
            raise ModelError(
                f"{ts:g} s makes {span / ts:.3g} samples in {what} ({span:g} s): expected at "
                f"most {MAX_CONTROLLER_SAMPLES:.0e} (a sample time of at least "
                f"{span / MAX_CONTROLLER_SAMPLES:.3g} s)",
                f'controller "{name}"',
                "sample_time",
            )


def check_step(model: Any, settings: Any, dt: float, inputs: object) -> None:
    """ModelError for a Simulator.step whose `dt` is past MAX_STEP_SPAN times the
    model's t_end or sets more work than check_run_work allows, or whose `inputs` is
    not a mapping {port name: value}; named after the model's file."""
    source = model.source_path or "<python>"
    if isinstance(dt, bool) or not isinstance(dt, numbers.Real):
        raise ModelError(
            f"expected a number of seconds, got {type(dt).__name__} {dt!r}", "step", "dt", source
        )
    if not dt > 0.0:
        return  # the step's own check: a positive number of seconds
    if inputs is not None and not isinstance(inputs, Mapping):
        raise ModelError(
            f"expected a mapping {{port name: value}}, got {type(inputs).__name__} {inputs!r}",
            "step",
            "inputs",
            source,
        )
    if dt > MAX_STEP_SPAN * settings.t_end:
        raise ModelError(
            f"dt = {dt:g} s: expected at most {MAX_STEP_SPAN:g} times the model's t_end "
            f"({settings.t_end:g} s), {MAX_STEP_SPAN * settings.t_end:g} s (step again to go "
            "further, or set a longer solver.t_end)",
            "step",
            "dt",
            source,
        )
    try:
        check_run_work(model, settings, dt, "the step")
    except ModelError as exc:
        raise exc.with_source(source) from None
