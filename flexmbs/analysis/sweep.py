"""`flexmbs sweep`: a parameter study, every case its own run and result file, on a
dask.distributed cluster (flexmbs.analysis.distributed; a local one by default).

Parameters: `PATH=v1,v2,...` (the values, TOML: numbers, strings, true/false) or
`PATH=lo:hi:n` (n values from lo to hi, evenly spaced), PATH a dotted path of the model
file as `--set` takes it, each path once. The cases are every combination (the first
parameter varying slowest), at most MAX_SWEEP_CASES of them, made one at a time as they
are needed; case k is written to `DIR/case_KKK.h5` with its values as --set overrides
in the file. `DIR/summary.csv` has a row per case: its values (as written
on the command line, or the shortest decimal of a lo:hi:n value), the run's status,
steps, integration time (s), Huang's energy ratio (flexmbs.analysis.energy: max
|E - E0| over the largest strain energy, or the relative drift of a rigid model), the
energy check's verdict (PASS or FAIL, `flexmbs energy`'s), with `verify` the
convergence check's largest relative change and its verdict (flexmbs.simulation.convergence), and
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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FlexmbsError, ModelError

__all__ = [
    "MAX_SWEEP_CASES",
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
MAX_SWEEP_CASES = 10_000
"""The most cases a sweep runs: each is a run and a result file (a study beyond it is
split into sweeps of parts of the values)."""


class _Spaced(Sequence[str]):
    """n values from lo to hi evenly spaced, as TOML text, made when asked for."""

    def __init__(self, lo: float, hi: float, n: int) -> None:
        self.lo, self.hi, self.n = lo, hi, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k):  # type: ignore[no-untyped-def, override]
        if isinstance(k, slice):
            return tuple(self[j] for j in range(*k.indices(self.n)))
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(k)
        if self.n == 1:
            value = self.lo
        elif k == self.n - 1:
            value = self.hi
        else:  # as numpy.linspace makes it
            value = k * ((self.hi - self.lo) / (self.n - 1)) + self.lo
        # the shortest decimal within 1e-12 of the range: 0.3, not 0.30000000000000004
        return _toml_text(float(f"{value:.12g}"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == self.n and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash((self.lo, self.hi, self.n))

    def __repr__(self) -> str:
        return f"<{self.n} values {self.lo!r} .. {self.hi!r}>"


@dataclass(frozen=True)
class SweepParameter:
    """A swept value: its dotted path and the values (as TOML text, for --set; those of
    `lo:hi:n` made when asked for)."""

    path: str
    values: Sequence[str]


def _toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(float(value)) if isinstance(value, float) else str(value)


def parse_sweep_parameter(text: str) -> SweepParameter:
    """`PATH=v1,v2,...` or `PATH=lo:hi:n` (ModelError naming the option when bad, or
    when n passes MAX_SWEEP_CASES)."""
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
        if n > MAX_SWEEP_CASES:
            raise ModelError(
                f"{n} values; a sweep runs at most {MAX_SWEEP_CASES} cases, each a run and "
                "a result file: expected fewer (split the study into sweeps of parts of "
                "the range)",
                item,
            )
        return SweepParameter(path.strip(), _Spaced(lo, hi, n))
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


def check_parameters(parameters: Sequence[SweepParameter]) -> int:
    """The number of cases of `parameters` (ModelError for a path given twice, or more
    than MAX_SWEEP_CASES cases)."""
    seen: dict[str, int] = {}
    for k, p in enumerate(parameters):
        if p.path in seen:
            raise ModelError(
                f"the path is swept twice (--param {seen[p.path] + 1} and {k + 1}); "
                "expected each path once, with all its values",
                f'--param "{p.path}"',
            )
        seen[p.path] = k
    count = math.prod(len(p.values) for p in parameters)
    if count > MAX_SWEEP_CASES:
        sizes = " x ".join(str(len(p.values)) for p in parameters)
        raise ModelError(
            f"{sizes} = {count} cases; a sweep runs at most {MAX_SWEEP_CASES}, each a run "
            "and a result file: expected fewer values (split the study into sweeps)",
            "--param",
        )
    return count


class _Cases(Sequence[list[str]]):
    """The --set overrides of every case, made when asked for."""

    def __init__(self, parameters: Sequence[SweepParameter]) -> None:
        self.parameters = list(parameters)
        self.n = math.prod(len(p.values) for p in self.parameters)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k):  # type: ignore[no-untyped-def, override]
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(self.n))]
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(k)
        picks = []
        for p in reversed(self.parameters):  # the last parameter varies fastest
            k, j = divmod(k, len(p.values))
            picks.append(f"{p.path}={p.values[j]}")
        return picks[::-1]

    def __iter__(self) -> Iterator[list[str]]:
        for combo in itertools.product(*[p.values for p in self.parameters]):
            yield [f"{p.path}={v}" for p, v in zip(self.parameters, combo)]


def sweep_cases(parameters: Sequence[SweepParameter]) -> Sequence[list[str]]:
    """The --set overrides of every case: every combination of the values, the first
    parameter varying slowest (a sequence that makes each case when asked for; the
    parameters checked by check_parameters)."""
    check_parameters(parameters)
    return _Cases(parameters)


def _output(result: Any, spec: str) -> float:
    """The value of one summary output `NAME[:STAT]` of a Result (its column alone is
    read)."""
    name, _, stat = spec.partition(":")
    try:
        series = result.column(name)
    except KeyError as exc:
        raise FlexmbsError(f'--summary "{spec}": {exc.args[0]}') from None
    return STATISTICS[stat or "final"](np.asarray(series)) if len(series) else math.nan


def check_summary(spec: str, names: Mapping[str, Any] | None = None) -> None:
    """FlexmbsError naming `spec` (NAME[:STAT]) when its statistic is unknown, or, given
    the `names` of a case (_case_names), when its series is not one of them."""
    name, _, stat = spec.partition(":")
    if stat and stat not in STATISTICS:
        raise FlexmbsError(
            f'--summary "{spec}": unknown statistic "{stat}"; expected one of '
            + ", ".join(STATISTICS)
        )
    if names is None:
        return
    from ..io.result_reader import ENERGY_NAMES, Result

    sensors = dict(names["sensors"])
    empty = np.zeros((0,))
    shaped = {k: empty if size == 1 else np.zeros((0, size)) for k, size in sensors.items()}
    probe = Result(
        "the model",
        empty,
        np.zeros((0, len(names["coordinates"]))),
        None,
        list(names["coordinates"]),
        {k: empty for k in ENERGY_NAMES},
        shaped,
        "finished",
        math.nan,
    )
    try:
        probe.column(name)
    except KeyError as exc:
        raise FlexmbsError(f'--summary "{spec}": {exc.args[0]}') from None


def _case_names(model_path: str, overrides: Sequence[str]) -> dict[str, Any]:
    """The coordinates and the sensors (name: number of columns) of a case's model."""
    from ..formats.toml_reader import load_model
    from ..model.compiled import compile_model

    cm = compile_model(load_model(model_path, overrides))
    return {
        "coordinates": list(cm.coordinate_names),
        "sensors": dict(zip(cm.sensor_names, (int(k) for k in cm.sensor_sizes))),
    }


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
    from ..formats.toml_reader import load_model
    from ..io.results import open_result
    from ..simulation.run import simulate
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


