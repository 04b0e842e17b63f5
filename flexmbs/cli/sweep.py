"""`flexmbs sweep`: a parameter study, one run and one result file per case, on dask
or here."""

from __future__ import annotations

import argparse
import os
from concurrent.futures import Executor
from typing import TYPE_CHECKING

from .options import (
    EXIT_FAILED,
    EXIT_OK,
    MODEL,
    add_command,
    add_quiet_option,
    add_set_option,
    error_line,
    log_line,
    positive_int,
    refuse_unwritable,
)

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_sweep"]


def add_sweep(commands: Subcommands) -> None:
    """`flexmbs sweep MODEL --param ... -o FOLDER`."""
    sw = add_command(
        commands,
        "sweep",
        "a parameter study: one run and file per case, on dask",
        _cmd_sweep,
        MODEL,
    )
    sw.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="PATH=V1,V2,...|PATH=LO:HI:N",
        help="a swept value (repeatable: every combination runs)",
    )
    sw.add_argument("-o", "--output", required=True, help="folder of the result files")
    sw.add_argument(
        "--summary",
        action="append",
        metavar="NAME[:STAT]",
        help="an output per case: a coordinate, sensor (NAME[k] for a column) or "
        "energy.COMPONENT; STAT final (default), max, min, maxabs, mean",
    )
    add_set_option(sw, "for every case")
    sw.add_argument("--scheduler", help="a dask scheduler's address (default: a local cluster)")
    sw.add_argument("--workers", type=positive_int, help="local workers (default: one a core)")
    sw.add_argument("--serial", action="store_true", help="no dask: the cases one by one here")
    sw.add_argument(
        "--verify",
        action="store_true",
        help="run each case also ten times tighter and add the convergence check "
        "(as flexmbs verify) to its row",
    )
    add_quiet_option(sw, "no progress lines")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..analysis.distributed import dask_executor
    from ..analysis.sweep import failed_cases, format_summary, parse_sweep_parameter, run_sweep

    parameters = [parse_sweep_parameter(p) for p in args.param]
    refuse_unwritable(os.path.join(args.output, "summary.csv"), shown=args.output)
    log = None if args.quiet else log_line

    def sweep(executor: Executor | None) -> list[dict[str, object]]:
        return run_sweep(
            args.model,
            parameters,
            args.output,
            args.set or (),
            args.summary or (),
            executor,
            log,
            verify=args.verify,
        )

    if args.serial:
        rows = sweep(None)
    else:
        with dask_executor(args.scheduler, args.workers) as executor:
            rows = sweep(executor)
    print(format_summary(rows))
    print(f"wrote {len(rows)} result files and summary.csv in {args.output}")
    failed = failed_cases(rows)
    for case, why in failed:
        error_line(f"{case}: {why}")
    if failed:
        error_line(f"{len(failed)} of {len(rows)} cases did not pass")
    return EXIT_FAILED if failed else EXIT_OK
