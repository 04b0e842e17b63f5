"""`flexmbs run` (a model file to a result file) and `flexmbs verify` (the run again
ten times tighter, and whether its outputs converged)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import FlexmbsError
from ..model.description import CONSTRAINT_FORMULATIONS, FORMULATIONS, SOLVER_METHODS
from .options import (
    EXIT_FAILED,
    EXIT_INPUT,
    EXIT_OK,
    MODEL,
    add_command,
    add_json_option,
    add_quiet_option,
    add_set_option,
    add_tolerance_options,
    add_window_option,
    default_name,
    error_line,
    greater_than_one,
    log_line,
    positive_float,
    refuse_unwritable,
    window_of,
)

if TYPE_CHECKING:
    from ..model.description import Model, SolverSettings
    from .options import Subcommands

__all__ = ["add_run", "add_verify"]


def add_run(commands: Subcommands) -> None:
    """`flexmbs run MODEL`."""
    r = add_command(
        commands, "run", "simulate a model file and write an HDF5 result file", _cmd_run, MODEL
    )
    r.add_argument("-o", "--output", help="result file (default: MODEL_NAME.h5 here)")
    _add_run_settings(r, float, "")
    r.add_argument(
        "--formulation",
        choices=FORMULATIONS,
        help="joint (M* u' = Q* solved whole, the default) or order-n "
        "(Huang's tip-to-base elimination; trees)",
    )
    r.add_argument(
        "--constraints",
        choices=CONSTRAINT_FORMULATIONS,
        help="formulation of closed loops and rolling contacts: ggl "
        "(stabilised index 2, the default) or projection (Shui and Zhang "
        "1995; bdf)",
    )
    r.add_argument(
        "--rho-inf",
        type=float,
        metavar="RHO",
        help="galpha: spectral radius at infinity in [0, 1] (the amplitude "
        "factor per step of a mode the step does not resolve)",
    )
    r.add_argument(
        "--fixed-step",
        type=float,
        metavar="H",
        help="galpha: a constant step (s) without error control",
    )
    add_set_option(
        r,
        "override a value of the model file by its dotted path "
        "(repeatable), e.g. --set joints.j1.initial=0.2",
    )
    add_quiet_option(r, "no progress, no summary")


def add_verify(commands: Subcommands) -> None:
    """`flexmbs verify MODEL`."""
    v = add_command(
        commands,
        "verify",
        "run a model at its tolerance and ten times tighter, and say whether its outputs converged",
        _cmd_verify,
        MODEL,
    )
    v.add_argument("-o", "--output", help="result file of the run at the model's tolerance")
    _add_run_settings(v, positive_float, " of the run")
    v.add_argument(
        "--factor",
        type=greater_than_one,
        default=10.0,
        help="the second run's tolerances are the first's divided by this (default 10)",
    )
    v.add_argument(
        "--limit",
        type=positive_float,
        default=1e-3,
        help="largest change of an output group, relative to its scale, that passes "
        "(default 1e-3); exit 1 when a group exceeds it",
    )
    add_window_option(
        v,
        "compare the two runs from T0 to T1 s only (the runs start at 0; --t-end defaults to T1)",
    )
    add_set_option(v, "as for run")
    add_json_option(v)
    add_quiet_option(v, "no progress lines")


def _add_run_settings(
    parser: argparse.ArgumentParser, number: Callable[[str], float], of_the_run: str
) -> None:
    """--t-end, --rtol, --atol, --solver and --output-step, numbers of type `number`."""
    parser.add_argument("--t-end", type=number, help="end time (s)")
    add_tolerance_options(parser, number, of_the_run)
    parser.add_argument("--solver", help="integrator: " + ", ".join(SOLVER_METHODS))
    parser.add_argument("--output-step", type=number, help="time between outputs (s)")


def _cmd_run(args: argparse.Namespace) -> int:
    from ..formats.toml_reader import load_model
    from ..io.output_lock import refuse_if_locked
    from ..simulation.run import simulate

    model = load_model(args.model, overrides=args.set or ())
    out = args.output or default_name(args.model, suffix=".h5")
    if os.path.exists(out) and os.path.samefile(out, args.model):
        error_line(f"{out}: the result file would overwrite the model file; choose another -o")
        return EXIT_INPUT
    refuse_if_locked(out)  # another run writes it: that first
    _refuse_result_path(out)
    if os.path.exists(out) and not args.quiet:
        log_line(f"overwriting the earlier result {out}")
    sim = simulate(
        model,
        out,
        t_end=args.t_end,
        rtol=args.rtol,
        atol=args.atol,
        method=args.solver,
        output_step=args.output_step,
        formulation=args.formulation,
        constraints=args.constraints,
        rho_inf=args.rho_inf,
        fixed_step=args.fixed_step,
        progress=sys.stderr.isatty() and not args.quiet,
        log=log_line,
        compile_elsewhere=True,
    )
    st = sim.statistics
    summary = (
        f"{sim.status}: t = {sim.t[-1]:.6g} s, {st.get('nsteps', 0)} steps, "
        f"{st.get('nres', 0)} evaluations, {st.get('wall_time', 0.0):.3g} s "
        f"integrating; results in {out}"
    )
    if sim.status == "finished":
        if not args.quiet:
            print("solver " + _settings_used(model, args).summary())
            print(summary)
        return EXIT_OK
    error_line(f"{args.model}: the integration failed: {sim.message} ({summary})")
    return EXIT_FAILED


def _settings_used(model: Model, args: argparse.Namespace) -> SolverSettings:
    """The solver settings a run of `model` with the options `args` uses (as simulate
    takes them: the options over the model's settings for the method it runs)."""
    from ..errors import ModelError

    try:
        return model.solver.with_changes(
            args.solver,
            args.t_end,
            args.rtol,
            args.atol,
            None,
            args.formulation,
            args.constraints,
            args.rho_inf,
            args.fixed_step,
        )
    except ModelError as exc:
        raise exc.with_source(args.model) from None


def _cmd_verify(args: argparse.Namespace) -> int:
    from ..formats.toml_reader import load_model
    from ..simulation.convergence import format_convergence
    from ..simulation.run import simulate

    model = load_model(args.model, overrides=args.set or ())
    out = args.output
    if out is not None:
        _refuse_result_path(out)
    window = window_of(args)
    sim = simulate(
        model,
        out,
        t_end=args.t_end if args.t_end is not None or window is None else window[1],
        rtol=args.rtol,
        atol=args.atol,
        method=args.solver,
        output_step=args.output_step,
        log=None if args.quiet else log_line,
        compile_elsewhere=True,
        verify=True,
        verify_factor=args.factor,
        verify_limit=args.limit,
        verify_window=window,
    )
    conv = sim.convergence
    assert conv is not None  # verify=True
    if args.json:
        print(json.dumps(conv.as_dict(), indent=1))
    else:
        print(format_convergence(conv, args.model))
    return EXIT_OK if conv.passed else EXIT_FAILED


def _refuse_result_path(path: str) -> None:
    """Raise `PATH: why` (FlexmbsError: exit status 2) when `path` cannot take a result
    file: a folder, a folder that cannot be made (refuse_unwritable makes a missing
    one), or an existing file that is not a flexmbs result (never written over)."""
    if os.path.isdir(path):
        raise FlexmbsError(f"{path}: is a folder; expected the name of a result file (.h5)")
    refuse_unwritable(path)
    if os.path.exists(path):
        import h5py

        try:
            with h5py.File(path, "r") as f:
                if "flexmbs_version" in f.attrs:
                    return
        except OSError:
            pass
        raise FlexmbsError(
            f"{path}: exists and is not a flexmbs result file; it is not written over "
            "(remove it or choose another -o)"
        )
