"""The `flexmbs` command line: run | info | energy | plot.

Errors in the input are reported on one line naming the file, the item and the field,
with exit status 2 and no traceback. `flexmbs run` exits 1 when the integration fails
(the result file then records why), `flexmbs energy --max-ratio` exits 1 when the
energy criterion is not met.
"""

import argparse
import json
import os
import sys

from . import __version__
from .errors import FlexmbsError
from .model.description import SOLVER_METHODS

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_INPUT = 0, 1, 2


def _err(text):
    sys.stderr.write(f"flexmbs: error: {text}\n")


def _log(text):
    sys.stderr.write(f"flexmbs: {text}\n")
    sys.stderr.flush()


def _cmd_run(args):
    from .model.toml_reader import load_model
    from .simulation import simulate

    model = load_model(args.model, overrides=args.set or ())
    out = args.output or os.path.splitext(os.path.basename(args.model))[0] + ".h5"
    if os.path.exists(out) and os.path.samefile(out, args.model):
        _err(f"{out}: the result file would overwrite the model file; choose another -o")
        return EXIT_INPUT
    sim = simulate(model, out, t_end=args.t_end, rtol=args.rtol, atol=args.atol,
                   method=args.solver, output_step=args.output_step,
                   progress=sys.stderr.isatty() and not args.quiet, log=_log)
    st = sim.statistics
    summary = (f"{sim.status}: t = {sim.t[-1]:.6g} s, {st.get('nsteps', 0)} steps, "
               f"{st.get('nres', 0)} evaluations, {st.get('wall_time', 0.0):.3g} s "
               f"integrating; results in {out}")
    if sim.status == "finished":
        if not args.quiet:
            print(summary)
        return EXIT_OK
    _err(f"{args.model}: the integration failed: {sim.message} ({summary})")
    return EXIT_FAILED


def _cmd_info(args):
    from .analysis.info import describe_result

    print(describe_result(args.result))
    return EXIT_OK


def _cmd_energy(args):
    from .analysis.energy import DEFAULT_RATIO_LIMIT, energy_balance, format_energy_report
    from .io.results import open_result

    limit = DEFAULT_RATIO_LIMIT if args.max_ratio is None else args.max_ratio
    bal = energy_balance(open_result(args.result), ratio_limit=limit)
    if args.json:
        print(json.dumps(bal, indent=1))
    else:
        print(format_energy_report(bal))
    if args.max_ratio is None:
        return EXIT_OK  # a report; the exit status judges only against --max-ratio
    return EXIT_OK if bal["passed"] else EXIT_FAILED


def _cmd_plot(args):
    from .analysis.plot import plot_result

    print(f"wrote {plot_result(args.result, args.names, args.output)}")
    return EXIT_OK


def _parser():
    p = argparse.ArgumentParser(
        prog="flexmbs", description="Deformable multibody dynamics in joint coordinates.")
    p.add_argument("--version", action="version", version=f"flexmbs {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="simulate a model file and write an HDF5 result file")
    r.add_argument("model", help="model file (TOML)")
    r.add_argument("-o", "--output", help="result file (default: MODEL_NAME.h5 here)")
    r.add_argument("--t-end", type=float, help="end time (s)")
    r.add_argument("--rtol", type=float, help="relative tolerance")
    r.add_argument("--atol", type=float, help="absolute tolerance")
    r.add_argument("--solver", help="integrator: " + ", ".join(SOLVER_METHODS))
    r.add_argument("--output-step", type=float, help="time between outputs (s)")
    r.add_argument("--set", action="append", metavar="PATH=VALUE",
                   help="override a value of the model file by its dotted path "
                        "(repeatable), e.g. --set joints.j1.initial=0.2")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    r.set_defaults(fn=_cmd_run)

    i = sub.add_parser("info", help="what a result file holds")
    i.add_argument("result")
    i.set_defaults(fn=_cmd_info)

    e = sub.add_parser("energy", help="energy balance and Huang's criterion")
    e.add_argument("result")
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.add_argument("--max-ratio", type=float,
                   help="fail (exit 1) when max|E-E0| / max strain energy (or, for rigid "
                        "models, / the largest energy component) exceeds this; "
                        "without it the report judges against 1e-2 and exits 0")
    e.set_defaults(fn=_cmd_energy)

    pl = sub.add_parser("plot", help="plot coordinates, sensors and energies to a PNG")
    pl.add_argument("result")
    pl.add_argument("names", nargs="*", help="coordinate or sensor names, 'energy', "
                                              "'energy.kinetic', ... (default: all "
                                              "coordinates and the energies)")
    pl.add_argument("-o", "--output", help="PNG file (default: RESULT.png)")
    pl.set_defaults(fn=_cmd_plot)
    return p


def main(argv=None):
    """Entry point of the console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if os.environ.get("FLEXMBS_DEBUG"):
        return args.fn(args)  # tracebacks for developers
    try:
        return args.fn(args)
    except FlexmbsError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except OSError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:
        _err("interrupted by the user")
        return 130


if __name__ == "__main__":
    sys.exit(main())
