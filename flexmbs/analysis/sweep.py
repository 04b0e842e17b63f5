"""`flexmbs sweep`: a parameter study, every case its own run and result file, on a
dask.distributed cluster (flexmbs.analysis.distributed; a local one by default).

Parameters: `PATH=v1,v2,...` (the values, TOML: numbers, strings, true/false) or
`PATH=lo:hi:n` (n values from lo to hi, evenly spaced), PATH a dotted path of the model
file as `--set` takes it. The cases are every combination (the first parameter
varying slowest), case k written to `DIR/case_KKK.h5` with its values as --set
overrides in the file. `DIR/summary.csv` has a row per case: its values (as written
on the command line, or the shortest decimal of a lo:hi:n value), the run's status,
steps, integration time (s), Huang's energy ratio (flexmbs.analysis.energy: max
|E - E0| over the largest strain energy, or the relative drift of a rigid model), the
energy check's verdict (PASS or FAIL, `flexmbs energy`'s), with `verify` the
convergence check's largest relative change and its verdict (flexmbs.convergence), and
the chosen outputs, each `NAME[:STAT]`: NAME a coordinate, a sensor (a column of a
larger one as `NAME[k]`) or `energy.COMPONENT`, STAT one of final (the default), max,
min, maxabs, mean over the output times. `failed_cases` names the cases that did not
pass: a run that failed, an energy check or a convergence check that failed.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FlexmbsError, ModelError
from ..io.results import column_index, component_labels, split_component

__all__ = [
    "SweepParameter",
    "parse_sweep_parameter",
    "sweep_cases",
    "run_case",
    "run_sweep",
    "format_summary",
    "failed_cases",
    "STATISTICS",
]

STATISTICS = {
    "final": lambda x: float(x[-1]),
    "max": lambda x: float(np.max(x)),
    "min": lambda x: float(np.min(x)),
    "maxabs": lambda x: float(np.max(np.abs(x))),
    "mean": lambda x: float(np.mean(x)),
}
FIXED_COLUMNS = ["case", "status", "steps", "integration_s", "energy_ratio", "energy_check"]
VERIFY_COLUMNS = ["convergence", "converged"]


@dataclass(frozen=True)
class SweepParameter:
    """A swept value: its dotted path and the values (as TOML text, for --set)."""

    path: str
    values: tuple[str, ...]


def _toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(float(value)) if isinstance(value, float) else str(value)


def parse_sweep_parameter(text: str) -> SweepParameter:
    """`PATH=v1,v2,...` or `PATH=lo:hi:n` (ModelError naming the option when bad)."""
    import tomllib

    item = f'--param "{text}"'
    path, sep, spec = text.partition("=")
    if not sep or not path.strip() or not spec.strip():
        raise ModelError("expected PATH=v1,v2,... or PATH=lo:hi:n", item)
    parts = spec.split(":")
    if len(parts) == 3:
        try:
            lo, hi, n = float(parts[0]), float(parts[1]), int(parts[2])
        except ValueError:
            raise ModelError("expected lo:hi:n with numbers lo, hi and a whole n", item) from None
        if n < 1 or not (math.isfinite(lo) and math.isfinite(hi)):
            raise ModelError("expected finite lo and hi and n >= 1", item)
        values = [lo] if n == 1 else list(np.linspace(lo, hi, n))
        # the shortest decimal within 1e-12 of the range: 0.3, not 0.30000000000000004
        return SweepParameter(path.strip(), tuple(_toml_text(float(f"{v:.12g}")) for v in values))
    out = []
    for raw in spec.split(","):
        raw = raw.strip()
        if not raw:
            raise ModelError("expected values separated by commas, none empty", item)
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw  # a bare word: a string
        out.append(_toml_text(value))
    return SweepParameter(path.strip(), tuple(out))


def sweep_cases(parameters: Sequence[SweepParameter]) -> list[list[str]]:
    """The --set overrides of every case: every combination of the values, the first
    parameter varying slowest."""
    combos = itertools.product(*[p.values for p in parameters])
    return [[f"{p.path}={v}" for p, v in zip(parameters, combo)] for combo in combos]


def _output(result: Any, spec: str) -> float:
    """The value of one summary output `NAME[:STAT]` of a Result."""
    name, _, stat = spec.partition(":")
    stat = stat or "final"
    if name not in result.sensors:
        name, component = split_component(name)
    else:
        component = None
    if name in result.coordinate_names:
        series = result.q[:, result.coordinate_names.index(name)]
    elif name in result.sensors:
        values = result.sensors[name]
        if values.ndim == 2:
            size = values.shape[1]
            column = None if component is None else column_index(component, size)
            if column is None:
                raise FlexmbsError(
                    f'--summary "{spec}": sensor "{name}" has {size} columns '
                    f"({', '.join(component_labels(size))}); name one as {name}[k], k from "
                    f"0 to {size - 1}, or by its label"
                )
            values = values[:, column]
        series = values
    elif name.startswith("energy.") and name[7:] in result.energy:
        series = result.energy[name[7:]]
    else:
        raise FlexmbsError(f'--summary "{spec}": the result has no "{name}"')
    return STATISTICS[stat](np.asarray(series)) if len(series) else math.nan


def check_summary(spec: str) -> None:
    stat = spec.partition(":")[2]
    if stat and stat not in STATISTICS:
        raise FlexmbsError(
            f'--summary "{spec}": unknown statistic "{stat}"; expected one of '
            + ", ".join(STATISTICS)
        )


def run_case(
    model_path: str,
    overrides: Sequence[str],
    out_path: str,
    summary: Sequence[str] = (),
    verify: bool = False,
) -> dict[str, Any]:
    """Run one case (the model file with the overrides) into `out_path`, with the
    convergence check if `verify`; its summary row. Runs where the sweep sends it (a
    dask worker, or here)."""
    from ..io.results import open_result
    from ..model.toml_reader import load_model
    from ..simulation import simulate
    from .energy import energy_balance

    try:
        model = load_model(model_path, overrides)
        sim = simulate(model, out_path, history=verify, verify=verify)
    except FlexmbsError as exc:  # a row, not an exception to carry back from a worker
        return {
            "status": f"failed: {exc}",
            "steps": 0,
            "integration_s": math.nan,
            "energy_ratio": math.nan,
            "energy_check": "n/a",
            **({"convergence": math.nan, "converged": "n/a"} if verify else {}),
            **{spec: math.nan for spec in summary},
        }
    result = open_result(out_path)
    balance = energy_balance(result) if len(result.time) > 1 else {}
    value = (
        balance.get("ratio") if balance.get("ratio") is not None else balance.get("relative_drift")
    )
    row: dict[str, Any] = {
        "status": sim.status,
        "steps": int(sim.statistics.get("nsteps", 0)),
        "integration_s": float(sim.statistics.get("wall_time", math.nan)),
        "energy_ratio": math.nan if value is None else float(value),
        "energy_check": ("PASS" if balance["passed"] else "FAIL") if balance else "n/a",
    }
    if verify:
        conv = sim.convergence
        worst = conv.worst if conv is not None else None
        row["convergence"] = math.nan if worst is None else worst.relative
        row["converged"] = "PASS" if conv is not None and conv.passed else "FAIL"
    for spec in summary:
        row[spec] = _output(result, spec)
    return row


def _warm(model_path: str, overrides: Sequence[str]) -> float:
    """Compile (or load from the kernel cache) what a run of the model needs, on the
    worker this runs on: a run of one output step, into no file. Returns its seconds."""
    from ..model.toml_reader import load_model
    from ..simulation import simulate

    start = time.perf_counter()
    model = load_model(model_path, overrides)
    simulate(model, None, t_end=model.output.step)
    return time.perf_counter() - start


def run_sweep(
    model_path: str | os.PathLike[str],
    parameters: Sequence[SweepParameter],
    out_dir: str | os.PathLike[str],
    overrides: Sequence[str] = (),
    summary: Iterable[str] = (),
    executor: Executor | None = None,
    log: Callable[[str], object] | None = None,
    verify: bool = False,
) -> list[dict[str, Any]]:
    """Run every case of the sweep (the module docstring) on `executor` (None: here,
    one after another), each with the convergence check if `verify`, and write
    DIR/summary.csv; the rows, in case order."""
    from ..model.toml_reader import load_model

    summary = list(summary)
    for spec in summary:
        check_summary(spec)
    cases = sweep_cases(parameters)
    for case in cases:  # every case a valid model before any run
        load_model(model_path, list(overrides) + case)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [str(out / f"case_{k:03d}.h5") for k in range(len(cases))]
    case_overrides = [list(overrides) + case for case in cases]
    model_file = os.fspath(model_path)
    if executor is None:
        rows = [run_case(model_file, o, p, summary, verify) for o, p in zip(case_overrides, paths)]
    else:
        if log:
            log("warming the kernel cache on one worker")
        executor.submit(_warm, model_file, case_overrides[0]).result()
        rows = list(
            executor.map(
                run_case,
                [model_file] * len(cases),
                case_overrides,
                paths,
                [summary] * len(cases),
                [verify] * len(cases),
            )
        )
    table = []
    for k, (case, row) in enumerate(zip(cases, rows)):
        values = {c.partition("=")[0]: c.partition("=")[2] for c in case}
        table.append({"case": f"case_{k:03d}", **values, **row})
    with open(out / "summary.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]) if table else FIXED_COLUMNS)
        writer.writeheader()
        writer.writerows(table)
    return table


def failed_cases(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(case, why) of every case that did not pass: its run failed, its energy check
    failed, or its convergence check (with verify) failed."""
    out = []
    for r in rows:
        why = []
        if r["status"] != "finished":
            why.append(f"the run {r['status']}")
        if r.get("energy_check") == "FAIL":
            why.append("the energy check failed")
        if r.get("converged") == "FAIL":
            why.append(f"the convergence check failed ({_cell(r.get('convergence'))})")
        if why:
            out.append((str(r["case"]), "; ".join(why)))
    return out


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def format_summary(rows: Sequence[dict[str, Any]]) -> str:
    """The summary rows as an aligned text table."""
    if not rows:
        return "(no cases)"
    keys = list(rows[0])
    cells = [keys] + [[_cell(r[k]) for k in keys] for r in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(keys))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells)


def numeric_column(rows: Sequence[dict[str, Any]], key: str) -> NDArray[np.float64]:
    """One column of the summary as floats."""
    return np.array([float(r[key]) for r in rows])
