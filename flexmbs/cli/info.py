"""`flexmbs info` (what a result file holds) and `flexmbs energy` (its energy
balance)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .options import EXIT_FAILED, EXIT_OK, RESULT, add_command, add_json_option, positive_float

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_info", "add_energy"]


def add_info(commands: Subcommands) -> None:
    """`flexmbs info RESULT`."""
    add_command(commands, "info", "what a result file holds", _cmd_info, RESULT)


def add_energy(commands: Subcommands) -> None:
    """`flexmbs energy RESULT`."""
    e = add_command(
        commands,
        "energy",
        "energy balance: its drift against the energy held, the work done and the tolerance",
        _cmd_energy,
        RESULT,
    )
    add_json_option(e)
    e.add_argument(
        "--max-ratio",
        type=positive_float,
        metavar="X",
        help="the criterion: max|E-E0| / (largest energy held + work done) at most "
        "this (default 1e-2); exit 1 when it is not met",
    )
    e.add_argument(
        "--report-only", action="store_true", help="exit 0 whether or not the criterion is met"
    )
    e.add_argument(
        "--accept-large-deformation",
        action="store_true",
        help="pass although a beam left the small-deformation range (its balance "
        "closes, but the beam model no longer describes the beam)",
    )


def _cmd_info(args: argparse.Namespace) -> int:
    from ..analysis.info import describe_result

    print(describe_result(args.result))
    return EXIT_OK


def _cmd_energy(args: argparse.Namespace) -> int:
    from ..analysis.energy import DEFAULT_RATIO_LIMIT, energy_balance, format_energy_report
    from ..io.results import open_result

    limit = DEFAULT_RATIO_LIMIT if args.max_ratio is None else args.max_ratio
    bal = energy_balance(
        open_result(args.result),
        ratio_limit=limit,
        accept_large_deformation=args.accept_large_deformation,
    )
    if args.json:
        print(json.dumps(bal, indent=1))
    else:
        print(format_energy_report(bal))
    if args.report_only:
        return EXIT_OK
    return EXIT_OK if bal["passed"] else EXIT_FAILED
