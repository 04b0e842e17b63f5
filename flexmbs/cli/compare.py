"""`flexmbs compare`: a result file against an experiment file (metrics, spectra,
plots, a report)."""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING

from .options import (
    EXIT_OK,
    add_command,
    add_json_option,
    add_window_option,
    default_name,
    finite_float,
    window_of,
)

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_compare"]


def add_compare(commands: Subcommands) -> None:
    """`flexmbs compare RESULT EXPERIMENT --map MAP`."""
    from ..analysis.experiment import GAP_POLICIES  # light: the fit's modules load scipy

    c = add_command(
        commands,
        "compare",
        "compare a result file with an experiment file (metrics, spectra, plots, reports)",
        _cmd_compare,
    )
    c.add_argument("result", help="result file (HDF5) of a run")
    c.add_argument("experiment", help="experiment file (CSV or HDF5)")
    c.add_argument(
        "--map",
        required=True,
        metavar="MAP.toml",
        help="channel map: experiment channels to sensors, calibration, filters, alignment",
    )
    c.add_argument(
        "-o",
        "--output",
        metavar="REPORT_DIR",
        help="folder of the report (default: RESULT_vs_EXPERIMENT_compare here)",
    )
    add_json_option(c, "print the JSON report")
    c.add_argument(
        "--gaps",
        choices=GAP_POLICIES,
        help="missing values in the experiment: error, interpolate or cut (default: the map's)",
    )
    c.add_argument(
        "--group",
        help="HDF5 group of the experiment (default: the map's, or "
        "the one group with a time dataset)",
    )
    c.add_argument(
        "--offset", type=finite_float, help="t_exp - t_sim (s), instead of the map's alignment"
    )
    c.add_argument(
        "--segment", type=float, help="Welch segment (s) of the spectra (default: the whole record)"
    )
    add_window_option(
        c,
        "compare the samples from simulation time T0 to T1 s only (the alignment "
        "still sees the whole record)",
    )
    c.add_argument("--no-plots", action="store_true", help="no PNG plots")


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..analysis.compare import compare_files, format_summary, write_report

    comparison = compare_files(
        args.result,
        args.experiment,
        args.map,
        gaps=args.gaps,
        group=args.group,
        segment=args.segment,
        offset=args.offset,
        window=window_of(args),
    )
    out = args.output or default_name(args.result, args.experiment, suffix="_compare")
    files = write_report(comparison, out, plots=not args.no_plots)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=1))
    else:
        print(format_summary(comparison))
        print(f"\nreport in {out}: " + ", ".join(os.path.basename(f) for f in files))
    return EXIT_OK