def _warm(model_path: str, overrides: Sequence[str]) -> dict[str, Any]:
    """Compile (or load from the kernel cache) what a run of the model needs, on the
    worker this runs on: a run of one output step, into no file. Returns the case's
    names (_case_names) and the seconds it took ("seconds")."""
    from ..formats.toml_reader import load_model
    from ..simulation.run import simulate

    start = time.perf_counter()
    model = load_model(model_path, overrides)
    simulate(model, None, t_end=model.output.step)
    names = _case_names(model_path, overrides)
    names["seconds"] = time.perf_counter() - start
    return names


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
    DIR/summary.csv, a row as each case ends (in case order); the rows. Before any
    run: the parameters checked (check_parameters), every case read as a model, and
    the summary outputs checked against the model's names. One sweep at a time writes
    to a folder (flexmbs.io.output_lock on its summary)."""
    from ..formats.toml_reader import load_model
    from ..io.output_lock import OutputLock

    summary = list(summary)
    for spec in summary:
        check_summary(spec)
    cases = sweep_cases(parameters)
    for case in cases:  # every case a valid model before any run
        load_model(model_path, list(overrides) + case)
    out = Path(out_dir)
    _check_earlier_cases(out, len(cases))
    out.mkdir(parents=True, exist_ok=True)
    model_file = os.fspath(model_path)
    first = list(overrides) + cases[0]
    with OutputLock(out / "summary.csv"):
        if executor is None:
            names = _case_names(model_file, first) if summary else None
        else:
            if log:
                log("warming the kernel cache on one worker")
            names = executor.submit(_warm, model_file, first).result()
        for spec in summary:
            check_summary(spec, names)
        n = len(cases)
        paths = [str(out / f"case_{k:03d}.h5") for k in range(n)]
        case_overrides = [list(overrides) + case for case in cases]
        if executor is None:
            rows: Iterable[dict[str, Any]] = (
                run_case(model_file, o, p, summary, verify) for o, p in zip(case_overrides, paths)
            )
        else:
            rows = executor.map(
                run_case, [model_file] * n, case_overrides, paths, [summary] * n, [verify] * n
            )
        return _write_summary(out / "summary.csv", cases, rows)


def _check_earlier_cases(out: Path, n: int) -> None:
    """ModelError when the folder holds case files of an earlier sweep beyond this
    sweep's `n` cases: they would be left beside a summary that does not list them."""
    if not out.is_dir():
        return
    stale = sorted(
        p.name for p in out.glob("case_*.h5") if p.stem[5:].isdigit() and int(p.stem[5:]) >= n
    )
    if stale:
        raise ModelError(
            f"the folder holds {len(stale)} case file{'s' if len(stale) > 1 else ''} of an "
            f"earlier sweep ({stale[0]}{f' .. {stale[-1]}' if len(stale) > 1 else ''}) that "
            f"this sweep of {n} cases would leave beside a summary that does not list them: "
            "expected a new folder, or the earlier sweep's files removed",
            f"-o {out}",
        )


def _write_summary(
    path: Path, cases: Sequence[list[str]], rows: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """summary.csv, a row written as each case's row comes (so that the cases that
    ended are in it whatever stops the sweep); the table."""
    table: list[dict[str, Any]] = []
    with open(path, "w", newline="") as f:
        writer: csv.DictWriter[str] | None = None
        for k, (case, row) in enumerate(zip(cases, rows)):
            values = {c.partition("=")[0]: c.partition("=")[2] for c in case}
            table.append({"case": f"case_{k:03d}", **values, **row})
            if writer is None:
                writer = csv.DictWriter(f, fieldnames=list(table[0]))
                writer.writeheader()
            writer.writerow(table[-1])
            f.flush()
        if writer is None:
            csv.DictWriter(f, fieldnames=FIXED_COLUMNS).writeheader()
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
