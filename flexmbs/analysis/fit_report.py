"""A fit's report as text or Markdown, and its outputs: the fitted model files, their
runs over the records and their comparisons.
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import ExperimentError
from .fit_result import S2_CONSISTENT, FitResult
from .fit_toml import OFFSET_NAME, _toml_value_of_text, set_toml_values

if TYPE_CHECKING:
    from .compare import Comparison


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        return [
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
            *["| " + " | ".join(r) + " |" for r in rows],
        ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip() for r in [head, *rows]]


def format_fit_report(fit: FitResult, markdown: bool = False, resume: str | None = None) -> str:
    """The fitted values with their standard deviations and correlations, as text (or
    Markdown); per record when there are several. `resume`: the fit.json a stopped
    fit is resumed from (named in the report)."""
    at_last = fit.std_at == "last point"
    std_head = "std (last point)" if at_last else "std"
    rows = [
        (
            v.name,
            f"{v.start:.6g}",
            f"{v.value:.6g}",
            f"{v.std:.3g}" if math.isfinite(v.std) else "n/a",
            f"{100 * v.std / abs(v.value):.2g} %" if v.value and math.isfinite(v.std) else "-",
            f"{v.lower:g}:{v.upper:g}" + (" (at a bound)" if v.at_bound else ""),
        )
        for v in fit.values
    ]
    out = _table(("value", "start", "fitted", std_head, "relative std", "bounds"), rows, markdown)
    out.append("")
    out += _correlation_lines(fit, markdown)
    out.append("")
    out += _records_lines(fit, markdown)
    out += _variance_lines(fit)
    out += _notes(fit, resume)
    return "\n".join(out)


def _correlation_lines(fit: FitResult, markdown: bool) -> list[str]:
    """The correlations of the fitted values, a row each."""
    out: list[str] = []
    out.append("correlations:")
    names = [v.name for v in fit.values]
    short = [".".join(n.split(".")[-2:]) for n in names]
    if len(fit.records) > 1:
        short = [
            (v.record + ":" if v.record else "") + ".".join(v.path.split(".")[-2:])
            for v in fit.values
        ]
    width = max(len(s) for s in short)
    if markdown:
        out += ["", "| | " + " | ".join(short) + " |", "|" + "---|" * (len(short) + 1)]
        out += [
            f"| {s} | " + " | ".join(f"{x:+.3f}" for x in row) + " |"
            for s, row in zip(short, fit.correlation)
        ]
    else:
        out += [
            f"  {s:<{width}} " + " ".join(f"{x:+.3f}" for x in row)
            for s, row in zip(short, fit.correlation)
        ]
    return out


def _records_lines(fit: FitResult, markdown: bool) -> list[str]:
    """A line per record of a fit of several: residuals, times, offset, cost, s^2."""
    out: list[str] = []
    if len(fit.records) > 1:
        out.append("records:")
        rec_rows = [
            (
                r["name"],
                os.path.basename(str(r["experiment"])),
                str(r["samples"]),
                f"{r['samples_from']:.6g} to {r['samples_to']:.6g}",
                f"{r['offset']:.6g}",
                f"{r['cost']:.6g}",
                f"{r['variance_ratio']:.4g}",
            )
            for r in fit.records
        ]
        head = ("record", "experiment", "residuals", "t (s, experiment)", "offset", "cost", "s^2")
        out += _table(head, rec_rows, markdown)
        out.append("")
    return out


def _variance_lines(fit: FitResult) -> list[str]:
    """s^2 with the residuals and noise it counts, and what it says of the model."""
    out: list[str] = []
    out.append(
        f"s^2 = {fit.variance_ratio:.4g} (residual variance / measurement noise; "
        f"1: the residuals are the noise); {sum(fit.samples.values())} residuals "
        + (
            f"from t = {fit.window[0]:.6g} to {fit.window[1]:.6g} s"
            if len(fit.records) <= 1
            else f"over {len(fit.records)} records"
        )
        + "; noise sigma: "
        + ", ".join(f"{k} {fit.noise_source.get(k, f'{v:.3g}')}" for k, v in fit.noise.items())
    )
    if not fit.consistent and fit.stop == "budget":
        out.append(
            f"s^2 = {fit.variance_ratio:.4g} > {S2_CONSISTENT:g} at the last point: the "
            "search stopped before its residuals came down to the measurement noise (or "
            "the model misses something), so the values carry no standard deviation. "
            "RMS not yet explained per channel: "
            + ", ".join(
                f"{c} {u:.3g} (s^2 {fit.channel_variance_ratio.get(c, math.nan):.3g})"
                for c, u in fit.unexplained.items()
            )
        )
    elif not fit.consistent and fit.stop != "failed":
        out.append(
            f"THE MODEL MISSES SOMETHING: s^2 = {fit.variance_ratio:.4g} > "
            f"{S2_CONSISTENT:g}, the residuals are not the measurement noise, so the "
            "values carry no standard deviation (they would move by more than one "
            "says with any detail the model leaves out). Unexplained RMS per channel: "
            + ", ".join(
                f"{c} {u:.3g} (s^2 {fit.channel_variance_ratio.get(c, math.nan):.3g})"
                for c, u in fit.unexplained.items()
            )
        )
    return out


def _notes(fit: FitResult, resume: str | None) -> list[str]:
    """The residuals' correlation, the quantization's share, the offsets, the runs and
    the tolerance, and whether the fit converged."""
    out: list[str] = []
    if fit.correlation_time:
        out.append(
            "residuals correlated over (samples): "
            + ", ".join(f"{c} {v:.3g}" for c, v in fit.correlation_time.items())
            + "; the standard deviations count a channel's samples as 1 / max(1, g tau) "
            "of white ones"
        )
    if fit.smooth_jacobian:
        out.append(
            "Jacobian from runs without the quantization of "
            + ", ".join(f'"{n}"' for n in fit.smooth_jacobian)
            + " (its trend; the residuals are the quantized model's); the quantization "
            "moves the values by "
            + ", ".join(f"{v.name} {d:+.3g}" for v, d in zip(fit.values, fit.quantization_shift))
            + " from the trend's, counted in the standard deviations"
        )
    for r in fit.records if len(fit.records) > 1 else []:
        out.append(f"starting offset of {r['name']}: {r['alignment']}")
    if len(fit.records) <= 1:
        out.append(f"starting offset: {fit.alignment}")
    out.append(
        f"{fit.runs} runs of at most {fit.max_runs} (rtol {fit.rtol:g}, atol {fit.atol:g}"
        + (f": {fit.tolerance}" if fit.tolerance else "")
        + f"), {fit.wall_time:.1f} s; {fit.message}"
    )
    if fit.stop == "budget":
        out.append(
            "UNCONVERGED: the fit stopped on its budget of runs before it converged; the "
            "values are its last point (its lowest cost), the standard deviations "
            "computed there: they describe that point, not a minimum"
            + (f"; go on with flexmbs fit --resume {resume}" if resume else "")
        )
    elif not fit.success:
        out.append(
            "UNCONVERGED: the fit stopped before it converged; the values are its best "
            "point, and no standard deviation is given (start nearer)"
        )
    return out


def fitted_model_text(
    source_text: str,
    fit: FitResult,
    overrides: Sequence[str],
    model_path: str | os.PathLike[str],
    experiment_path: str | os.PathLike[str],
    map_path: str | os.PathLike[str],
    record: str | None = None,
) -> str:
    """The model file text with the --set overrides and the fitted values written in,
    under a comment header saying where they come from. `record`: the record whose
    model it is in a fit of several (its own values and the shared ones)."""
    own = next((r for r in fit.records if r["name"] == record), None)
    fitted = own["assignments"] if own is not None else fit.overrides
    assignments = {}
    for override in list(overrides) + list(fitted):
        path, _, value = override.partition("=")
        assignments[path.strip()] = _toml_value_of_text(value.strip())
    text = set_toml_values(source_text, assignments)
    now = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    head = [
        f"# Fitted by flexmbs {__version__} fit on {now}:",
        f"#   model {model_path}, experiment {experiment_path}, map {map_path}",
    ]
    if overrides:
        head.append("#   --set " + " --set ".join(overrides))
    if fit.stop == "budget":
        head.append(
            f"#   UNCONVERGED: the fit stopped on its budget ({fit.message}); these are "
            "its last point's values, their standard deviations computed there"
        )
    elif not fit.success:
        head.append(
            "#   UNCONVERGED: the fit stopped before it converged "
            f"({fit.message}); these are its best values, without uncertainty"
        )
    several = len(fit.records) > 1
    for v in fit.values:
        if several and v.record not in (None, record):
            continue
        unit = " s" if v.path == OFFSET_NAME else ""
        spread = f" +- {v.std:.2g}{unit}" if math.isfinite(v.std) else f"{unit}"
        head.append(f"#   {v.path} = {v.value:.6g}{spread} (start {v.start:.6g})")
    return "\n".join(head) + "\n" + text


@dataclass
class FitOutputs:
    """The files `write_fit_outputs` wrote and the comparisons of the fitted runs
    (`comparison` the first record's, `comparisons` by record)."""

    model_file: str
    result_file: str
    comparison: Comparison
    files: list[str]
    comparisons: dict[str, Comparison] = field(default_factory=dict)


def _write_record_outputs(
    fit: FitResult, record: Mapping[str, Any], folder: str, plots: bool
) -> tuple[str, str, Comparison, list[str]]:
    """Into `folder`: the record's fitted model file, its run over the record and the
    compare report of that run at the fitted offset."""
    from ..formats.toml_reader import load_model
    from ..simulation.run import simulate
    from .channel_map import load_channel_map
    from .compare import compare_files, write_report
    from .experiment import read_experiment

    os.makedirs(folder, exist_ok=True)
    model_path, experiment_path = str(record["model"]), str(record["experiment"])
    map_path, overrides = str(record["map"]), list(record["overrides"])
    gaps, group = record.get("gaps"), record.get("group")
    stem = os.path.splitext(os.path.basename(model_path))[0] + "_fitted"
    model_file = os.path.join(folder, stem + ".toml")
    source_text = load_model(model_path).source_text
    assert source_text is not None  # a model read from a file keeps its text
    name = record["name"] if len(fit.records) > 1 else None
    with open(model_file, "w", encoding="utf-8") as f:
        f.write(
            fitted_model_text(
                source_text, fit, overrides, model_path, experiment_path, map_path, name
            )
        )
    model = load_model(model_file)
    channel_map = load_channel_map(map_path)
    experiment = read_experiment(
        experiment_path, channel_map.time_name, group if group is not None else channel_map.group
    )
    offset = float(record["offset"])
    t_end = float(experiment.time[-1]) - offset
    result_file = os.path.join(folder, stem + ".h5")
    sim = simulate(
        model,
        result_file,
        t_end=t_end,
        rtol=fit.rtol,
        atol=fit.atol,
        output_step=record.get("output_step", fit.output_step),
    )
    if not sim.success:
        raise ExperimentError(
            f"the run of the fitted model failed: {sim.message}", source=model_file
        )
    window = record.get("window")
    comparison = compare_files(
        result_file,
        experiment_path,
        map_path,
        gaps=gaps,
        group=group,
        offset=offset,
        window=None if window is None else (float(window[0]), float(window[1])),
    )
    comparison.alignment = (
        "offset fitted, starting from the map's alignment"
        if fit.offset_fitted
        else "the map's alignment"
    )
    files = [model_file, result_file] + write_report(comparison, folder, plots)
    return model_file, result_file, comparison, files


def write_fit_outputs(
    fit: FitResult,
    out_dir: str | os.PathLike[str],
    plots: bool = True,
    options: Mapping[str, Any] | None = None,
) -> FitOutputs:
    """Into out_dir (created): for each record (in a folder of its name when there
    are several) MODEL_fitted.toml (the model file with the overrides and the fitted
    values), MODEL_fitted.h5 (its run over the record, at the fit's tolerances) and
    the compare report of that run (report.md, report.json, plots) at the fitted
    offset; and fit.md, fit.json (the fit, with what `flexmbs fit --resume` needs:
    the records, the parameters and `options`, the fit's settings)."""
    out = os.fspath(out_dir)
    os.makedirs(out, exist_ok=True)
    several = len(fit.records) > 1
    files: list[str] = []
    comparisons: dict[str, Comparison] = {}
    first: tuple[str, str] | None = None
    for record in fit.records:
        folder = os.path.join(out, str(record["name"])) if several else out
        model_file, result_file, comparison, written = _write_record_outputs(
            fit, record, folder, plots
        )
        comparisons[str(record["name"])] = comparison
        files += written
        if first is None:
            first = (model_file, result_file)
    assert first is not None  # a fit has a record
    md = os.path.join(out, "fit.md")
    js = os.path.join(out, "fit.json")
    lines = []
    for record in fit.records:
        lines.append(
            (f"* record {record['name']}: " if several else "* ")
            + f"model `{record['model']}`"
            + "".join(f" --set {o}" for o in record["overrides"])
            + f", experiment `{record['experiment']}`, map `{record['map']}`"
        )
    with open(md, "w", encoding="utf-8") as f:
        r0 = fit.records[0]
        f.write(
            f"# Fit of {os.path.basename(str(r0['model']))} to "
            + ", ".join(os.path.basename(str(r["experiment"])) for r in fit.records)
            + "\n\n"
            + "\n".join(lines)
            + "\n"
            + f"* fitted model `{os.path.relpath(first[0], out)}`, its run "
            f"`{os.path.relpath(first[1], out)}`, compared in `report.md`"
            + (" (one folder per record)" if several else "")
            + "\n\n## Fitted values\n\n"
            + format_fit_report(fit, markdown=True, resume=js)
            + "\n\nStandard deviations from the Jacobian at "
            + ("the optimum" if fit.std_at == "optimum" else "the search's last point")
            + ", cov = s^2 (J^T J)^-1 (flexmbs.analysis.fit).\n"
        )
    with open(js, "w", encoding="utf-8") as f:
        json.dump(
            {
                "model": str(r0["model"]),
                "experiment": str(r0["experiment"]),
                "map": str(r0["map"]),
                "overrides": list(r0["overrides"]),
                "options": dict(options or {}),
                "fit": fit.to_dict(),
                "fitted_model": first[0],
                "fitted_result": first[1],
                "comparison": comparisons[str(r0["name"])].to_dict(),
                "comparisons": {k: c.to_dict() for k, c in comparisons.items()}
                if several
                else None,
            },
            f,
            indent=1,
        )
    c0 = comparisons[str(r0["name"])]
    return FitOutputs(first[0], first[1], c0, files + [md, js], comparisons)
