"""The `flexmbs` command line: run | verify | info | energy | plot | export | animate |
view | sweep | import-urdf | export-fmu | equilibrium | linearize | precompile | modes |
compare | fit.

Each command's parser and the function that runs it are in one module of this package
(a family of commands shares one: run and verify in `run`, info and energy in `info`,
plot, export and animate in `pictures`, equilibrium, linearize and modes in `linear`);
`options` holds what they share; here the parser is assembled from them (COMMANDS)
and `main` runs the command chosen.

Errors in the input are reported on one line naming the file, the item and the field,
with exit status 2 and no traceback. `flexmbs run` exits 1 when the integration fails
(the result file then records why), `flexmbs energy` exits 1 when the energy
criterion is not met (unless --report-only), `flexmbs fit` exits 3 when it stops on its
budget of runs before it converges (its outputs are written all the same, the standard
deviations those of its last point; `--resume` goes on) and 1 when the search fails
otherwise. A run ended by
SIGTERM or SIGHUP records it in its result file and exits with 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import FlexmbsError, FlexmbsWarning, ResultWriteError, RunTerminated
from . import (
    compare,
    export_fmu,
    fit,
    import_urdf,
    info,
    linear,
    pictures,
    precompile_command,
    run,
    sweep,
    view,
)
from .options import EXIT_FAILED, EXIT_INPUT, error_line, log_line

if TYPE_CHECKING:
    from .options import Subcommands

__all__ = ["main"]

COMMANDS: tuple[Callable[[Subcommands], None], ...] = (
    run.add_run,
    run.add_verify,
    info.add_info,
    info.add_energy,
    pictures.add_plot,
    pictures.add_export,
    pictures.add_animate,
    view.add_view,
    sweep.add_sweep,
    import_urdf.add_import_urdf,
    export_fmu.add_export_fmu,
    linear.add_equilibrium,
    linear.add_linearize,
    precompile_command.add_precompile,
    linear.add_modes,
    compare.add_compare,
    fit.add_fit,
)
"""Each command's parser, added in the order `flexmbs --help` lists them."""


def _parser() -> argparse.ArgumentParser:
    """The parser of the `flexmbs` command line: its subcommands from COMMANDS."""
    p = argparse.ArgumentParser(
        prog="flexmbs", description="Deformable multibody dynamics in joint coordinates."
    )
    p.add_argument("--version", action="version", version=f"flexmbs {__version__}")
    commands = p.add_subparsers(dest="command", required=True)
    for add_command in COMMANDS:
        add_command(commands)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    from ..runtime.compile_notice import CompileWatch

    args = _parser().parse_args(argv)
    quiet = getattr(args, "quiet", False)
    with (
        warnings.catch_warnings(),
        CompileWatch(write=None if quiet else _write_stderr, live=sys.stderr.isatty()),
    ):
        warnings.showwarning = _warn_on_one_line
        warnings.simplefilter("default", FlexmbsWarning)  # each once a command
        return _run_command(args)


def _os_error_text(exc: OSError) -> str:
    """An OSError as FILE: reason (the system's words, without its errno)."""
    if exc.filename is None:
        return str(exc)
    text = f"{exc.filename}: {exc.strerror or exc}"
    return text if exc.filename2 is None else f"{text} ({exc.filename2})"


def _warn_on_one_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """warnings.showwarning for the command line: a FlexmbsWarning as one line."""
    if issubclass(category, FlexmbsWarning):
        log_line(f"warning: {message}")
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


_SHOW_WARNING = warnings.showwarning


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _run_command(args: argparse.Namespace) -> int:
    output = getattr(args, "output", None)
    if output is not None and not output.strip():
        error_line(
            f"-o {output!r}: expected the name of a file or folder (leave -o out for the default)"
        )
        return EXIT_INPUT
    if os.environ.get("FLEXMBS_DEBUG"):
        return args.fn(args)  # tracebacks for developers
    try:
        status = args.fn(args)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
        return status
    except ResultWriteError as exc:
        error_line(str(exc))
        return EXIT_FAILED
    except FlexmbsError as exc:
        error_line(str(exc))
        return EXIT_INPUT
    except BrokenPipeError:
        # the reader of stdout has gone (`flexmbs info x.h5 | head -1`): end silently,
        # with the status of a Unix tool that SIGPIPE ends
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as exc:
        error_line(_os_error_text(exc))
        return EXIT_INPUT
    except RunTerminated as exc:
        error_line(str(exc))
        return 128 + exc.signum
    except KeyboardInterrupt:
        error_line("interrupted by the user")
        return 130


if __name__ == "__main__":
    sys.exit(main())
