"""`flexmbs export-fmu`: a model file as an FMI 2.0 co-simulation unit."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import FlexmbsError
from .options import (
    EXIT_OK,
    MODEL,
    add_command,
    add_set_option,
    add_tolerance_options,
    default_name,
    refuse_unwritable,
)

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_export_fmu"]


def add_export_fmu(commands: Subcommands) -> None:
    """`flexmbs export-fmu MODEL`."""
    fm = add_command(
        commands,
        "export-fmu",
        "a model file as an FMI 2.0 co-simulation unit (its input ports in, sensors out)",
        _cmd_export_fmu,
        MODEL,
    )
    fm.add_argument("-o", "--output", help="the FMU (default: MODEL.fmu here)")
    fm.add_argument("--solver", choices=("bdf", "galpha"), help="the unit's integrator")
    add_tolerance_options(fm)
    fm.add_argument("--fixed-step", type=float, metavar="H", help="galpha: a constant step (s)")
    add_set_option(fm, "override a value of the model file by its dotted path (repeatable)")


def _cmd_export_fmu(args: argparse.Namespace) -> int:
    from ..control.fmu import export_fmu

    out = args.output or default_name(args.model, suffix=".fmu")
    if not out.endswith(".fmu"):
        raise FlexmbsError(f"{out}: expected a file name ending in .fmu")
    refuse_unwritable(out)
    settings = {
        "method": args.solver,
        "rtol": args.rtol,
        "atol": args.atol,
        "fixed_step": args.fixed_step,
    }
    path = export_fmu(args.model, out, args.set or (), settings)
    print(f"wrote {path}: FMI 2.0 co-simulation (flexmbs and pythonfmu on the target)")
    return EXIT_OK
