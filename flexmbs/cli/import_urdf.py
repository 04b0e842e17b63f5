"""`flexmbs import-urdf`: a robot's URDF as a flexmbs model file, links made beams on
request."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from ..errors import FlexmbsError
from .options import EXIT_OK, add_command, default_name, refuse_unwritable

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_import_urdf"]


def add_import_urdf(commands: Subcommands) -> None:
    """`flexmbs import-urdf URDF`."""
    ur = add_command(
        commands, "import-urdf", "a robot's URDF as a flexmbs model file", _cmd_import_urdf
    )
    ur.add_argument("urdf", help="the robot's URDF file")
    ur.add_argument("-o", "--output", help="model file (default: ROBOT.toml)")
    ur.add_argument(
        "--flexible",
        action="append",
        metavar="LINK[:AXIS[:ELEMENTS]]",
        help="make this link a beam along AXIS of its frame (x, y, z, -x, ... or X,Y,Z; "
        "default: towards the joint it carries), in ELEMENTS elements (default: by its "
        "length) (repeatable)",
    )
    ur.add_argument(
        "--gravity",
        nargs=3,
        type=float,
        default=(0.0, 0.0, -9.81),
        metavar=("GX", "GY", "GZ"),
        help="m/s^2 (default 0 0 -9.81)",
    )
    ur.add_argument(
        "--density",
        type=float,
        metavar="KG_M3",
        help="give links without <inertial> the mass and inertia of their collision "
        "(else visual) shapes at this density, kg/m^3 (1000: water)",
    )
    ur.add_argument(
        "--material",
        metavar="NAME|E,DENSITY[,POISSON]",
        help="the --flexible links' material: aluminium (default), steel, titanium, or "
        "Young's modulus (Pa), density (kg/m^3) and Poisson's ratio (default 0.3)",
    )
    ur.add_argument(
        "--floating-base",
        action="store_true",
        help="join the root link to the ground by a free joint (default: the root link "
        "is the ground)",
    )


def _cmd_import_urdf(args: argparse.Namespace) -> int:
    from ..formats.urdf import import_urdf

    out = args.output or default_name(args.urdf, suffix=".toml")
    if os.path.exists(out) and os.path.exists(args.urdf) and os.path.samefile(out, args.urdf):
        raise FlexmbsError(f"{out}: the model file would overwrite the URDF; choose another -o")
    refuse_unwritable(out)
    done = import_urdf(  # it reads back
        args.urdf,
        args.flexible or (),
        args.gravity,
        density=args.density,
        floating_base=args.floating_base,
        material=args.material,
    )
    with open(out, "w") as f:
        f.write(done.text)
    joints = sum(1 for j in done.model.joints.values() if j.type != "fixed")
    print(f"wrote {out}: {len(done.model.bodies)} bodies, {joints} moving joints")
    for note in done.notes:
        print(f"  note: {note}")
    return EXIT_OK
