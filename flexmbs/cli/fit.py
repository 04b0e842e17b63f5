"""`flexmbs fit`: model values identified from experiment files, by least squares over
runs of the model (one record, several records of a fit file, or a stopped fit
resumed)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ..errors import FlexmbsError
from .options import (
    EXIT_BUDGET,
    EXIT_FAILED,
    EXIT_OK,
    add_command,
    add_json_option,
    add_quiet_option,
    add_set_option,
    add_window_option,
    default_name,
    error_line,
    log_line,
    positive_float,
    positive_int,
    window_of,
)

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_fit", "FIT_CLUSTER_AFTER"]

FIT_CLUSTER_AFTER = 1.0
"""s: by default a fit's runs go to a local dask cluster once they take this long each
(its start and its workers' loading of the kernels cost seconds)."""


def add_fit(commands: Subcommands) -> None:
    """`flexmbs fit MODEL EXPERIMENT --map MAP --param ...` (or --records, --resume)."""
    f = add_command(
        commands,
        "fit",
        "identify model values from an experiment file (least squares over runs of the model)",
        _cmd_fit,
    )
    _add_fit_records(f)
    _add_fit_settings(f)
    _add_fit_outputs(f)


def _add_fit_records(f: argparse.ArgumentParser) -> None:
    """What is fitted: the model, the experiment and the map, the values, or a fit file
    or a stopped fit; the window."""
    f.add_argument("model", nargs="?", help="model file (TOML); its values are the starting point")
    f.add_argument("experiment", nargs="?", help="experiment file (CSV or HDF5)")
    f.add_argument("--map", metavar="MAP.toml", help="channel map (with MODEL EXPERIMENT)")
    f.add_argument(
        "--param",
        action="append",
        metavar="PATH[=lo:hi]",
        help="a model value to identify, by its dotted path as for --set, "
        "with optional bounds (repeatable), e.g. "
        "--param joints.joint2.damping=0:1; with --records, a value every record shares",
    )
    add_set_option(
        f,
        "override a value of the model file (repeatable), e.g. a starting value; with "
        "--records, of every record's model",
    )
    f.add_argument(
        "--records",
        metavar="FIT_FILE.toml",
        help="fit several records at once: a fit file naming each record's model, "
        "experiment, map, settings, own values and window, and the values they share",
    )
    f.add_argument(
        "--resume",
        metavar="FIT.json",
        help="go on from where the fit that wrote this fit.json stopped (its records, "
        "values and settings; --max-runs is the new budget; outputs beside it unless -o)",
    )
    add_window_option(
        f,
        "fit the samples from model time T0 to T1 s only (the runs start at 0, so the "
        "state at T0 is the model's; the convergence check covers the same window)",
    )
    f.add_argument(
        "--t-end",
        type=float,
        help="fit the first T s after the release, as --window 0 T (default: the whole record)",
    )


def _add_fit_settings(f: argparse.ArgumentParser) -> None:
    """How the runs go and how the experiment is read: tolerances, the offset, gaps,
    the budget of runs, the convergence check before the fit."""
    from ..analysis.experiment import GAP_POLICIES  # light: the fit's modules load scipy

    f.add_argument(
        "--rtol",
        type=float,
        help="relative tolerance of the runs (default: the model's, ten times tighter at a "
        "step until the convergence check passes; given, it is checked once)",
    )
    f.add_argument(
        "--atol",
        type=float,
        help="absolute tolerance (default: the model's, tightened with rtol; rtol / 100 with "
        "--rtol)",
    )
    f.add_argument(
        "--fixed-offset",
        action="store_true",
        help="hold the alignment's time offset (default: identify it too)",
    )
    f.add_argument(
        "--gaps", choices=GAP_POLICIES, help="missing values in the experiment (default: the map's)"
    )
    f.add_argument("--group", help="HDF5 group of the experiment")
    f.add_argument(
        "--max-runs",
        type=positive_int,
        help="runs of the model at most, every Jacobian's included: the fit stops when its "
        "next step does not fit in what is left, with exit status 3 (default 200: "
        "flexmbs.analysis.fit.DEFAULT_MAX_RUNS)",
    )
    f.add_argument(
        "--verify-limit",
        type=positive_float,
        default=1e-4,
        help="before fitting, the starting model must converge: a compared sensor may "
        "change by at most this of its scale at ten times the fit's tolerance "
        "(default 1e-4)",
    )
    f.add_argument(
        "--no-verify",
        action="store_true",
        help="skip that convergence check (the fit then trusts the tolerance)",
    )


def _add_fit_outputs(f: argparse.ArgumentParser) -> None:
    """Where the outputs go and where the runs are made."""
    f.add_argument(
        "-o",
        "--output",
        metavar="OUT_DIR",
        help="folder of the fitted model, its run and the reports "
        "(default: MODEL_vs_EXPERIMENT_fit here)",
    )
    add_json_option(f, "print the JSON report")
    f.add_argument("--no-plots", action="store_true", help="no PNG plots")
    f.add_argument(
        "--scheduler",
        help="run each step's runs (a Jacobian's columns, the records) at once on this dask "
        "scheduler",
    )
    f.add_argument(
        "--workers",
        type=positive_int,
        help="...or on a local dask cluster of this many workers (default: one per core, "
        "up to the runs of a step, once a run takes over a second, when dask is installed "
        "and there are two cores)",
    )
    f.add_argument(
        "--serial",
        action="store_true",
        help="make the runs here, one after another",
    )
    add_quiet_option(f, "no progress lines")


def _fit_inputs(
    args: argparse.Namespace,
) -> tuple[list[Any], list[Any], dict[str, Any], str]:
    """The records, the shared values, the settings and the default output folder of
    `flexmbs fit`: from the command line (one record), a fit file (--records) or a
    stopped fit's fit.json (--resume)."""
    from ..analysis.fit import parse_parameter
    from ..analysis.fit_file import read_fit_file, record_of, resume_records

    forms = [args.model is not None, args.records is not None, args.resume is not None]
    if sum(forms) != 1:
        raise FlexmbsError(
            "fit: expected MODEL EXPERIMENT --map MAP, or --records FIT_FILE, or --resume "
            "FIT_JSON (one of them)"
        )
    window = window_of(args)
    if args.t_end is not None and window is not None:
        raise FlexmbsError("fit: --t-end T is --window 0 T: expected one of them")
    if args.t_end is not None:
        window = (0.0, float(args.t_end))
    params = [parse_parameter(p) for p in args.param or []]
    sets = args.set or []
    if args.resume is not None:
        records, shared, options = resume_records(args.resume)
        if params or sets or window is not None:
            raise FlexmbsError(
                "fit --resume: the values, settings and windows are the stopped fit's: "
                "expected no --param, --set, --window or --t-end"
            )
        return records, shared, options, os.path.dirname(os.path.abspath(args.resume))
    if args.records is not None:
        if args.map is not None or args.experiment is not None or window is not None:
            raise FlexmbsError(
                "fit --records: each record's files and window are in the fit file: "
                "expected no EXPERIMENT, --map, --window or --t-end"
            )
        records, shared = read_fit_file(args.records)
        for r in records:
            r.overrides = list(r.overrides) + sets
        default = default_name(args.records, suffix="_fit")
        return records, shared + params, {}, default
    if args.experiment is None or args.map is None or not params:
        raise FlexmbsError(
            "fit: expected MODEL EXPERIMENT --map MAP and at least one --param PATH[=lo:hi]"
        )
    record = record_of(
        "", args.model, args.experiment, args.map, sets, (), window, args.group, args.gaps
    )
    return [record], params, {}, default_name(args.model, args.experiment, suffix="_fit")


def _fit_executor(args: argparse.Namespace, runs_per_step: int) -> Any:
    """Where the fit's runs go: a dask scheduler (--scheduler), a local cluster
    (--workers; by default, with two cores or more and dask installed, once a run
    takes FIT_CLUSTER_AFTER s), or here (--serial, one core, one run a step, or no
    dask): a context manager of an Executor or None."""
    import contextlib

    if args.serial:
        if args.scheduler is not None or args.workers is not None:
            raise FlexmbsError("fit --serial: expected no --scheduler or --workers with it")
        return contextlib.nullcontext(None)
    from ..analysis.distributed import LocalClusterWhenSlow, dask_executor

    if args.scheduler is not None or args.workers is not None:
        return dask_executor(args.scheduler, args.workers)
    cores = os.cpu_count() or 1
    try:
        import distributed  # noqa: F401
    except ImportError:
        return contextlib.nullcontext(None)
    if cores < 2 or runs_per_step < 2:
        return contextlib.nullcontext(None)
    return LocalClusterWhenSlow(
        min(cores, runs_per_step), FIT_CLUSTER_AFTER, None if args.quiet else log_line
    )


def _cmd_fit(args: argparse.Namespace) -> int:
    from ..analysis.fit import (
        DEFAULT_MAX_RUNS,
        fit_records,
        format_fit_report,
        write_fit_outputs,
    )

    records, shared, options, default_out = _fit_inputs(args)
    log = None if args.quiet else log_line
    rtol = args.rtol or options.get("rtol")
    atol = args.atol if args.atol is not None else options.get("atol")
    fit_offset = not args.fixed_offset and options.get("fit_offset", True)
    resuming = args.resume is not None
    if resuming and log:
        log(f"going on from the point the fit of {args.resume} reached")
    runs_per_step = max(
        len(records), len(records) * len(shared) + sum(len(r.parameters) for r in records)
    )
    with _fit_executor(args, runs_per_step) as executor:
        if executor is not None and log and not hasattr(executor, "started"):
            log("the runs of each step go side by side on dask workers")
        fit = fit_records(
            records,
            shared,
            rtol=rtol,
            atol=atol,
            fit_offset=fit_offset,
            max_runs=DEFAULT_MAX_RUNS if args.max_runs is None else args.max_runs,
            log=log,
            executor=executor,
            verify_limit=None if args.no_verify or resuming else args.verify_limit,
        )
    out = args.output or default_out
    settings = {"rtol": fit.rtol, "atol": fit.atol, "fit_offset": fit_offset}
    outputs = write_fit_outputs(fit, out, plots=not args.no_plots, options=settings)
    fit_json = os.path.join(out, "fit.json")
    if args.json:
        with open(fit_json, encoding="utf-8") as f:
            print(f.read())
    else:
        print(format_fit_report(fit, resume=fit_json))
        for name, comparison in outputs.comparisons.items():
            print()
            if len(outputs.comparisons) > 1:
                print(f"record {name}:")
            print(_summary_of(comparison))
        print(
            f"\nfitted model {outputs.model_file}; outputs in {out}: "
            + ", ".join(os.path.relpath(f, out) for f in outputs.files)
        )
    if fit.stop == "budget":
        log_line(
            f"{records[0].model_path}: the fit stopped on its budget before it converged: "
            f"{fit.message}; its last point and the standard deviations there are in "
            f"{fit_json}; go on with flexmbs fit --resume {fit_json}"
        )
        return EXIT_BUDGET
    if not fit.success:
        error_line(f"{records[0].model_path}: the fit stopped before it converged: {fit.message}")
        return EXIT_FAILED
    return EXIT_OK


def _summary_of(comparison: Any) -> str:
    """A comparison's summary (flexmbs.analysis.compare.format_summary)."""
    from ..analysis.compare import format_summary

    return str(format_summary(comparison))
