"""A result file as pictures: `flexmbs plot` (curves to a PNG), `flexmbs export` (the
deformed shape over time for ParaView) and `flexmbs animate` (a GIF or an MP4)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from ..errors import FlexmbsError
from .options import (
    EXIT_OK,
    RESULT,
    add_command,
    log_line,
    positive_float,
    positive_int,
    refuse_unwritable,
)

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_plot", "add_export", "add_animate"]


def add_plot(commands: Subcommands) -> None:
    """`flexmbs plot RESULT [NAMES]`."""
    pl = add_command(
        commands, "plot", "plot coordinates, sensors and energies to a PNG", _cmd_plot, RESULT
    )
    pl.add_argument(
        "names",
        nargs="*",
        help="coordinate or sensor names, one column of a sensor as NAME[k] or "
        "NAME[label] (tip[1], tip[y]), 'energy', 'energy.kinetic', ... (default: "
        "panels of every coordinate, sensor and energy)",
    )
    pl.add_argument("-o", "--output", help="PNG file (default: RESULT.png)")


def add_export(commands: Subcommands) -> None:
    """`flexmbs export RESULT`."""
    ex = add_command(
        commands,
        "export",
        "the deformed shape over time as one VTKHDF file for ParaView",
        _cmd_export,
        RESULT,
    )
    ex.add_argument("-o", "--output", help="VTKHDF file (default: RESULT.vtkhdf)")
    ex.add_argument(
        "--subdivisions",
        type=positive_int,
        default=4,
        help="centre-line points per beam element (default 4)",
    )


def add_animate(commands: Subcommands) -> None:
    """`flexmbs animate RESULT -o FILM`."""
    an = add_command(
        commands,
        "animate",
        "the deformed mechanism moving, as a GIF or an MP4",
        _cmd_animate,
        RESULT,
    )
    an.add_argument(
        "-o", "--output", required=True, help="file ending in .gif or .mp4, or .png for a frame"
    )
    an.add_argument(
        "--at", type=float, help="with a .png: the time of the frame (s; default: the last)"
    )
    an.add_argument(
        "--scale",
        type=positive_float,
        help="magnify the elastic displacements this many times (default: a tenth of the "
        "arm's size for the run's largest deflection, printed)",
    )
    an.add_argument("--view", choices=("iso", "xy", "xz", "yz"), default="iso", help="default iso")
    an.add_argument("--fps", type=positive_float, default=25.0, help="frames per second")
    an.add_argument(
        "--speed",
        type=positive_float,
        default=1.0,
        help="simulated seconds per second of film (default 1)",
    )
    an.add_argument("--max-frames", type=positive_int, default=250, help="at most this many frames")


def _cmd_plot(args: argparse.Namespace) -> int:
    from ..analysis.plot import IMAGE_FORMATS, plot_result

    if args.output is not None:
        suffix = os.path.splitext(args.output)[1].lstrip(".").lower()
        if suffix not in IMAGE_FORMATS:
            raise FlexmbsError(
                f'{args.output}: unknown image format "{suffix}"; expected a file '
                f"name ending in one of .{', .'.join(IMAGE_FORMATS)}"
            )
        refuse_unwritable(args.output)
    print(f"wrote {plot_result(args.result, args.names, args.output)}")
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    from ..analysis.vtk_export import default_vtk_path, export_vtk

    out = args.output or default_vtk_path(args.result)
    refuse_unwritable(out)
    path, steps = export_vtk(args.result, out, subdivisions=args.subdivisions)
    print(f"wrote {path} ({steps} steps; open it in ParaView)")
    return EXIT_OK


def _cmd_animate(args: argparse.Namespace) -> int:
    from ..analysis.animation import animate_result

    refuse_unwritable(args.output)
    path, frames = animate_result(
        args.result,
        args.output,
        scale=args.scale,
        view=args.view,
        fps=args.fps,
        speed=args.speed,
        max_frames=args.max_frames,
        at=args.at,
        log=log_line,
    )
    print(f"wrote {path} ({frames} frames)")
    return EXIT_OK
