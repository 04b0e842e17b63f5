"""Running a model: `simulate` and the run's steps.

`simulate(model, path)` compiles the model, integrates it with the chosen solver and
writes the HDF5 result file while the run goes (flexmbs.io.results), through the
steps of this module: prepare_run, log_run_warnings, start_state, open_result,
build_integrator, run_batches, finish_run or close_failed_run (docs/development.md,
"The path of a run"). Their pieces are modules of their own beside it: the System
(`systems`), the settings' checks (`run_checks`), the output times (`times`), the
integrators (`integrators`), the recorder of the outputs (`recorder`), the Simulation
returned (`outcome`), the progress bar (`progress`), the signals (`signals`), the
convergence check's run (`verification`). Python is only involved once per batch of
outputs; the energies and sensors of a batch come from one kernel call.
"""

import os
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ..checks.units import coordinate_units, sensor_units
from ..dynamics import projection as _projection
from ..dynamics.constrained import initial_derivative, make_consistent
from ..elements.modal import basis_record
from ..errors import ModelError, RunTerminated
from ..formats.serialize import model_to_json
from ..model.compiled import compile_model
from ..model.description import SolverSettings
from ..model.run_work import check_run_work
from ..runtime.compile_notice import CompileWatch
from .convergence import DEFAULT_FACTOR, DEFAULT_LIMIT, check_verify_settings
from .failure_diagnosis import failing_force_elements, failure_states
from .integrators import SOLVERS, build_integrator, make_integrator
from .outcome import Simulation, state_rest_names
from .progress import Progress
from .recorder import OutputRecorder, SmallDeformationWarning
from .run_checks import check_discrete_state, check_finite_start, check_solver_fits
from .signals import signals_end_the_run
from .systems import build_system, compile_absolute, with_rebasing, with_sampled_control
from .times import OutputTimes
from .verification import verified

__all__ = [
    "build_system",
    "make_integrator",
    "simulate",
    "Simulation",
    "SmallDeformationWarning",
    "SOLVERS",
    "state_rest_names",
]

WALL_BUDGET = 0.5  # s of integration between two writes / progress updates
OUTPUT_BATCH = 20_000  # output rows asked of the integrator at once (bounds the memory)


def simulate(
    model,
    path=None,
    *,
    t_end=None,
    rtol=None,
    atol=None,
    method=None,
    output_step=None,
    max_step=None,
    formulation=None,
    constraints=None,
    rho_inf=None,
    fixed_step=None,
    progress=False,
    log=None,
    history=None,
    compile_elsewhere=False,
    verify=False,
    verify_factor=DEFAULT_FACTOR,
    verify_limit=DEFAULT_LIMIT,
    verify_window=None,
):
    """Integrate `model` (a Model) and write the result file `path` (None: no file).
    `formulation`: "joint", "order-n" (trees) or "absolute" (every joint a
    constraint, flexmbs.model.absolute); `constraints`: the formulation of
    closed loops and rolling contacts ("ggl" or "projection"); see SolverSettings.

    Settings not given come from the model's [solver] and [output] sections. Returns
    a Simulation. A failure of the integrator is a status ("failed") with a message,
    recorded in the file; an interrupt (Ctrl-C) is recorded and then re-raised.
    The time spent compiling kernels (statistics["compile_time"], s) is left out of
    the progress line's rate.

    `history`: keep every output row in memory (True) or only the last (False: the
    memory of a run does not grow with its outputs; the Simulation then reads them
    from the result file when asked). Default: True without a file, False with one.

    `compile_elsewhere`: on an empty kernel cache with a second core free, compile the
    output quantities in another process while this one compiles the equations of
    motion and the integrator (flexmbs.simulation.output_kernels; the command line does).

    `verify`: also run the model at rtol and atol divided by `verify_factor` (no file)
    and compare the two runs, output group by output group, each against its own
    scale (flexmbs.simulation.convergence); the Simulation's `convergence` then holds the
    outcome (None without `verify`), `passed` when every group changed by less than
    `verify_limit` of its scale; `verify_window` (t0, t1): only the outputs from t0
    to t1 s are compared.

    The result file is locked from the start until it is closed: while another run
    (or ResultWriter) writes to `path`, this one is refused before any work with
    flexmbs.io.output_lock.OutputLocked, which names it.
    """
    keep = path is None if history is None else bool(history)
    if not keep and path is None:
        raise ValueError("history=False needs a result file (path) to keep the outputs")
    if verify:
        check_verify_settings(verify_factor, verify_limit)
        keep = True
    given = (t_end, rtol, atol, method, output_step, max_step, formulation, constraints)
    settings = dict(zip(RUN_SETTINGS, given + (rho_inf, fixed_step)))
    lock = None if path is None else _locked_result_file(path, log)
    start = time.perf_counter()
    try:
        with CompileWatch() as compiling, signals_end_the_run():
            sim = _simulate(
                model, path, settings, progress, log, compiling, keep, compile_elsewhere, lock
            )
    finally:
        if lock is not None:
            lock.release()  # the writer lets go of it first, at its close
    if not verify:
        return sim
    wall = time.perf_counter() - start
    check = {"factor": verify_factor, "limit": verify_limit, "window": verify_window}
    return verified(model, sim, settings, wall, log, partial(_quiet_run, model), **check)


