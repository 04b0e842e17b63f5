"""The `flexmbs` command line: run | info | energy | plot | export | animate | view |
sweep | import-urdf | export-fmu | modes | equilibrium | linearize | compare | fit.

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
import json
import math
import os
import signal
import sys
import warnings
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import FlexmbsError, FlexmbsWarning, ResultWriteError, RunTerminated, one_line
from ..model.description import CONSTRAINT_FORMULATIONS, FORMULATIONS, SOLVER_METHODS

if TYPE_CHECKING:
    from ..analysis.equilibrium import Equilibrium
    from ..model.compiled import CompiledModel
    from ..model.description import Model, SolverSettings

__all__ = ["main"]

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_BUDGET = 0, 1, 2, 3
EQUILIBRIUM_HEADER = "# Static equilibrium of"
FIT_CLUSTER_AFTER = 1.0
"""s: by default a fit's runs go to a local dask cluster once they take this long each
(its start and its workers' loading of the kernels cost seconds)."""


def _err(text: str) -> None:
    sys.stderr.write(f"flexmbs: error: {one_line(text)}\n")


def _log(text: str) -> None:
    sys.stderr.write(f"flexmbs: {text}\n")
    sys.stderr.flush()


def _cmd_run(args: argparse.Namespace) -> int:
    from ..formats.toml_reader import load_model
    from ..io.output_lock import refuse_if_locked
    from ..simulation.run import simulate

    model = load_model(args.model, overrides=args.set or ())
    out = args.output or os.path.splitext(os.path.basename(args.model))[0] + ".h5"
    if os.path.exists(out) and os.path.samefile(out, args.model):
        _err(f"{out}: the result file would overwrite the model file; choose another -o")
        return EXIT_INPUT
    refuse_if_locked(out)  # another run writes it: that first
    problem = _result_path_problem(out)
    if problem:
        _err(f"{out}: {problem}")
        return EXIT_INPUT
    if os.path.exists(out) and not args.quiet:
        _log(f"overwriting the earlier result {out}")
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
        log=_log,
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
    _err(f"{args.model}: the integration failed: {sim.message} ({summary})")
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
        problem = _result_path_problem(out)
        if problem:
            _err(f"{out}: {problem}")
            return EXIT_INPUT
    window = _window_of(args)
    sim = simulate(
        model,
        out,
        t_end=args.t_end if args.t_end is not None or window is None else window[1],
        rtol=args.rtol,
        atol=args.atol,
        method=args.solver,
        output_step=args.output_step,
        log=None if args.quiet else _log,
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


def _window_of(args: argparse.Namespace) -> tuple[float, float] | None:
    """The --window T0 T1 of a command, checked: 0 <= T0 < T1, finite (None without
    one)."""
    if args.window is None:
        return None
    t0, t1 = float(args.window[0]), float(args.window[1])
    if not (0.0 <= t0 < t1 and math.isfinite(t1)):
        raise FlexmbsError(f"--window {t0:g} {t1:g}: expected 0 <= T0 < T1 (s)")
    return t0, t1


def _result_path_problem(path: str) -> str | None:
    """Why `path` cannot take a result file (None if it can): a folder, a folder that
    cannot be made (_folder_problem makes a missing one), or an existing file that is
    not a flexmbs result (never written over)."""
    if os.path.isdir(path):
        return "is a folder; expected the name of a result file (.h5)"
    problem = _folder_problem(path)
    if problem:
        return problem
    if os.path.exists(path):
        import h5py

        try:
            with h5py.File(path, "r") as f:
                if "flexmbs_version" in f.attrs:
                    return None
        except OSError:
            pass
        return (
            "exists and is not a flexmbs result file; it is not written over "
            "(remove it or choose another -o)"
        )
    return None


def _folder_problem(path: str | os.PathLike[str]) -> str | None:
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


def _finite_float(text: str) -> float:
    """argparse type: a finite number."""
    value = _parsed(float, text, "a finite number")
    if not abs(value) < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    value = _parsed(float, text, "a positive number")
    if not value > 0.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _greater_than_one(text: str) -> float:
    """argparse type: a finite number > 1."""
    value = _parsed(float, text, "a number > 1")
    if not value > 1.0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 1, got {text!r}")
    return value


def _positive_int(text: str) -> int:
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


def _cmd_info(args: argparse.Namespace) -> int:
    from ..analysis.info import describe_result

    print(describe_result(args.result))
    return EXIT_OK


def _cmd_energy(args: argparse.Namespace) -> int:
    from ..analysis.energy import DEFAULT_RATIO_LIMIT, energy_balance, format_energy_report
    from ..io.results import open_result

    limit = DEFAULT_RATIO_LIMIT if args.max_ratio is None else args.max_ratio
    bal = energy_balance(
        open_result(args.result),
        ratio_limit=limit,
        accept_large_deformation=args.accept_large_deformation,
    )
    if args.json:
        print(json.dumps(bal, indent=1))
    else:
        print(format_energy_report(bal))
    if args.report_only:
        return EXIT_OK
    return EXIT_OK if bal["passed"] else EXIT_FAILED


def _cmd_plot(args: argparse.Namespace) -> int:
    from ..analysis.plot import IMAGE_FORMATS, plot_result

    if args.output is not None:
        suffix = os.path.splitext(args.output)[1].lstrip(".").lower()
        if suffix not in IMAGE_FORMATS:
            _err(
                f'{args.output}: unknown image format "{suffix}"; expected a file '
                f"name ending in one of .{', .'.join(IMAGE_FORMATS)}"
            )
            return EXIT_INPUT
        problem = _folder_problem(args.output)
        if problem:
            _err(f"{args.output}: {problem}")
            return EXIT_INPUT
    print(f"wrote {plot_result(args.result, args.names, args.output)}")
    return EXIT_OK


def _cmd_export(args: argparse.Namespace) -> int:
    from ..analysis.vtk_export import default_vtk_path, export_vtk

    out = args.output or default_vtk_path(args.result)
    problem = _folder_problem(out)
    if problem:
        _err(f"{out}: {problem}")
        return EXIT_INPUT
    path, steps = export_vtk(args.result, out, subdivisions=args.subdivisions)
    print(f"wrote {path} ({steps} steps; open it in ParaView)")
    return EXIT_OK


def _cmd_animate(args: argparse.Namespace) -> int:
    from ..analysis.animation import animate_result

    problem = _folder_problem(args.output)
    if problem:
        _err(f"{args.output}: {problem}")
        return EXIT_INPUT
    path, frames = animate_result(
        args.result,
        args.output,
        scale=args.scale,
        view=args.view,
        fps=args.fps,
        speed=args.speed,
        max_frames=args.max_frames,
        at=args.at,
        log=_log,
    )
    print(f"wrote {path} ({frames} frames)")
    return EXIT_OK


def _cmd_view(args: argparse.Namespace) -> int:
    from ..viewer.command import view_command

    return view_command(args, _log, _folder_problem)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from ..analysis.distributed import dask_executor
    from ..analysis.sweep import failed_cases, format_summary, parse_sweep_parameter, run_sweep

    parameters = [parse_sweep_parameter(p) for p in args.param]
    problem = _folder_problem(os.path.join(args.output, "summary.csv"))
    if problem:
        _err(f"{args.output}: {problem}")
        return EXIT_INPUT
    log = None if args.quiet else _log

    def sweep(executor: Executor | None) -> list[dict[str, object]]:
        return run_sweep(
            args.model,
            parameters,
            args.output,
            args.set or (),
            args.summary or (),
            executor,
            log,
            verify=args.verify,
        )

    if args.serial:
        rows = sweep(None)
    else:
        with dask_executor(args.scheduler, args.workers) as executor:
            rows = sweep(executor)
    print(format_summary(rows))
    print(f"wrote {len(rows)} result files and summary.csv in {args.output}")
    failed = failed_cases(rows)
    for case, why in failed:
        _err(f"{case}: {why}")
    if failed:
        _err(f"{len(failed)} of {len(rows)} cases did not pass")
    return EXIT_FAILED if failed else EXIT_OK


def _cmd_import_urdf(args: argparse.Namespace) -> int:
    from ..formats.urdf import import_urdf

    out = args.output or os.path.splitext(os.path.basename(args.urdf))[0] + ".toml"
    if os.path.exists(out) and os.path.exists(args.urdf) and os.path.samefile(out, args.urdf):
        _err(f"{out}: the model file would overwrite the URDF; choose another -o")
        return EXIT_INPUT
    problem = _folder_problem(out)
    if problem:
        _err(f"{out}: {problem}")
        return EXIT_INPUT
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


def _cmd_export_fmu(args: argparse.Namespace) -> int:
    from ..control.fmu import export_fmu

    out = args.output or os.path.splitext(os.path.basename(args.model))[0] + ".fmu"
    if not out.endswith(".fmu"):
        _err(f"{out}: expected a file name ending in .fmu")
        return EXIT_INPUT
    problem = _folder_problem(out)
    if problem:
        _err(f"{out}: {problem}")
        return EXIT_INPUT
    settings = {
        "method": args.solver,
        "rtol": args.rtol,
        "atol": args.atol,
        "fixed_step": args.fixed_step,
    }
    path = export_fmu(args.model, out, args.set or (), settings)
    print(f"wrote {path}: FMI 2.0 co-simulation (flexmbs and pythonfmu on the target)")
    return EXIT_OK


def _cmd_modes(args: argparse.Namespace) -> int:
    from ..analysis.modes import format_modes, model_modes, modes_to_dict
    from ..formats.toml_reader import load_model

    if args.count < 1:
        _err(f"--count: expected a positive number of modes, got {args.count}")
        return EXIT_INPUT
    model = load_model(args.model, overrides=args.set or ())
    beams, system = model_modes(model, body=args.body, count=args.count)
    if args.json:
        print(json.dumps(modes_to_dict(beams, system), indent=1))
    else:
        print(format_modes(beams, system, title=f'{args.model} (model "{model.name}")\n'))
    return EXIT_OK


def _cmd_precompile(args: argparse.Namespace) -> int:
    from . import precompile as pre

    if args.jobs is None:
        args.jobs = min(2, os.cpu_count() or 1)
    if args.jobs < 1:
        _err(f"--jobs: expected a positive number of processes, got {args.jobs}")
        return EXIT_INPUT
    kernels = "native" if args.native else None
    print(f"compiling what the kernel cache lacks, in {args.jobs} process(es)", flush=True)
    r = pre.precompile(jobs=args.jobs, kernels=kernels)
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
    if r["uncached"]:
        _err(
            "kernels that no workload reached (they compile on first use): "
            + ", ".join(r["uncached"])
        )
        return EXIT_FAILED
    if not args.native:
        return EXIT_OK
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
        _log(f"warning: {warning}")
    report = make_consistent(cm)
    if report.rows and not args.quiet:
        _log(report.text())
    return model, cm


def _equilibrium(
    cm: CompiledModel, args: argparse.Namespace, log: Callable[[str], None] | None
) -> Equilibrium | None:
    from ..analysis.equilibrium import NotConverged, static_equilibrium

    try:
        return static_equilibrium(cm, log=log)
    except NotConverged as exc:
        _err(f"{args.model}: {exc}")
        return None


def _cmd_equilibrium(args: argparse.Namespace) -> int:
    from ..analysis.equilibrium import equilibrium_assignments
    from ..analysis.fit import set_toml_values
    from ..analysis.linear_report import format_equilibrium
    from ..analysis.linearize import linearize

    _, cm = _compiled_consistent(args)
    eq = _equilibrium(cm, args, None if args.quiet else _log)
    if eq is None:
        return EXIT_FAILED
    lin = linearize(cm, q=eq.q, u=0.0 * eq.q)
    out = args.output or os.path.splitext(os.path.basename(args.model))[0] + "_eq.toml"
    if os.path.exists(out) and os.path.samefile(out, args.model):
        _err(f"{out}: would overwrite the model file; choose another -o")
        return EXIT_INPUT
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

    model, cm = _compiled_consistent(args)
    q = u = None
    if args.at == "equilibrium":
        eq = _equilibrium(cm, args, None if args.quiet else _log)
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


def _default_dir(*paths: str, suffix: str) -> str:
    """NAME1_vs_NAME2 + suffix in the current folder, from the files' names."""
    stems = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    return "_vs_".join(stems) + suffix


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..analysis.compare import compare_files, format_summary, write_report

    comparison = compare_files(
        args.result,
        args.experiment,
        args.map,
        gaps=args.gaps,
        group=args.group,
        segment=args.segment,
        offset=args.offset,
        window=_window_of(args),
    )
    out = args.output or _default_dir(args.result, args.experiment, suffix="_compare")
    files = write_report(comparison, out, plots=not args.no_plots)
    if args.json:
        print(json.dumps(comparison.to_dict(), indent=1))
    else:
        print(format_summary(comparison))
        print(f"\nreport in {out}: " + ", ".join(os.path.basename(f) for f in files))
    return EXIT_OK


def _fit_inputs(
    args: argparse.Namespace,
) -> tuple[list[Any], list[Any], dict[str, Any], str]:
    """The records, the shared values, the settings and the default output folder of
    `flexmbs fit`: from the command line (one record), a fit file (--records) or a
    stopped fit's fit.json (--resume)."""
    from ..analysis.fit import parse_parameter
    from ..analysis.fit_file import read_fit_file, record_of, resume_records

    forms = [args.model is not None, args.records is not None, args.resume is not None]
    if sum(forms) != 1:
        raise FlexmbsError(
            "fit: expected MODEL EXPERIMENT --map MAP, or --records FIT_FILE, or --resume "
            "FIT_JSON (one of them)"
        )
    window = _window_of(args)
    if args.t_end is not None and window is not None:
        raise FlexmbsError("fit: --t-end T is --window 0 T: expected one of them")
    if args.t_end is not None:
        window = (0.0, float(args.t_end))
    params = [parse_parameter(p) for p in args.param or []]
    sets = args.set or []
    if args.resume is not None:
        records, shared, options = resume_records(args.resume)
        if params or sets or window is not None:
            raise FlexmbsError(
                "fit --resume: the values, settings and windows are the stopped fit's: "
                "expected no --param, --set, --window or --t-end"
            )
        return records, shared, options, os.path.dirname(os.path.abspath(args.resume))
    if args.records is not None:
        if args.map is not None or args.experiment is not None or window is not None:
            raise FlexmbsError(
                "fit --records: each record's files and window are in the fit file: "
                "expected no EXPERIMENT, --map, --window or --t-end"
            )
        records, shared = read_fit_file(args.records)
        for r in records:
            r.overrides = list(r.overrides) + sets
        default = os.path.splitext(os.path.basename(args.records))[0] + "_fit"
        return records, shared + params, {}, default
    if args.experiment is None or args.map is None or not params:
        raise FlexmbsError(
            "fit: expected MODEL EXPERIMENT --map MAP and at least one --param PATH[=lo:hi]"
        )
    record = record_of(
        "", args.model, args.experiment, args.map, sets, (), window, args.group, args.gaps
    )
    return [record], params, {}, _default_dir(args.model, args.experiment, suffix="_fit")


def _fit_executor(args: argparse.Namespace, runs_per_step: int) -> Any:
    """Where the fit's runs go: a dask scheduler (--scheduler), a local cluster
    (--workers; by default, with two cores or more and dask installed, once a run
    takes FIT_CLUSTER_AFTER s), or here (--serial, one core, one run a step, or no
    dask): a context manager of an Executor or None."""
    import contextlib

    if args.serial:
        if args.scheduler is not None or args.workers is not None:
            raise FlexmbsError("fit --serial: expected no --scheduler or --workers with it")
        return contextlib.nullcontext(None)
    from ..analysis.distributed import LocalClusterWhenSlow, dask_executor

    if args.scheduler is not None or args.workers is not None:
        return dask_executor(args.scheduler, args.workers)
    cores = os.cpu_count() or 1
    try:
        import distributed  # noqa: F401
    except ImportError:
        return contextlib.nullcontext(None)
    if cores < 2 or runs_per_step < 2:
        return contextlib.nullcontext(None)
    return LocalClusterWhenSlow(
        min(cores, runs_per_step), FIT_CLUSTER_AFTER, None if args.quiet else _log
    )


def _cmd_fit(args: argparse.Namespace) -> int:
    from ..analysis.fit import (
        DEFAULT_MAX_RUNS,
        fit_records,
        format_fit_report,
        write_fit_outputs,
    )

    records, shared, options, default_out = _fit_inputs(args)
    log = None if args.quiet else _log
    rtol = args.rtol or options.get("rtol")
    atol = args.atol if args.atol is not None else options.get("atol")
    fit_offset = not args.fixed_offset and options.get("fit_offset", True)
    resuming = args.resume is not None
    if resuming and log:
        log(f"going on from the point the fit of {args.resume} reached")
    runs_per_step = max(
        len(records), len(records) * len(shared) + sum(len(r.parameters) for r in records)
    )
    with _fit_executor(args, runs_per_step) as executor:
        if executor is not None and log and not hasattr(executor, "started"):
            log("the runs of each step go side by side on dask workers")
        fit = fit_records(
            records,
            shared,
            rtol=rtol,
            atol=atol,
            fit_offset=fit_offset,
            max_runs=DEFAULT_MAX_RUNS if args.max_runs is None else args.max_runs,
            log=log,
            executor=executor,
            verify_limit=None if args.no_verify or resuming else args.verify_limit,
        )
    out = args.output or default_out
    settings = {"rtol": fit.rtol, "atol": fit.atol, "fit_offset": fit_offset}
    outputs = write_fit_outputs(fit, out, plots=not args.no_plots, options=settings)
    fit_json = os.path.join(out, "fit.json")
    if args.json:
        with open(fit_json, encoding="utf-8") as f:
            print(f.read())
    else:
        print(format_fit_report(fit, resume=fit_json))
        for name, comparison in outputs.comparisons.items():
            print()
            if len(outputs.comparisons) > 1:
                print(f"record {name}:")
            print(_summary_of(comparison))
        print(
            f"\nfitted model {outputs.model_file}; outputs in {out}: "
            + ", ".join(os.path.relpath(f, out) for f in outputs.files)
        )
    if fit.stop == "budget":
        _log(
            f"{records[0].model_path}: the fit stopped on its budget before it converged: "
            f"{fit.message}; its last point and the standard deviations there are in "
            f"{fit_json}; go on with flexmbs fit --resume {fit_json}"
        )
        return EXIT_BUDGET
    if not fit.success:
        _err(f"{records[0].model_path}: the fit stopped before it converged: {fit.message}")
        return EXIT_FAILED
    return EXIT_OK


def _summary_of(comparison: Any) -> str:
    """A comparison's summary (flexmbs.analysis.compare.format_summary)."""
    from ..analysis.compare import format_summary

    return str(format_summary(comparison))


def _add_set_option(parser: argparse.ArgumentParser, help_text: str) -> None:
    """The repeatable `--set PATH=VALUE` override of a model file's value."""
    parser.add_argument("--set", action="append", metavar="PATH=VALUE", help=help_text)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="flexmbs", description="Deformable multibody dynamics in joint coordinates."
    )
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
    _add_set_option(
        r,
        "override a value of the model file by its dotted path "
        "(repeatable), e.g. --set joints.j1.initial=0.2",
    )
    r.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    r.set_defaults(fn=_cmd_run)

    v = sub.add_parser(
        "verify",
        help="run a model at its tolerance and ten times tighter, and say whether "
        "its outputs converged",
    )
    v.add_argument("model", help="model file (TOML)")
    v.add_argument("-o", "--output", help="result file of the run at the model's tolerance")
    v.add_argument("--t-end", type=_positive_float, help="end time (s)")
    v.add_argument("--rtol", type=_positive_float, help="relative tolerance of the run")
    v.add_argument("--atol", type=_positive_float, help="absolute tolerance of the run")
    v.add_argument("--solver", help="integrator: " + ", ".join(SOLVER_METHODS))
    v.add_argument("--output-step", type=_positive_float, help="time between outputs (s)")
    v.add_argument(
        "--factor",
        type=_greater_than_one,
        default=10.0,
        help="the second run's tolerances are the first's divided by this (default 10)",
    )
    v.add_argument(
        "--limit",
        type=_positive_float,
        default=1e-3,
        help="largest change of an output group, relative to its scale, that passes "
        "(default 1e-3); exit 1 when a group exceeds it",
    )
    v.add_argument(
        "--window",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="compare the two runs from T0 to T1 s only (the runs start at 0; "
        "--t-end defaults to T1)",
    )
    _add_set_option(v, "as for run")
    v.add_argument("--json", action="store_true", help="machine-readable output")
    v.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    v.set_defaults(fn=_cmd_verify)

    i = sub.add_parser("info", help="what a result file holds")
    i.add_argument("result", help="result file (HDF5)")
    i.set_defaults(fn=_cmd_info)

    e = sub.add_parser(
        "energy",
        help="energy balance: its drift against the energy held, the work done and the tolerance",
    )
    e.add_argument("result", help="result file (HDF5)")
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.add_argument(
        "--max-ratio",
        type=_positive_float,
        metavar="X",
        help="the criterion: max|E-E0| / (largest energy held + work done) at most "
        "this (default 1e-2); exit 1 when it is not met",
    )
    e.add_argument(
        "--report-only", action="store_true", help="exit 0 whether or not the criterion is met"
    )
    e.add_argument(
        "--accept-large-deformation",
        action="store_true",
        help="pass although a beam left the small-deformation range (its balance "
        "closes, but the beam model no longer describes the beam)",
    )
    e.set_defaults(fn=_cmd_energy)

    pl = sub.add_parser("plot", help="plot coordinates, sensors and energies to a PNG")
    pl.add_argument("result", help="result file (HDF5)")
    pl.add_argument(
        "names",
        nargs="*",
        help="coordinate or sensor names, one column of a sensor as NAME[k] or "
        "NAME[label] (tip[1], tip[y]), 'energy', 'energy.kinetic', ... (default: "
        "panels of every coordinate, sensor and energy)",
    )
    pl.add_argument("-o", "--output", help="PNG file (default: RESULT.png)")
    pl.set_defaults(fn=_cmd_plot)

    ex = sub.add_parser(
        "export", help="the deformed shape over time as one VTKHDF file for ParaView"
    )
    ex.add_argument("result", help="result file (HDF5)")
    ex.add_argument("-o", "--output", help="VTKHDF file (default: RESULT.vtkhdf)")
    ex.add_argument(
        "--subdivisions",
        type=_positive_int,
        default=4,
        help="centre-line points per beam element (default 4)",
    )
    ex.set_defaults(fn=_cmd_export)

    an = sub.add_parser("animate", help="the deformed mechanism moving, as a GIF or an MP4")
    an.add_argument("result", help="result file (HDF5)")
    an.add_argument(
        "-o", "--output", required=True, help="file ending in .gif or .mp4, or .png for a frame"
    )
    an.add_argument(
        "--at", type=float, help="with a .png: the time of the frame (s; default: the last)"
    )
    an.add_argument(
        "--scale",
        type=_positive_float,
        help="magnify the elastic displacements this many times (default: a tenth of the "
        "arm's size for the run's largest deflection, printed)",
    )
    an.add_argument("--view", choices=("iso", "xy", "xz", "yz"), default="iso", help="default iso")
    an.add_argument("--fps", type=_positive_float, default=25.0, help="frames per second")
    an.add_argument(
        "--speed",
        type=_positive_float,
        default=1.0,
        help="simulated seconds per second of film (default 1)",
    )
    an.add_argument(
        "--max-frames", type=_positive_int, default=250, help="at most this many frames"
    )
    an.set_defaults(fn=_cmd_animate)

    vw = sub.add_parser(
        "view", help="the run or the model in an interactive 3-D viewer in the browser"
    )
    vw.add_argument("target", help="a result file (.h5) or a model file (.toml)")
    _view_arguments(vw)
    vw.set_defaults(fn=_cmd_view)

    sw = sub.add_parser("sweep", help="a parameter study: one run and file per case, on dask")
    sw.add_argument("model", help="model file (TOML)")
    sw.add_argument(
        "--param",
        action="append",
        required=True,
        metavar="PATH=V1,V2,...|PATH=LO:HI:N",
        help="a swept value (repeatable: every combination runs)",
    )
    sw.add_argument("-o", "--output", required=True, help="folder of the result files")
    sw.add_argument(
        "--summary",
        action="append",
        metavar="NAME[:STAT]",
        help="an output per case: a coordinate, sensor (NAME[k] for a column) or "
        "energy.COMPONENT; STAT final (default), max, min, maxabs, mean",
    )
    _add_set_option(sw, "for every case")
    sw.add_argument("--scheduler", help="a dask scheduler's address (default: a local cluster)")
    sw.add_argument("--workers", type=_positive_int, help="local workers (default: one a core)")
    sw.add_argument("--serial", action="store_true", help="no dask: the cases one by one here")
    sw.add_argument(
        "--verify",
        action="store_true",
        help="run each case also ten times tighter and add the convergence check "
        "(as flexmbs verify) to its row",
    )
    sw.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    sw.set_defaults(fn=_cmd_sweep)

    ur = sub.add_parser("import-urdf", help="a robot's URDF as a flexmbs model file")
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
    ur.set_defaults(fn=_cmd_import_urdf)

    fm = sub.add_parser(
        "export-fmu",
        help="a model file as an FMI 2.0 co-simulation unit (its input ports in, sensors out)",
    )
    fm.add_argument("model", help="model file (TOML)")
    fm.add_argument("-o", "--output", help="the FMU (default: MODEL.fmu here)")
    fm.add_argument("--solver", choices=("bdf", "galpha"), help="the unit's integrator")
    fm.add_argument("--rtol", type=float, help="relative tolerance")
    fm.add_argument("--atol", type=float, help="absolute tolerance")
    fm.add_argument("--fixed-step", type=float, metavar="H", help="galpha: a constant step (s)")
    _add_set_option(fm, "override a value of the model file by its dotted path (repeatable)")
    fm.set_defaults(fn=_cmd_export_fmu)

    eqp = sub.add_parser(
        "equilibrium",
        help="static equilibrium under gravity, springs and constant loads, written as a model",
    )
    eqp.add_argument("model", help="model file (TOML); its initial state is the start")
    eqp.add_argument(
        "-o",
        "--output",
        metavar="MODEL_EQ.toml",
        help="the model with the equilibrium as its initial state (default: MODEL_eq.toml here)",
    )
    _add_set_option(eqp, "override a value of the model file (repeatable)")
    eqp.add_argument("--json", action="store_true", help="machine-readable output")
    eqp.add_argument("-q", "--quiet", action="store_true", help="no iteration lines")
    eqp.set_defaults(fn=_cmd_equilibrium)

    li = sub.add_parser(
        "linearize",
        help="M dy'' + D dy' + K dy = 0 in independent coordinates, frequencies and mode shapes",
    )
    li.add_argument("model", help="model file (TOML)")
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
    _add_set_option(li, "override a value of the model file (repeatable)")
    li.add_argument("--json", action="store_true", help="machine-readable output")
    li.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    li.set_defaults(fn=_cmd_linearize)

    pc = sub.add_parser(
        "precompile",
        help="compile every kernel into the kernel cache now, not at a first run",
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
    pc.set_defaults(fn=_cmd_precompile)

    mo = sub.add_parser(
        "modes",
        help="natural frequencies of the beam bodies and of "
        "the model linearised about its initial state",
    )
    mo.add_argument("model", help="model file (TOML)")
    mo.add_argument("--body", help="only this beam body (the whole model is always linearised)")
    mo.add_argument(
        "--count",
        type=int,
        default=10,
        help="modes listed per beam body alone (default 10; all if fewer)",
    )
    _add_set_option(
        mo, "override a value of the model file (repeatable), e.g. --set bodies.link2.elements=10"
    )
    mo.add_argument("--json", action="store_true", help="machine-readable output")
    mo.set_defaults(fn=_cmd_modes)

    from ..analysis.experiment import GAP_POLICIES  # light: the fit's modules load scipy

    c = sub.add_parser(
        "compare",
        help="compare a result file with an experiment file (metrics, spectra, plots, reports)",
    )
    c.add_argument("result", help="result file (HDF5) of a run")
    c.add_argument("experiment", help="experiment file (CSV or HDF5)")
    c.add_argument(
        "--map",
        required=True,
        metavar="MAP.toml",
        help="channel map: experiment channels to sensors, calibration, filters, alignment",
    )
    c.add_argument(
        "-o",
        "--output",
        metavar="REPORT_DIR",
        help="folder of the report (default: RESULT_vs_EXPERIMENT_compare here)",
    )
    c.add_argument("--json", action="store_true", help="print the JSON report")
    c.add_argument(
        "--gaps",
        choices=GAP_POLICIES,
        help="missing values in the experiment: error, interpolate or cut (default: the map's)",
    )
    c.add_argument(
        "--group",
        help="HDF5 group of the experiment (default: the map's, or "
        "the one group with a time dataset)",
    )
    c.add_argument(
        "--offset", type=_finite_float, help="t_exp - t_sim (s), instead of the map's alignment"
    )
    c.add_argument(
        "--segment", type=float, help="Welch segment (s) of the spectra (default: the whole record)"
    )
    c.add_argument(
        "--window",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="compare the samples from simulation time T0 to T1 s only (the alignment "
        "still sees the whole record)",
    )
    c.add_argument("--no-plots", action="store_true", help="no PNG plots")
    c.set_defaults(fn=_cmd_compare)

    f = sub.add_parser(
        "fit",
        help="identify model values from an experiment file (least squares over runs of the model)",
    )
    f.add_argument("model", nargs="?", help="model file (TOML); its values are the starting point")
    f.add_argument("experiment", nargs="?", help="experiment file (CSV or HDF5)")
    f.add_argument("--map", metavar="MAP.toml", help="channel map (with MODEL EXPERIMENT)")
    f.add_argument(
        "--param",
        action="append",
        metavar="PATH[=lo:hi]",
        help="a model value to identify, by its dotted path as for --set, "
        "with optional bounds (repeatable), e.g. "
        "--param joints.joint2.damping=0:1; with --records, a value every record shares",
    )
    _add_set_option(
        f,
        "override a value of the model file (repeatable), e.g. a starting value; with "
        "--records, of every record's model",
    )
    f.add_argument(
        "--records",
        metavar="FIT_FILE.toml",
        help="fit several records at once: a fit file naming each record's model, "
        "experiment, map, settings, own values and window, and the values they share",
    )
    f.add_argument(
        "--resume",
        metavar="FIT.json",
        help="go on from where the fit that wrote this fit.json stopped (its records, "
        "values and settings; --max-runs is the new budget; outputs beside it unless -o)",
    )
    f.add_argument(
        "--window",
        nargs=2,
        type=float,
        metavar=("T0", "T1"),
        help="fit the samples from model time T0 to T1 s only (the runs start at 0, so the "
        "state at T0 is the model's; the convergence check covers the same window)",
    )
    f.add_argument(
        "--t-end",
        type=float,
        help="fit the first T s after the release, as --window 0 T (default: the whole record)",
    )
    f.add_argument(
        "--rtol",
        type=float,
        help="relative tolerance of the runs (default: the model's, ten times tighter at a "
        "step until the convergence check passes; given, it is checked once)",
    )
    f.add_argument(
        "--atol",
        type=float,
        help="absolute tolerance (default: the model's, tightened with rtol; rtol / 100 with "
        "--rtol)",
    )
    f.add_argument(
        "--fixed-offset",
        action="store_true",
        help="hold the alignment's time offset (default: identify it too)",
    )
    f.add_argument(
        "--gaps", choices=GAP_POLICIES, help="missing values in the experiment (default: the map's)"
    )
    f.add_argument("--group", help="HDF5 group of the experiment")
    f.add_argument(
        "--max-runs",
        type=_positive_int,
        help="runs of the model at most, every Jacobian's included: the fit stops when its "
        "next step does not fit in what is left, with exit status 3 (default 200: "
        "flexmbs.analysis.fit.DEFAULT_MAX_RUNS)",
    )
    f.add_argument(
        "--verify-limit",
        type=_positive_float,
        default=1e-4,
        help="before fitting, the starting model must converge: a compared sensor may "
        "change by at most this of its scale at ten times the fit's tolerance "
        "(default 1e-4)",
    )
    f.add_argument(
        "--no-verify",
        action="store_true",
        help="skip that convergence check (the fit then trusts the tolerance)",
    )
    f.add_argument(
        "-o",
        "--output",
        metavar="OUT_DIR",
        help="folder of the fitted model, its run and the reports "
        "(default: MODEL_vs_EXPERIMENT_fit here)",
    )
    f.add_argument("--json", action="store_true", help="print the JSON report")
    f.add_argument("--no-plots", action="store_true", help="no PNG plots")
    f.add_argument(
        "--scheduler",
        help="run each step's runs (a Jacobian's columns, the records) at once on this dask "
        "scheduler",
    )
    f.add_argument(
        "--workers",
        type=_positive_int,
        help="...or on a local dask cluster of this many workers (default: one per core, "
        "up to the runs of a step, once a run takes over a second, when dask is installed "
        "and there are two cores)",
    )
    f.add_argument(
        "--serial",
        action="store_true",
        help="make the runs here, one after another",
    )
    f.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    f.set_defaults(fn=_cmd_fit)
    return p


def _view_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--html", metavar="FILE", help="write one self-contained HTML file, no server")
    p.add_argument("--screenshot", metavar="PNG", help="a picture in a headless Chromium")
    p.add_argument("--urdf", help="the robot's URDF for its meshes (default: the imported one)")
    p.add_argument(
        "--scale",
        type=_positive_float,
        help="starting deflection scale (default: from the run's largest deflection)",
    )
    p.add_argument("--at", type=_finite_float, help="starting time (s)")
    p.add_argument("--view", choices=("iso", "xz", "xy", "yz"), default="iso", help="starting view")
    p.add_argument(
        "--field", help="colour map: outer_fibre_strain, N, V_y, V_z, T, M_y, M_z, displacement"
    )
    p.add_argument("--max-frames", type=_positive_int, default=600, help="default 600")
    p.add_argument("--size", default="960x600", help="screenshot size WxH (default 960x600)")
    _add_set_option(p, "with a model file: override a value by its dotted path (repeatable)")
    p.add_argument("--port", type=int, default=0, help="local port (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="serve, without opening a browser")


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
        _log(f"warning: {message}")
    else:
        _SHOW_WARNING(message, category, filename, lineno, file, line)


_SHOW_WARNING = warnings.showwarning


def _write_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _run_command(args: argparse.Namespace) -> int:
    output = getattr(args, "output", None)
    if output is not None and not output.strip():
        _err(f"-o {output!r}: expected the name of a file or folder (leave -o out for the default)")
        return EXIT_INPUT
    if os.environ.get("FLEXMBS_DEBUG"):
        return args.fn(args)  # tracebacks for developers
    try:
        status = args.fn(args)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
        return status
    except ResultWriteError as exc:
        _err(str(exc))
        return EXIT_FAILED
    except FlexmbsError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except BrokenPipeError:
        # the reader of stdout has gone (`flexmbs info x.h5 | head -1`): end silently,
        # with the status of a Unix tool that SIGPIPE ends
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except OSError as exc:
        _err(_os_error_text(exc))
        return EXIT_INPUT
    except RunTerminated as exc:
        _err(str(exc))
        return 128 + exc.signum
    except KeyboardInterrupt:
        _err("interrupted by the user")
        return 130


if __name__ == "__main__":
    sys.exit(main())
