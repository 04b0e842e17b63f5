"""Compiling every kernel ahead of the first run.

`precompile()` (the command `flexmbs precompile`, and `make wheel` for the kernels a
wheel carries) runs a set of workloads that together call every kernel of the package:
each model of flexmbs.model.library (and of the checkout's data/models, when there is
one) that builds without arguments, for a few milliseconds with every integrator, in
every formulation it admits, with a reaction sensor on every joint, through the
analyses (modes, static equilibrium, linearization) and the kernels' Python face
(flexmbs.kernels). The workloads are derived from the models and the solver
vocabulary, not from a list of kernels; after them every kernel of the package
(flexmbs.runtime.kernel_cache.kernel_dispatchers, those numba inlines aside) must be in the
cache for this processor, and those that are not are reported (and fail the test
suite): a new kind of model that no workload reaches shows there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..simulation.output_kernels import compile_output_kernels

if TYPE_CHECKING:
    from ..model.description import Model

__all__ = [
    "workloads",
    "precompile",
    "uncached_kernels",
    "kernel_speed",
    "native_choice",
    "write_native_marker",
    "ship",
]

SHORT_RUN = 2e-3  # s of simulated time per workload run: every kernel, few steps


def _library_models() -> list[tuple[str, Callable[[], Model]]]:
    """[(name, builder)] of flexmbs.model.library's functions that build a Model
    without arguments."""
    import inspect

    from ..model import library
    from ..model.description import Model

    found: list[tuple[str, Callable[[], Model]]] = []
    for name, fn in vars(library).items():
        if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != library.__name__:
            continue
        signature = inspect.signature(fn)
        if signature.return_annotation not in (Model, "Model"):
            continue
        if all(p.default is not p.empty for p in signature.parameters.values()):
            found.append((name, fn))
    return found


def _checkout_models() -> list[tuple[str, Callable[[], Model]]]:
    """[(name, builder)] of the model files of data/models beside the package (a
    source checkout; an installed wheel has none)."""
    folder = Path(__file__).resolve().parents[2] / "data" / "models"
    if not folder.is_dir():
        return []

    def reader(path: Path) -> Callable[[], Model]:
        def build() -> Model:
            from ..formats.toml_reader import load_model

            return load_model(str(path))

        return build

    return [(p.name, reader(p)) for p in sorted(folder.glob("*.toml"))]


def _with_reaction_sensors(build: Callable[[], Model]) -> Model:
    """The model `build` makes, with a joint-reaction sensor on each of its joints."""
    model = build()
    for joint in list(getattr(model, "joints", {})):
        try:
            model.add_sensor(
                f"precompile_reaction_{len(model.sensors)}", "joint_reaction", joint=joint
            )
        except Exception:  # noqa: BLE001 - a joint that has no reaction sensor
            pass
    return model


def _run(build: Callable[[], Model], **settings: Any) -> None:
    """A short run (SHORT_RUN) of the model `build` makes, with `settings`."""
    from ..simulation.run import simulate

    simulate(build(), None, t_end=SHORT_RUN, output_step=SHORT_RUN / 2, **settings)


def _analyses(build: Callable[[], Model]) -> None:
    """The analyses of the model `build` makes, and every function of
    flexmbs.dynamics.api on its initial state."""
    import numpy as np

    from ..analysis.equilibrium import static_equilibrium
    from ..analysis.linearize import linearize
    from ..analysis.modes import model_modes
    from ..dynamics import api
    from ..dynamics.constrained import make_consistent
    from ..model.compiled import compile_model

    model = build()
    model_modes(model)
    cm = compile_model(model)
    if cm.has_constraints:
        make_consistent(cm)
    q, u = cm.q0.copy(), cm.u0.copy()
    for name in api.__all__:
        fn = getattr(api, name)
        args = {"q": q, "u": u, "udot": np.zeros_like(u)}
        import inspect

        params = [p for p in inspect.signature(fn).parameters if p in args]
        fn(cm, *(args[p] for p in params))
    for step in (lambda: static_equilibrium(cm), lambda: linearize(cm)):
        try:
            step()
        except Exception:  # noqa: BLE001 - not every model has either; kernels compiled
            pass


def workloads() -> list[tuple[str, Callable[[], object]]]:
    """[(name, function)]: the runs and analyses that together call every kernel (the
    module text). Each function raises for a combination the model does not admit."""
    from ..model.vocabulary import CONSTRAINT_FORMULATIONS, FORMULATIONS, SOLVER_METHODS
    from ..solvers.linear_choice import LINEAR_SOLVERS

    jobs: list[tuple[str, Callable[[], object]]] = [("output quantities", compile_output_kernels)]
    # The long beam's runs alone reach the bordered band kernels: first, so that the
    # loop (_run_workloads) stops once the models have reached the rest
    for solver in LINEAR_SOLVERS:
        long_beam = partial(_long_beam_model, solver)
        for method in ("bdf", "galpha"):
            jobs.append((f"long beam {method} {solver}", partial(_run, long_beam, method=method)))
    models = _library_models() + _checkout_models()
    for name, build in models:
        for method in SOLVER_METHODS:
            jobs.append((f"{name} {method}", partial(_run, build, method=method)))
        for formulation in FORMULATIONS[1:]:
            jobs.append(
                (
                    f"{name} {formulation}",
                    partial(_run, build, method="bdf", formulation=formulation),
                )
            )
        for constraints in CONSTRAINT_FORMULATIONS[1:]:
            for method in ("bdf", "galpha"):
                jobs.append(
                    (
                        f"{name} {method} {constraints}",
                        partial(_run, build, method=method, constraints=constraints),
                    )
                )
        with_sensors = partial(_with_reaction_sensors, build)
        jobs.append((f"{name} reaction sensors", partial(_run, with_sensors, method="bdf")))
        jobs.append((f"{name} analyses", partial(_analyses, build)))
    return jobs


def _long_beam_model(linear_solver: str) -> Model:
    """H2 with its flexible link in enough elements that its iteration matrix has an
    interior (the bordered band layout of [solver] linear_solver), no shipped model's
    beam being that long."""
    from ..model.library import huang_two_link

    model = huang_two_link(elements=12)
    model.set_solver(linear_solver=linear_solver)
    return model


_ONE_BEAM = "a beam body's own term alone, which the tests check; runs assemble it in place"
NOT_RUN_KERNELS = {
    "flexmbs.runtime.tuple_ref._store_tuple": "the tests' reference for the native value that "
    "flexmbs.runtime.tuple_ref writes from Python",
    "flexmbs.solvers.bdf_kernels.no_jacobian": "the BDF driver's stand-in for a residual "
    "given without a Jacobian (flexmbs.solvers.bdf.solve_dae on a user's DAE, which "
    "compiles for the user's functions anyway); a model's run always has one",
    "flexmbs.dynamics.flexible_body.damping_force": _ONE_BEAM,
    "flexmbs.dynamics.flexible_body.elastic_force": _ONE_BEAM,
    "flexmbs.dynamics.flexible_body.flexible_point_force": _ONE_BEAM,
    "flexmbs.dynamics.flexible_body.strain_energy": _ONE_BEAM,
}
"""Kernels of the package that no run or analysis calls, with the reason; left out of
the check that the workloads reach every kernel (a name here that is no kernel fails
the tests)."""


def uncached_kernels() -> list[str]:
    """Qualified names of the package's kernels (those numba inlines aside) that the
    disk cache does not hold for this process's processor."""
    from ..runtime.kernel_cache import cached_for_this_target, is_inlined, kernel_dispatchers

    return sorted(
        name
        for name, d in kernel_dispatchers().items()
        if not is_inlined(d) and name not in NOT_RUN_KERNELS and not cached_for_this_target(d)
    )


