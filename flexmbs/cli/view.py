"""`flexmbs view`: a result or a model in the browser's 3-D viewer (its work is
flexmbs.viewer.command's)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .options import (
    add_command,
    add_set_option,
    finite_float,
    folder_problem,
    log_line,
    positive_float,
    positive_int,
)

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_view"]


def add_view(commands: Subcommands) -> None:
    """`flexmbs view TARGET`."""
    p = add_command(
        commands,
        "view",
        "the run or the model in an interactive 3-D viewer in the browser",
        _cmd_view,
    )
    p.add_argument("target", help="a result file (.h5) or a model file (.toml)")
    p.add_argument("--html", metavar="FILE", help="write one self-contained HTML file, no server")
    p.add_argument("--screenshot", metavar="PNG", help="a picture in a headless Chromium")
    p.add_argument("--urdf", help="the robot's URDF for its meshes (default: the imported one)")
    p.add_argument(
        "--scale",
        type=positive_float,
        help="starting deflection scale (default: from the run's largest deflection)",
    )
    p.add_argument("--at", type=finite_float, help="starting time (s)")
    p.add_argument("--view", choices=("iso", "xz", "xy", "yz"), default="iso", help="starting view")
    p.add_argument(
        "--field", help="colour map: outer_fibre_strain, N, V_y, V_z, T, M_y, M_z, displacement"
    )
    p.add_argument("--max-frames", type=positive_int, default=600, help="default 600")
    p.add_argument("--size", default="960x600", help="screenshot size WxH (default 960x600)")
    add_set_option(p, "with a model file: override a value by its dotted path (repeatable)")
    p.add_argument("--port", type=int, default=0, help="local port (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="serve, without opening a browser")


def _cmd_view(args: argparse.Namespace) -> int:
    from ..viewer.command import view_command

    return view_command(args, log_line, folder_problem)
