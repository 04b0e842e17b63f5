"""A model about one state: `flexmbs modes` (natural frequencies), `flexmbs
equilibrium` (the static equilibrium, written as a model) and `flexmbs linearize`
(M dy'' + D dy' + K dy = 0 in independent coordinates)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import __version__
from ..errors import FlexmbsError
from .options import (
    EXIT_FAILED,
    EXIT_OK,
    MODEL,
    add_command,
    add_json_option,
    add_quiet_option,
    add_set_option,
    default_name,
    error_line,
    log_line,
    refuse_unwritable,
)

if TYPE_CHECKING:
    from ..analysis.equilibrium import Equilibrium
    from ..model.compiled import CompiledModel
    from ..model.description import Model
    from .options import Subcommands

__all__ = ["add_modes", "add_equilibrium", "add_linearize", "EQUILIBRIUM_HEADER"]

EQUILIBRIUM_HEADER = "# Static equilibrium of"


def add_modes(commands: Subcommands) -> None:
    """`flexmbs modes MODEL`."""
    mo = add_command(
        commands,
        "modes",
        "natural frequencies of the beam bodies and of "
        "the model linearised about its initial state",
        _cmd_modes,
        MODEL,
    )
    mo.add_argument("--body", help="only this beam body (the whole model is always linearised)")
    mo.add_argument(
        "--count",
        type=int,
        default=10,
        help="modes listed per beam body alone (default 10; all if fewer)",
    )
    add_set_option(
        mo, "override a value of the model file (repeatable), e.g. --set bodies.link2.elements=10"
    )
    add_json_option(mo)


def add_equilibrium(commands: Subcommands) -> None:
    """`flexmbs equilibrium MODEL`."""
    eqp = add_command(
        commands,
        "equilibrium",
        "static equilibrium under gravity, springs and constant loads, written as a model",
        _cmd_equilibrium,
    )
    eqp.add_argument("model", help="model file (TOML); its initial state is the start")
    eqp.add_argument(
        "-o",
        "--output",
        metavar="MODEL_EQ.toml",
        help="the model with the equilibrium as its initial state (default: MODEL_eq.toml here)",
    )
    add_set_option(eqp, "override a value of the model file (repeatable)")
    add_json_option(eqp)
    add_quiet_option(eqp, "no iteration lines")


def add_linearize(commands: Subcommands) -> None:
    """`flexmbs linearize MODEL`."""
    li = add_command(
        commands,
        "linearize",
        "M dy'' + D dy' + K dy = 0 in independent coordinates, frequencies and mode shapes",
        _cmd_linearize,
        MODEL,
    )
    li.add_argument(
        "--at",
        choices=("initial", "equilibrium"),
        default="initial",
        help="the initial state (default) or the static equilibrium found from it",
    )
    li.add_argument(
        "--method",
        choices=("qr", "perturbation"),
        default="qr",
        help="closed loops: QR with column pivoting and condensation (Führer "
        "and Wallrapp 1984, default) or the perturbed constraints (Bae, "
        "Choi and Kim)",
    )
    li.add_argument(
        "--independent",
        action="append",
        metavar="COORDINATE",
        help="keep this coordinate among the independent ones (repeatable)",
    )
    li.add_argument(
        "--absolute",
        action="store_true",
        help="also the absolute-coordinate view of Führer and Wallrapp 1984 "
        "(rigid bodies): rank, degrees of freedom, J_y per body variable",
    )
    li.add_argument("-o", "--output", metavar="FILE.h5", help="write the matrices here")
    add_set_option(li, "override a value of the model file (repeatable)")
    add_json_option(li)
    add_quiet_option(li, "no progress lines")


def _cmd_modes(args: argparse.Namespace) -> int:
    from ..analysis.modes import format_modes, model_modes, modes_to_dict
    from ..formats.toml_reader import load_model

    if args.count < 1:
        raise FlexmbsError(f"--count: expected a positive number of modes, got {args.count}")
    model = load_model(args.model, overrides=args.set or ())
    beams, system = model_modes(model, body=args.body, count=args.count)
    if args.json:
        print(json.dumps(modes_to_dict(beams, system), indent=1))
    else:
        print(format_modes(beams, system, title=f'{args.model} (model "{model.name}")\n'))
    return EXIT_OK


def _compiled_consistent(args: argparse.Namespace) -> tuple[Model, CompiledModel]:
    """(model, compiled model) of args.model with --set, loops closed (a report of what
    closing them did goes to the log)."""
    from ..dynamics.constrained import make_consistent
    from ..formats.toml_reader import load_model
    from ..model.compiled import compile_model

    model = load_model(args.model, overrides=args.set or ())
    try:
        cm = compile_model(model)
    except FlexmbsError as exc:
        raise (exc.with_source(args.model) if hasattr(exc, "with_source") else exc) from None
    for warning in cm.warnings:
        log_line(f"warning: {warning}")
    report = make_consistent(cm)
    if report.rows and not args.quiet:
        log_line(report.text())
    return model, cm


def _equilibrium(
    cm: CompiledModel, args: argparse.Namespace, log: Callable[[str], None] | None
) -> Equilibrium | None:
    from ..analysis.equilibrium import NotConverged, static_equilibrium

    try:
        return static_equilibrium(cm, log=log)
    except NotConverged as exc:
        error_line(f"{args.model}: {exc}")
        return None


def _cmd_equilibrium(args: argparse.Namespace) -> int:
    from ..analysis.equilibrium import equilibrium_assignments
    from ..analysis.fit import set_toml_values
    from ..analysis.linear_report import format_equilibrium
    from ..analysis.linearize import linearize

    out = args.output or default_name(args.model, suffix="_eq.toml")
    refuse_unwritable(out)
    _, cm = _compiled_consistent(args)
    eq = _equilibrium(cm, args, None if args.quiet else log_line)
    if eq is None:
        return EXIT_FAILED
    lin = linearize(cm, q=eq.q, u=0.0 * eq.q)
    if os.path.exists(out) and os.path.samefile(out, args.model):
        raise FlexmbsError(f"{out}: would overwrite the model file; choose another -o")
    with open(args.model, encoding="utf-8") as f:
        text = "".join(line for line in f if not line.startswith(EQUILIBRIUM_HEADER))
    assignments = {}
    for override in args.set or ():
        path, _, value = override.partition("=")
        assignments[path.strip()] = _toml_value(value.strip())
    assignments.update(equilibrium_assignments(cm, eq.q))
    head = (
        f"{EQUILIBRIUM_HEADER} {args.model} by flexmbs equilibrium "
        f"{__version__}"
        + (" --set " + " --set ".join(args.set) if args.set else "")
        + f": {eq.iterations} Newton iterations, reduced force {eq.residual:.3g}\n"
    )
    with open(out, "w", encoding="utf-8") as f:
        f.write(head + set_toml_values(text, assignments, keep_comments=False))
    if args.json:
        print(
            json.dumps(
                dict(
                    iterations=eq.iterations,
                    residual=eq.residual,
                    step=eq.step,
                    coordinates=eq.names,
                    q=eq.q.tolist(),
                    start=eq.start.tolist(),
                    frequencies_hz=lin.frequencies.tolist(),
                    model=out,
                ),
                indent=1,
            )
        )
    else:
        print(format_equilibrium(eq, lin, title=f"{args.model}\n"))
        print(f"model with this initial state: {out}")
    return EXIT_OK


def _toml_value(text: str) -> object:
    import tomllib

    try:
        return tomllib.loads("v = " + text)["v"]
    except tomllib.TOMLDecodeError:
        return text


def _cmd_linearize(args: argparse.Namespace) -> int:
    from ..analysis.absolute_kinematics import absolute_kinematics
    from ..analysis.linear_report import format_linearization
    from ..analysis.linearize import linearize
    from ..io.linear_results import write_linearization

    if args.output:
        refuse_unwritable(args.output)
    model, cm = _compiled_consistent(args)
    q = u = None
    if args.at == "equilibrium":
        eq = _equilibrium(cm, args, None if args.quiet else log_line)
        if eq is None:
            return EXIT_FAILED
        q, u = eq.q, 0.0 * eq.q
    lin = linearize(cm, q=q, u=u, method=args.method, independent=args.independent or ())
    absolute = absolute_kinematics(cm, lin.q) if args.absolute else None
    if args.output:
        write_linearization(args.output, lin, model.name, args.at, absolute)
    if args.json:
        d = lin.to_dict()
        if absolute is not None:
            d["absolute"] = dict(
                rank=absolute.rank,
                dof=absolute.dof,
                variables=[f"{b}: {v}" for b, v in absolute.variables],
                independent=[f"{b}: {v}" for b, v in absolute.independent],
                J_y=absolute.J_y.tolist(),
            )
        print(json.dumps(d, indent=1))
    else:
        print(
            format_linearization(
                lin, title=f'{args.model} (model "{model.name}")', absolute=absolute
            )
        )
        if args.output:
            print(f"\nwritten to {args.output}")
    return EXIT_OK
