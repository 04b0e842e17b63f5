"""`flexmbs view TARGET`: serve the viewer of a result or a model on this machine and
open it in the browser, or write it as one HTML file (--html) or a PNG (--screenshot)."""

from __future__ import annotations

import argparse
import re
import webbrowser
from collections.abc import Callable
from typing import Any

from ..errors import FlexmbsError
from .array_text import unpacked
from .scene import FIELDS
from .sources import scene_of

__all__ = ["view_command", "viewer_options"]

EXIT_OK, EXIT_INPUT = 0, 2


def viewer_options(args: argparse.Namespace) -> dict[str, Any]:
    """The page's starting settings from the command line."""
    options: dict[str, Any] = {"view": args.view}
    if args.at is not None:
        options["time"] = args.at
    if args.field is not None:
        keys = [k for k, _, _ in FIELDS]
        if args.field not in keys:
            raise FlexmbsError(f'--field "{args.field}": expected one of {", ".join(keys)}')
        options["field"] = args.field
    return options


def _size(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"(\d+)x(\d+)", text)
    if not m or not (100 <= int(m.group(1)) <= 8000 and 100 <= int(m.group(2)) <= 8000):
        raise FlexmbsError(f'--size "{text}": expected WIDTHxHEIGHT in pixels, e.g. 960x600')
    return int(m.group(1)), int(m.group(2))


def view_command(
    args: argparse.Namespace,
    log: Callable[[str], None],
    folder_problem: Callable[[str], str | None],
) -> int:
    """Run `flexmbs view` (module docstring); `log` writes a line for the user,
    `folder_problem` says why a file cannot be written there (None: it can)."""
    options = viewer_options(args)
    size = _size(args.size)
    for out in (args.html, args.screenshot):
        problem = folder_problem(out) if out else None
        if problem:
            raise FlexmbsError(f"{out}: {problem}")
    target: Any = args.target
    if args.set:
        if not str(target).lower().endswith(".toml"):
            raise FlexmbsError(f"{target}: --set changes a model file (.toml), not a result")
        from ..formats.toml_reader import load_model

        target = load_model(target, overrides=args.set)
    if args.at is not None and not abs(args.at) < float("inf"):
        raise FlexmbsError(f"--at {args.at}: expected a finite time (s)")
    scene = scene_of(target, urdf=args.urdf, max_frames=args.max_frames, scale=args.scale)
    if args.at is not None:
        times = unpacked(scene.data["time"])
        if len(times) and not times[0] <= args.at <= times[-1]:
            raise FlexmbsError(
                f"{args.target}: --at {args.at:g} s lies outside the outputs of the run, "
                f"{times[0]:g} .. {times[-1]:g} s"
            )
    log(scene.scale.describe())
    for warning in scene.warnings:
        log(f"warning: {warning}")
    if args.html or args.screenshot:
        if args.html:
            from .page import write_html

            print(f"wrote {write_html(scene, args.html, options)} ({scene.frames} frames)")
        if args.screenshot:
            from .browser import screenshot

            print(f"wrote {screenshot(scene, args.screenshot, size, options)}")
        return EXIT_OK
    from .server import ViewerServer

    server = ViewerServer(scene, args.port, options)
    print(f"the viewer of {args.target} is at {server.url} (Ctrl-C to stop)", flush=True)
    if not args.no_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return EXIT_OK
