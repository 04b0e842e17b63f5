"""What the commands of the command line share: the exit statuses, the lines written
to stderr, the argparse types of numbers, the options several commands take
(--set, --json, --quiet, --window), and the checks of where an output file goes."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import FlexmbsError, one_line

if TYPE_CHECKING:
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "EXIT_OK",
    "EXIT_FAILED",
    "EXIT_INPUT",
    "EXIT_BUDGET",
    "error_line",
    "log_line",
    "finite_float",
    "positive_float",
    "greater_than_one",
    "positive_int",
    "MODEL",
    "RESULT",
    "add_command",
    "add_set_option",
    "add_tolerance_options",
    "add_json_option",
    "add_quiet_option",
    "add_window_option",
    "window_of",
    "default_name",
    "folder_problem",
    "refuse_unwritable",
]

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_BUDGET = 0, 1, 2, 3


def error_line(text: str) -> None:
    """`flexmbs: error: TEXT` on stderr, on one line."""
    sys.stderr.write(f"flexmbs: error: {one_line(text)}\n")


def log_line(text: str) -> None:
    """`flexmbs: TEXT` on stderr, at once (progress and warnings)."""
    sys.stderr.write(f"flexmbs: {text}\n")
    sys.stderr.flush()


def finite_float(text: str) -> float:
    """argparse type: a finite number."""
    value = _parsed(float, text, "a finite number")
    if not abs(value) < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    value = _parsed(float, text, "a positive number")
    if not value > 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def greater_than_one(text: str) -> float:
    """argparse type: a finite number > 1."""
    value = _parsed(float, text, "a number > 1")
    if not value > 1.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 1, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    value = _parsed(int, text, "a whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _parsed(kind: Callable[[str], Any], text: str, what: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None


MODEL = ("model", "model file (TOML)")
RESULT = ("result", "result file (HDF5)")
"""The operand most commands take: (its name, its help)."""


def add_command(
    commands: Subcommands,
    name: str,
    help_text: str,
    run: Callable[[argparse.Namespace], int],
    operand: tuple[str, str] | None = None,
) -> argparse.ArgumentParser:
    """The parser of `flexmbs NAME [OPERAND]`, which main runs by `run(args)`."""
    parser = commands.add_parser(name, help=help_text)
    parser.set_defaults(fn=run)
    if operand is not None:
        parser.add_argument(operand[0], help=operand[1])
    return parser


def add_set_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """The repeatable `--set PATH=VALUE` override of a model file's value."""
    parser.add_argument("--set", action="append", metavar="PATH=VALUE", help=help_text)


def add_tolerance_options(
    parser: argparse.ArgumentParser,
    number: Callable[[str], float] = float,
    of_the_run: str = "",
) -> None:
    """`--rtol` and `--atol`: the integrator's relative and absolute tolerances over
    the model file's, numbers of type `number`."""
    parser.add_argument("--rtol", type=number, help="relative tolerance" + of_the_run)
    parser.add_argument("--atol", type=number, help="absolute tolerance" + of_the_run)


def add_json_option(
    parser: argparse.ArgumentParser, help_text: str = "machine-readable output"
) -> None:
    """`--json`: the command's output as JSON."""
    parser.add_argument("--json", action="store_true", help=help_text)


def add_quiet_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`-q`, `--quiet`: fewer lines on stderr (`help_text` says which)."""
    parser.add_argument("-q", "--quiet", action="store_true", help=help_text)


def add_window_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """`--window T0 T1`: a span of time (s), checked by window_of."""
    parser.add_argument("--window", nargs=2, type=float, metavar=("T0", "T1"), help=help_text)


def window_of(args: argparse.Namespace) -> tuple[float, float] | None:
    """The --window T0 T1 of a command, checked: 0 <= T0 < T1, finite (None without
    one)."""
    if args.window is None:
        return None
    t0, t1 = float(args.window[0]), float(args.window[1])
    if not (0.0 <= t0 < t1 and math.isfinite(t1)):
        raise FlexmbsError(f"--window {t0:g} {t1:g}: expected 0 <= T0 < T1 (s)")
    return t0, t1


def default_name(*paths: str, suffix: str) -> str:
    """NAME1_vs_NAME2 + suffix in the current folder, from the files' names (NAME +
    suffix for one file)."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    return "_vs_".join(stems) + suffix


def folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the folder of `path` cannot hold it (None if it can): made when missing,
    as the result writer does, unless that fails; one that cannot be written on (a
    read-only file system, no permission)."""
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        return f"the folder {folder} cannot be made ({exc.strerror or exc})"
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return f"the folder {folder} cannot be written on ({exc.strerror or exc})"
    return None


def refuse_unwritable(path: str | os.PathLike[str], shown: str | None = None) -> None:
    """Raise `SHOWN: why` (FlexmbsError: exit status 2) when the folder of `path`
    cannot hold it (folder_problem); `shown` is the name the user gave (default
    `path`)."""
    problem = folder_problem(path)
    if problem:
        raise FlexmbsError(f"{path if shown is None else shown}: {problem}")
