"""`flexmbs precompile`: every kernel compiled into the kernel cache now, not at a first
run (the walk over the workloads is flexmbs.cli.precompile's, imported only when the
command runs: it brings numba in)."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ..errors import FlexmbsError
from .options import EXIT_FAILED, EXIT_OK, add_command, error_line

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["add_precompile"]


def add_precompile(commands: Subcommands) -> None:
    """`flexmbs precompile`."""
    pc = add_command(
        commands,
        "precompile",
        "compile every kernel into the kernel cache now, not at a first run",
        _cmd_precompile,
    )
    pc.add_argument(
        "--native",
        action="store_true",
        help="for this machine's processor; times them against the generic kernels "
        "on H2 and a 50-element arm and keeps them for later runs if faster",
    )
    pc.add_argument(
        "--jobs",
        type=int,
        help="processes compiling at once (default: 2, or 1 on one core)",
    )
    pc.add_argument(
        "--no-timing",
        dest="timing",
        action="store_false",
        help="with --native: keep the native kernels without timing them",
    )
    pc.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="with --native: timed runs of each kind per case (default 3)",
    )


def _cmd_precompile(args: argparse.Namespace) -> int:
    from . import precompile as pre

    if args.jobs is None:
        args.jobs = min(2, os.cpu_count() or 1)
    if args.jobs < 1:
        raise FlexmbsError(f"--jobs: expected a positive number of processes, got {args.jobs}")
    kernels = "native" if args.native else None
    print(f"compiling what the kernel cache lacks, in {args.jobs} process(es)", flush=True)
    r = pre.precompile(jobs=args.jobs, kernels=kernels)
    _print_compiled(r)
    if r["uncached"]:
        error_line(
            "kernels that no workload reached (they compile on first use): "
            + ", ".join(r["uncached"])
        )
        return EXIT_FAILED
    if not args.native:
        return EXIT_OK
    target = r["target"]
    if not args.timing:
        pre.write_native_marker(target["cache"], {})
        print("later runs on this machine use the native kernels (not timed: --no-timing)")
        return EXIT_OK
    print(f"timing generic against native kernels ({args.repeat} runs each, interleaved):")
    speed = pre.kernel_speed(repeat=args.repeat, log=print)
    native, sentence = pre.native_choice(speed)
    if native:
        pre.write_native_marker(target["cache"], speed)
    print(sentence)
    return EXIT_OK


def _print_compiled(r: dict[str, Any]) -> None:
    """The lines of what precompile() did: where the kernels are, how many were
    compiled, and each process's share."""
    target = r["target"]
    where = (
        "the kernels shipped with this installation, then " if target["shipped"] else ""
    ) + f"the kernel cache {target['cache']}"
    print(f"kernels for the {target['kind']} processor, from {where}")
    print(
        f"{r['kernels']} kernels; {r['compiled']} functions compiled now, in "
        f"{r['seconds']:.0f} s over {r['workloads']} workloads"
    )
    for k, p in enumerate(r["parts"] if len(r["parts"]) > 1 else []):
        print(
            f"  process {k + 1}: {p['compiled']} functions compiled ({p['kernels_compiled']} "
            f"kernels), {p['loaded']} kernels loaded, {p['waits']} waits for another "
            f"({p['wait_seconds']:.0f} s), {p['cpu_seconds']:.0f} s of CPU"
        )