def _locked_result_file(path, log):
    """The OutputLock of the result file `path`, taken before any work (one writer per
    file: flexmbs.io.output_lock.OutputLocked, naming the other, when it is held); a
    lock a finished process left behind is taken over and `log` told."""
    from ..io.output_lock import OutputLock

    lock = OutputLock(path).acquire()
    if lock.stale is not None and log is not None:
        log(
            f"{path}: taking over the lock that pid {lock.stale.get('pid')} on "
            f"{lock.stale.get('host')} left (that run is gone)"
        )
    return lock


def _quiet_run(model, settings):
    """The Simulation of a run of `model` at `settings` without a file, progress or
    log, its history kept (the tighter run of the convergence check)."""
    with CompileWatch() as compiling, signals_end_the_run():
        return _simulate(model, None, settings, False, None, compiling, True, False)


def _named_failing_elements(cm, integ):
    """flexmbs.simulation.failure_diagnosis's text for a failed run; "" if the diagnosis itself
    fails (it must not hide the failure it explains)."""
    try:
        return failing_force_elements(cm, failure_states(integ))
    except Exception:  # noqa: BLE001 - a diagnosis, never the cause of another failure
        return ""


def _galpha_settings_unused(settings):
    """The `galpha` settings given to another solver, as text ("" if none): rho_inf
    other than its default, and fixed_step, given in [solver] (not [solver.galpha])."""
    return settings.galpha_settings_unused()


# --------------------------------------------------------------------------------------
# The run, step by step: prepare_run, start_state, open_result, OutputRecorder,
# build_integrator, run_batches, finish_run (docs/development.md, "The path of a run").

RUN_SETTINGS = (
    "t_end",
    "rtol",
    "atol",
    "method",
    "output_step",
    "max_step",
    "formulation",
    "constraints",
    "rho_inf",
    "fixed_step",
)
"""The settings a run may take in place of the model file's [solver] and [output]."""


@dataclass
class PreparedRun:
    """A model made ready to integrate: `cm` the compiled model (consistent with its
    loops), `settings` the solver's (SolverSettings), `output` the output's
    (OutputSettings), `report` the consistency report of a model with constraints
    (None for a tree), `times` its output times (OutputTimes from t = 0), `sampler`
    its sampled controllers (flexmbs.simulation.sampled_control; None without, set by
    start_state)."""

    model: object
    cm: object
    settings: SolverSettings
    output: object
    report: object = None
    times: object = None
    sampler: object = None

    @property
    def projection(self):
        """The constraints in Shui and Zhang's projection formulation."""
        return self.report is not None and self.settings.constraints == "projection"


def prepare_run(model, overrides=None):
    """The model's settings with `overrides` ({name: value} of RUN_SETTINGS, None for
    the model file's), its compiled form made consistent, and the check that the
    solver fits the model: a PreparedRun. A ModelError names the model file."""
    values = {name: None for name in RUN_SETTINGS}
    values.update(overrides or {})
    output_step = values.pop("output_step")
    try:
        s = model.solver.with_changes(**values)
        out = model.output.with_changes(output_step)
        times = OutputTimes(0.0, s.t_end, out.step)
        check_run_work(model, s, s.t_end)
        cm = compile_absolute(model) if s.formulation == "absolute" else compile_model(model)
        report = make_consistent(cm) if cm.has_constraints else None
        check_solver_fits(model, cm, s, report)
        check_discrete_state(model, s, report is not None)
    except ModelError as exc:
        raise exc.with_source(model.source_path or "<python>") from None
    return PreparedRun(model, cm, s, out, report, times)