def _run_workloads(
    indices: Iterable[int], log: Callable[[str], None] | None
) -> dict[str, str | None]:
    """Run the workloads at `indices` until every kernel is cached; returns {name:
    None, or the reason it does not apply}."""
    import warnings

    from ..errors import FlexmbsError
    from ..runtime.kernel_cache import cached_for_this_target, is_inlined, kernel_dispatchers

    remaining = {
        n: d
        for n, d in kernel_dispatchers().items()
        if not is_inlined(d) and n not in NOT_RUN_KERNELS
    }
    jobs = workloads()
    outcome: dict[str, str | None] = {}
    for i in indices:
        remaining = {n: d for n, d in remaining.items() if not cached_for_this_target(d)}
        if not remaining:
            break
        name, fn = jobs[i]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn()
            outcome[name] = None
        except (FlexmbsError, ValueError, NotImplementedError, ImportError) as exc:
            text = str(exc).splitlines()
            outcome[name] = f"{type(exc).__name__}: {text[0] if text else ''}"
        except Exception as exc:  # noqa: BLE001 - a run that fails has compiled its kernels
            outcome[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
        if log:
            log(name)
    return outcome


def precompile(jobs: int = 1, kernels: str | None = None) -> dict[str, Any]:
    """Compile every kernel into the user cache (module text) in `jobs` processes, for
    the processor `kernels` ("native", "generic"; None: the one runs choose, see
    flexmbs.runtime.kernel_cache). Returns {"seconds", "compiled" (functions compiled),
    "parts" [per process: {"compiled", "kernels_compiled" (the package's kernels among
    them; the rest are numba's implementations of numpy functions, which every process
    compiles for itself), "loaded" (kernels loaded from the cache, among
    them those another process compiled meanwhile), "waits", "wait_seconds" (for a
    kernel another process was compiling), "timeouts", "workloads", "seconds",
    "cpu_seconds"}],
    "workloads" (run), "not_applicable" {workload: reason}, "uncached" [kernels still
    not in the cache], "target"}."""
    import json
    import time

    env = dict(os.environ)
    if kernels:
        env["FLEXMBS_KERNELS"] = kernels
    start = time.perf_counter()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "flexmbs.cli.precompile", "--part", f"{k}/{jobs}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for k in range(jobs)
    ]
    outcome: dict[str, str | None] = {}
    compiled, parts = 0, []
    for p in processes:
        out, _ = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"a kernel-compiling process failed (exit {p.returncode})")
        part = json.loads(out.strip().splitlines()[-1])
        outcome.update(part["outcome"])
        compiled += part["compiled"]
        parts.append({k: v for k, v in part.items() if k != "outcome"})
    check = subprocess.run(
        [sys.executable, "-m", "flexmbs.cli.precompile", "--uncached"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        text=True,
        check=True,
    )
    status = json.loads(check.stdout.strip().splitlines()[-1])
    return {
        "seconds": time.perf_counter() - start,
        "compiled": compiled,
        "parts": parts,
        "workloads": len(outcome),
        "not_applicable": {k: v for k, v in outcome.items() if v is not None},
        "uncached": status["uncached"],
        "kernels": status["kernels"],
        "target": status["target"],
    }


def _part_main(spec: str) -> None:
    """One of `precompile`'s processes ("k/jobs"): the workloads `_part_order` gives
    it, until every kernel is cached; prints {"outcome", "compiled", "kernels_compiled",
    "loaded", "waits", "wait_seconds", "timeouts", "workloads", "seconds",
    "cpu_seconds"} as JSON (`precompile` says what they are)."""
    import json
    import time

    from ..runtime.compile_notice import CompileWatch

    start = time.perf_counter()
    k, jobs = (int(x) for x in spec.split("/"))
    with CompileWatch() as watch:
        said = [0, 0.0]

        def log(name: str) -> None:
            if watch.functions > said[0]:
                sys.stderr.write(
                    f"  {name}: {watch.functions - said[0]} functions compiled in "
                    f"{watch.seconds - said[1]:.0f} s\n"
                )
                sys.stderr.flush()
                said[:] = [watch.functions, watch.seconds]

        outcome = _run_workloads(_part_order(k, jobs), log)
    from ..runtime.kernel_cache import compile_counts, kernel_dispatchers

    kernels = kernel_dispatchers().values()
    record = {
        "outcome": outcome,
        "compiled": watch.functions,
        "kernels_compiled": sum(sum(d._cache_misses.values()) for d in kernels),
        "loaded": sum(sum(d._cache_hits.values()) for d in kernels),
    }
    record.update(
        compile_counts,
        workloads=len(outcome),
        seconds=time.perf_counter() - start,
        cpu_seconds=time.process_time(),
    )
    print(json.dumps(record))


def _part_order(k: int, jobs: int) -> range:
    """The workloads process k of `jobs` runs, in order: k, k + jobs, ... (Starting the
    second process on the models' analyses, which need no output kernels, or adding a
    third process, did not shorten the wall time: every run needs the output
    quantities' and the residuals' kernels first, and while one process compiles them
    the others wait for them under the cache's lock.)"""
    return range(k, len(workloads()), jobs)


def _uncached_main() -> None:
    import json

    from ..runtime.config import CACHE_DIR, TARGET
    from ..runtime.kernel_cache import is_inlined, kernel_dispatchers

    kernels = sum(
        not is_inlined(d) and n not in NOT_RUN_KERNELS for n, d in kernel_dispatchers().items()
    )
    target = {"kind": TARGET.kind, "shipped": TARGET.shipped, "why": TARGET.why, "cache": CACHE_DIR}
    print(json.dumps({"uncached": uncached_kernels(), "kernels": kernels, "target": target}))


TIMING = """
import json, sys, time
from flexmbs.runtime.config import TARGET
from flexmbs.simulation import simulate
{build}
times = []
for _ in range(2):
    sim = simulate(model, None, t_end={t_end}, history=True)
    times.append(sim.statistics["wall_time"])
print(json.dumps({{"kind": TARGET.kind, "seconds": times[-1], "steps":
    sim.statistics["nsteps"]}}))
"""

SPEED_CASES = {
    "H2": ("from flexmbs.model.library import huang_two_link\nmodel = huang_two_link()", 2.0),
    "H2, 50 elements": (
        "from flexmbs.model.library import huang_two_link\nmodel = huang_two_link(elements=50)",
        0.02,
    ),
}
"""The runs on which `kernel_speed` compares generic with native kernels: (code
building `model`, simulated s)."""


def kernel_speed(
    cases: dict[str, tuple[str, float]] | None = None,
    repeat: int = 3,
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """{case: {"generic": s, "native": s, "ratio": generic / native, "steps"}}: the
    integration time (the second run in a process, so the kernels' loading is out)
    of each case with the generic and the native kernels, each a separate process,
    the two interleaved `repeat` times; medians. Compiles what is missing."""
    import json
    import statistics

    out: dict[str, dict[str, Any]] = {}
    for name, (build, t_end) in (cases or SPEED_CASES).items():
        code = TIMING.format(build=build, t_end=t_end)
        times: dict[str, list[float]] = {"generic": [], "native": []}
        steps = 0
        for _ in range(repeat):
            for kind in times:
                r = subprocess.run(
                    [sys.executable, "-c", code],
                    env=dict(os.environ, FLEXMBS_KERNELS=kind),
                    capture_output=True,
                    text=True,
                    stdin=subprocess.DEVNULL,
                )
                if r.returncode != 0:
                    raise RuntimeError(f"timing {name} ({kind}) failed: {r.stderr[-800:]}")
                record = json.loads(r.stdout.strip().splitlines()[-1])
                times[kind].append(record["seconds"])
                steps = record["steps"]
        g, n = statistics.median(times["generic"]), statistics.median(times["native"])
        out[name] = {
            "generic": g,
            "native": n,
            "ratio": g / n,
            "steps": steps,
            "generic_all": times["generic"],
            "native_all": times["native"],
        }
        if log:
            log(
                f"  {name}: generic {g:.3f} s, native {n:.3f} s ({steps} steps): "
                f"generic/native {g / n:.3f}"
            )
    return out


NATIVE_GAIN = 1.05
"""generic / native integration time above which `flexmbs precompile --native` makes
runs use the native kernels (below it the difference is within the timing noise of a
few runs, and the generic kernels serve)."""


def native_choice(speed: dict[str, dict[str, Any]]) -> tuple[bool, str]:
    """(use native, sentence): native kernels are kept when every case runs at least
    NATIVE_GAIN times faster with them."""
    worst = min(r["ratio"] for r in speed.values())
    if worst >= NATIVE_GAIN:
        return True, (
            f"native kernels are {worst:.2f} times as fast or more: "
            "later runs on this machine use them"
        )
    return False, (
        f"native kernels are not measurably faster (generic/native "
        f"{worst:.2f}, below {NATIVE_GAIN}): later runs keep the generic kernels"
    )


def write_native_marker(cache_dir: str, speed: dict[str, Any]) -> None:
    """Record in `cache_dir` that runs on this machine use the native kernels."""
    import json

    from ..runtime.kernel_cache import _host_cpu, build_record, native_marker_path

    cpu, features = _host_cpu()
    record = dict(build_record(cpu, features), speed=speed)
    os.makedirs(cache_dir, exist_ok=True)
    with open(native_marker_path(cache_dir), "w") as f:
        json.dump(record, f, indent=1)


def ship(cache_dir: str, into: str) -> tuple[int, int]:
    """Copy the generic kernels of the user cache `cache_dir` into `into` (the
    package's _kernels folder of a wheel being built) with its manifest; returns
    (functions, bytes) copied. Entries for another processor stay behind."""
    import json

    from ..runtime.kernel_cache import GENERIC_CPU, MANIFEST, build_record, copy_entries

    skipped: list[str] = []
    functions, size = copy_entries(cache_dir, into, GENERIC_CPU, skipped)
    for index in skipped:
        print(
            f"  left out {os.path.relpath(index, cache_dir)}: an entry there is for a "
            "type of a module not importable here (compiled by a test or a user law)"
        )
    with open(os.path.join(into, MANIFEST), "w") as f:
        json.dump(build_record(GENERIC_CPU, ""), f, indent=1)
    return functions, size


def _ship_main(folder: str) -> int:
    """`make wheel`'s step: every kernel compiled for the generic processor, then
    copied to `folder` with its manifest. Exit status 1 if a kernel is missing."""
    import shutil

    from ..runtime.config import CACHE_DIR

    def log(text: str) -> None:
        print(text, flush=True)

    log(f"compiling every kernel for the generic processor into {CACHE_DIR}")
    r = precompile(jobs=max(1, min(2, os.cpu_count() or 1)), kernels="generic")
    log(f"  {r['kernels']} kernels, {r['compiled']} functions compiled in {r['seconds']:.0f} s")
    if r["uncached"]:
        log("kernels no workload reached: " + ", ".join(r["uncached"]))
        return 1
    shutil.rmtree(folder, ignore_errors=True)
    functions, size = ship(CACHE_DIR, folder)
    log(f"  {functions} compiled functions ({size / 1e6:.1f} MB) copied to {folder}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--part":
        _part_main(sys.argv[2])
    elif sys.argv[1:] == ["--uncached"]:
        _uncached_main()
    elif len(sys.argv) == 3 and sys.argv[1] == "--ship":
        sys.exit(_ship_main(sys.argv[2]))
    else:
        sys.exit("usage: python -m flexmbs.cli.precompile --ship FOLDER (or flexmbs precompile)")