def log_run_warnings(run, t0, log):
    """What the user should know before the run goes: the model's warnings, an output
    step as long as the run, galpha's settings given to another solver."""
    if log is None:
        return
    s, out = run.settings, run.output
    for text in run.cm.warnings:
        log("warning: " + text)
    if out.step >= s.t_end - t0:
        log(
            f"warning: the output step ({out.step:g} s) is not shorter than the run "
            f"({s.t_end - t0:g} s): only its start and its end are recorded"
        )
    unused = _galpha_settings_unused(s)
    if unused:
        log(
            f'warning: {unused} set, which only the solver "galpha" uses; "{s.method}" runs without'
        )


def start_state(run, t0, log=None):
    """(system, y0): the System the integrator steps (build_system) and the state it
    starts from, consistent with the constraints (the projection's start, or the
    multipliers and y' of the index-2 form), with the projection's drift correction
    and the absolute coordinates' rebasing as the system's refresh; the sampled
    controllers' first samples taken at t0 (run.sampler)."""
    cm, s = run.cm, run.settings
    system = build_system(cm, s.constraints, s.formulation, s.linear_solver)
    run.sampler = with_sampled_control(cm, system, t0, s.t_end)
    y0 = cm.initial_state()
    if run.projection:
        y0, _ = _projection.projection_start(cm, system, t0, y0)
        system.refresh = lambda t, y: _projection.correct_drift(cm, system, t, y, s.rtol, s.atol)
    elif run.report is not None:
        y0, _ = initial_derivative(cm, system, t0, y0)
    if s.formulation == "absolute":
        with_rebasing(cm, system)
    check_finite_start(cm, y0, run.model.source_path or "<python>")
    if run.sampler is not None:  # the first samples, so that the first output holds them
        run.sampler.at_breakpoint(t0, y0)
    if run.report is not None and log is not None:
        log(
            run.report.text()
            + ("\nconstraints: Shui and Zhang's projection formulation" if run.projection else "")
        )
    return system, y0


def result_settings(run, output_step):
    """The run's settings as the result file records them (/solver)."""
    s, model = run.settings, run.model
    folder = os.path.dirname(os.path.abspath(model.source_path)) if model.source_path else ""
    galpha = {"rho_inf": s.rho_inf, "fixed_step": s.fixed_step or 0.0}
    return {
        "t_end": s.t_end,
        "rtol": s.rtol,
        "atol": s.atol,
        "formulation": s.formulation,
        "output_step": output_step,
        "model_folder": folder,
        "max_step": s.max_step,
        **(galpha if s.method == "galpha" else {}),
    }


def open_result(path, run, settings, lock=None):
    """The ResultWriter of the result file `path` (None: no file) for the run, with
    the model, its topology, names, units and modes, and `settings`
    (result_settings); `lock` the file's OutputLock, held since the run began
    (flexmbs.io.output_lock), which the writer releases at its close."""
    if path is None:
        return None
    from ..io.results import ResultWriter

    model, cm = run.model, run.cm
    return ResultWriter(
        path,
        lock=lock,
        model_text=model.source_text or "",
        model_json=model_to_json(model),
        topology=cm.topology,
        coordinate_names=cm.coordinate_names,
        sensor_names=cm.sensor_names,
        sensor_sizes=cm.sensor_sizes,
        solver_name=run.settings.method,
        overrides=model.overrides,
        modes={
            name: b.basis_record() if hasattr(b, "basis_record") else basis_record(b)
            for name, b in model.bodies.items()
            if getattr(b, "basis", None) is not None
        },
        state_rest_names=state_rest_names(cm),
        coordinate_units=coordinate_units(model, cm.coordinate_names),
        sensor_units=[sensor_units(model, n, k) for n, k in zip(cm.sensor_names, cm.sensor_sizes)],
        settings=settings,
    )


def run_batches(integ, times, recorder, writer=None, bar=None):
    """Integrate through the output times (OutputTimes) a batch at a time, each batch
    recorded; the result file committed and the progress shown between batches.
    Returns (status, message): "finished", or "failed" with why (and the force
    elements that failed, flexmbs.simulation.failure_diagnosis), the state at a failure
    recorded."""
    done = 0
    while integ.status == "running" and done < len(times):
        n, y = integ.advance(times[done : done + OUTPUT_BATCH], WALL_BUDGET)
        if n:
            recorder.emit(times[done : done + n], y)
            done += n
        if writer is not None:
            writer.commit_if_due(integ.t)
        if bar is not None:
            bar.update(integ.t, integ.statistics()["nsteps"])
    if bar is not None:
        bar.update(integ.t, integ.statistics()["nsteps"], force=True)
    if integ.status == "failed" and integ.t > recorder.t_last:
        recorder.emit(np.array([integ.t]), integ.y[None, :])  # the state at the failure
    status = integ.status if integ.status != "running" else "finished"
    message = integ.message
    if status == "failed":
        message = (message or "the integrator stopped") + _named_failing_elements(
            recorder.cm, integ
        )
    return status, message


def close_failed_run(writer, integ, recorder, exc):
    """Close the result file of a run that an exception ended, the integrator's
    statistics and the reason kept (an interrupt, a signal, an error)."""
    if writer is None:
        return
    if isinstance(exc, KeyboardInterrupt):
        if integ is not None:
            try:  # the signal may have come inside the integrator's Python side
                stats = integ.statistics()
            except Exception:  # noqa: BLE001 - the file is closed with the signal all the same
                stats = {}
            stats.update(recorder.statistics())
            stats.pop("joint_singularity", None)
            writer.set_solver_statistics(stats)
        writer.close(
            f"failed: {exc}"
            if isinstance(exc, RunTerminated)
            else "failed: interrupted by the user"
        )
    else:
        writer.close(f"failed: {type(exc).__name__}: {exc}")


def finish_run(run, integ, recorder, status, message, path=None, compile_time=0.0, log=None):
    """The Simulation of a run that ended with `status` and `message`: its statistics
    (the integrator's, the compile time, the watches'), the result file closed with
    the status."""
    stats = integ.statistics()
    stats["compile_time"] = compile_time
    if run.settings.formulation == "absolute":
        stats["reference_moves"] = integ.system.reference_moves
    stats.update(recorder.statistics())
    if "joint_singularity" in stats and log is not None:
        log("warning: the motion came " + stats["joint_singularity"])
    writer = recorder.writer
    if writer is not None:
        writer.set_solver_statistics(stats)
        writer.close("finished" if status == "finished" else f"failed: {message}")
    sim = Simulation(
        *recorder.arrays(),
        coordinate_names=run.cm.coordinate_names,
        status=status,
        message=message,
        statistics=stats,
        path=None if path is None else str(path),
    )
    sim.small_deformation = recorder.deformation.report() or None
    sim.sensor_names = list(run.cm.sensor_names)
    sim.sensor_sizes = [int(k) for k in run.cm.sensor_sizes]
    return sim


def _simulate(model, path, overrides, progress, log, compiling, keep, compile_elsewhere, lock=None):
    """A run of `model` (simulate's arguments; `overrides` {name: value} of
    RUN_SETTINGS; `lock` the result file's OutputLock), in the steps of the module's
    run path."""
    t0 = 0.0
    run = prepare_run(model, overrides)
    times = run.times
    log_run_warnings(run, t0, log)
    system, y0 = start_state(run, t0, log)
    writer = open_result(path, run, result_settings(run, run.output.step), lock)
    vtk = Path(path).with_suffix(".vtkhdf") if path is not None and run.output.vtk else None
    recorder = OutputRecorder(run.cm, writer, keep, log, vtk, run.sampler)
    recorder.singularity.update(np.array([t0]), y0[None, :])
    if log is not None and recorder.singularity.report():
        log("warning: the initial state is " + recorder.singularity.report())
    bar = Progress(progress, t0, run.settings.t_end, compiling)
    integ = None
    try:
        integ = build_integrator(
            run,
            system,
            t0,
            y0,
            lambda: recorder.emit(np.array([t0]), y0[None, :]),
            compile_elsewhere,
            log,
        )
        status, message = run_batches(integ, times, recorder, writer, bar)
    except BaseException as exc:
        bar.close()
        close_failed_run(writer, integ, recorder, exc)
        raise
    finally:
        recorder.close()
    bar.close()
    return finish_run(run, integ, recorder, status, message, path, compiling.seconds, log)
