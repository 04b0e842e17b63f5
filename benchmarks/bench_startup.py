r"""What a user waits for before and around the integration: the first run from a wheel
installed into a new virtual environment (the kernels it carries), the first run with
an empty kernel cache (compilation), and the whole `flexmbs run` process against
Exudyn's on small rigid models.

    make wheel
    .venv/bin/python benchmarks/bench_startup.py --json benchmarks/results/startup.json
    .venv/bin/python benchmarks/bench_startup.py --table benchmarks/results/startup.json

Each measurement is a separate process, timed from outside (wall time and peak
resident memory, the largest of the run's processes). The machine's load average is
recorded with each part, and each time has a peer measured in the same run (the
ratio is the figure that carries over to another machine):

1. wheel (dist/flexmbs-*.whl, `make wheel`; left out without one): a new virtual
   environment, `pip install` of the wheel (its dependencies from the package index
   or pip's cache), then with an empty user kernel cache the first
   `flexmbs run data/models/huang_two_link.toml`, the first run of a closed-loop
   model (data/models/four_bar.toml) after it, and H2 again (warm); against the
   checkout's first run of H2 on an empty cache (2.);
2. cold: `flexmbs run` of each model in --cold (default H2) from the checkout with an
   empty kernel cache (NUMBA_CACHE_DIR a new folder), its compile time and parts from
   the run's own report (flexmbs.runtime.compile_notice), its integration time from the
   result file;
3. CHAIN-4 (data/models/chain_spatial_4.toml), warm, whole process: 1 ms of
   simulated time (the fixed cost of a run) and 10 s, each against a process that
   imports Exudyn, builds the same chain as an ObjectKinematicTree
   (benchmarks/peers.py) and integrates it with generalized-alpha at h = 1e-3 s,
   interleaved --repeat times (medians), and with the wheel (1.) the same run from
   the wheel's virtual environment in turn with them; `python -c "import numpy"` as the
   floor of any Python process on the machine at that moment, and NUMBA_FLOOR, a
   process that calls one cached kernel, as the floor of any numba program;
4. kernel speed: H2 (2 s) and ARM-50 (benchmarks/bench_galpha_mechanisms.py, 0.05 s)
   with the generic kernels (what the wheel carries) and the native ones
   (flexmbs.cli.precompile.kernel_speed: separate processes, interleaved).

Exudyn is the optional `bench` extra; without it the peers are left out.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from peers import add_results_options, log, machine, printed_table  # noqa: E402

FLEXMBS = [sys.executable, "-m", "flexmbs"]
TIMED = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
         "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
         "w = time.perf_counter() - t; "
         "sys.stdout.write(repr((r.returncode, w, "
         "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.stdout, r.stderr)))")
EXUDYN_CHAIN = ("import sys; sys.path.insert(0, {bench!r}); from peers import exudyn_chain; "
                "exudyn_chain(4, 'spatial', 1e-3, {t_end!r})")
PART = re.compile(r"^\s+(.+): (\d+) functions in (\d+) s$", re.M)


def timed(cmd, env):
    """(wall s, peak resident MB, stdout, stderr) of one process running cmd."""
    out = subprocess.run([sys.executable, "-c", TIMED, *cmd], env=env,
                         capture_output=True, text=True, check=True).stdout
    code, wall, rss_kb, stdout, stderr = eval(out)  # our own repr
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({code}): {stderr.strip()[-400:]}")
    return wall, rss_kb / 1024.0, stdout, stderr


def integration_time(path):
    """(integration time s, steps, compile time s) as the result file records them
    (attributes of /solver)."""
    with h5py.File(path, "r") as f:
        stats = dict(f["solver"].attrs)
    return float(stats.get("wall_time", 0.0)), int(stats.get("nsteps", 0)), \
        float(stats.get("compile_time", 0.0))


def run_model(model, env, out, extra=()):
    cmd = [*FLEXMBS, "run", str(model), "-o", str(out), *extra]
    wall, rss, _, err = timed(cmd, env)
    integ, steps, compiled = integration_time(out)
    parts = [(name, int(n), int(s)) for name, n, s in PART.findall(err)]
    return {"wall": wall, "rss_mb": rss, "integration": integ, "steps": steps,
            "compile_time": compiled, "parts": parts,
            "outputs_elsewhere": "output quantities in a second process" in err}


def load():
    return round(os.getloadavg()[0], 2)


def wheel_command(work):
    """(the `flexmbs` command of the wheel's virtual environment under `work`, the
    environment its processes run in: their own user kernel cache, as a new user's)."""
    venv = work / "venv"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "FLEXMBS_KERNELS", "VIRTUAL_ENV",
                        "PYTHONDONTWRITEBYTECODE")}
    env.update(FLEXMBS_CACHE_DIR=str(work / "user-cache"), PATH=f"{venv / 'bin'}:{env['PATH']}")
    return [str(venv / "bin" / "flexmbs")], env


def wheel_runs(wheel, work, log):
    """Part 1 of the module text, for the wheel at `wheel`."""
    venv = work / "venv"
    t = __import__("time").perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, str(wheel)], check=True)
    install = __import__("time").perf_counter() - t
    exe, env = wheel_command(work)
    out = {"wheel": wheel.name, "wheel_mb": wheel.stat().st_size / 1e6, "install": install,
           "load_before": load()}

    def run(model, name):
        cmd = [*exe, "run", str(ROOT / model), "-o", str(work / f"{name}.h5")]
        wall, rss, _, err = timed(cmd, env)
        integ, steps, compiled = integration_time(work / f"{name}.h5")
        return {"model": model, "wall": wall, "rss_mb": rss, "integration": integ,
                "steps": steps, "compile_time": compiled, "notice": err.strip()[:400]}

    out["first_h2"] = run("data/models/huang_two_link.toml", "h2")
    out["first_loop"] = run("data/models/four_bar.toml", "loop")
    out["warm_h2"] = run("data/models/huang_two_link.toml", "h2b")
    out["user_cache_files"] = sum(1 for p in (work / "user-cache").rglob("*.nbc"))
    out["load_after"] = load()
    for key in ("first_h2", "first_loop", "warm_h2"):
        r = out[key]
        log(f"wheel, {key}: {r['wall']:.1f} s (compiling {r['compile_time']:.1f} s, "
            f"integrating {r['integration']:.2f} s)")
    return out


def chain_runs(env, work, repeat, log, wheel=None):
    """Part 3 of the module text; `wheel`: (command, environment) of the wheel's
    virtual environment (wheel_command), whose runs go in turn with the checkout's."""
    chain = ROOT / "data/models/chain_spatial_4.toml"
    bench_dir = str(ROOT / "benchmarks")
    cases = {"1 ms": ["--t-end", "0.001", "--output-step", "0.001", "-q"],
             "10 s": ["--t-end", "10", "-q"]}
    run_model(chain, env, work / "chain.h5", cases["1 ms"])  # compiles, if it must

    def wheel_run(extra):
        cmd = [*wheel[0], "run", str(chain), "-o", str(work / "chain-wheel.h5"), *extra]
        return timed(cmd, wheel[1])[0]

    if wheel:
        wheel_run(cases["1 ms"])  # the wheel's own user cache gets what it lacks
    try:
        import exudyn  # noqa: F401
        peer = True
    except ImportError:
        peer = False
        log("Exudyn is not installed (the bench extra): no peer for CHAIN-4")
    out = {"load_before": load()}
    for name, extra in cases.items():
        t_end = float(extra[1])
        ours, theirs, floor, numba_floor, from_wheel = [], [], [], [], []
        for _ in range(repeat):
            ours.append(run_model(chain, env, work / "chain.h5", extra))
            if wheel:
                from_wheel.append(wheel_run(extra))
            if peer:
                theirs.append(timed([sys.executable, "-c", EXUDYN_CHAIN.format(
                    bench=bench_dir, t_end=t_end)], env)[0])
            floor.append(timed([sys.executable, "-c", "import numpy"], env)[0])
            numba_floor.append(timed([sys.executable, "-c", NUMBA_FLOOR], env)[0])
        c = {"flexmbs_wall": statistics.median(x["wall"] for x in ours),
             "flexmbs_integration": statistics.median(x["integration"] for x in ours),
             "steps": ours[0]["steps"], "python_numpy": statistics.median(floor),
             "numba_floor": statistics.median(numba_floor),
             "flexmbs_all": [x["wall"] for x in ours]}
        c["flexmbs_fixed"] = c["flexmbs_wall"] - c["flexmbs_integration"]
        if from_wheel:
            c["wheel_wall"] = statistics.median(from_wheel)
            c["wheel_all"] = from_wheel
        if peer:
            c["exudyn_wall"] = statistics.median(theirs)
            c["exudyn_all"] = theirs
            c["ratio"] = c["flexmbs_wall"] / c["exudyn_wall"]
        log(f"CHAIN-4 {name}, whole process: flexmbs {c['flexmbs_wall']:.2f} s "
            f"(integrating {c['flexmbs_integration']:.3f} s)" +
            (f", Exudyn {c['exudyn_wall']:.2f} s, ratio {c['ratio']:.2f}" if peer else "") +
            f"; python -c 'import numpy' {c['python_numpy']:.2f} s" +
            (f"; from the wheel's environment {c['wheel_wall']:.2f} s" if from_wheel else ""))
        out[name] = c
    out["load_after"] = load()
    return out


NUMBA_FLOOR = ("import gc; import numpy as np; from flexmbs.numerics.linalg import cross; "
               "cross(np.ones(3), np.ones(3), np.zeros(3)); gc.freeze()")
"""The least a process that runs any cached kernel pays: numpy, numba, and numba's
set-up at the first cached call (flexmbs.numerics.linalg.cross, three multiplications); its
objects frozen before the exit, as the `flexmbs` command does (flexmbs.__main__)."""

ARM50 = ("import sys\nsys.path.insert(0, {bench!r})\n"
         "from bench_galpha_mechanisms import arm50\nmodel = arm50()")


def bench(a, log):
    from flexmbs.cli.precompile import SPEED_CASES, kernel_speed

    cache = Path(tempfile.mkdtemp(prefix="flexmbs-cold-cache-"))
    work = Path(tempfile.mkdtemp(prefix="flexmbs-startup-"))
    # the processes write and read Python's byte code, as a user's do (an environment
    # that turns it off makes every process compile the package's sources, 0.25 s)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env = dict(base, NUMBA_CACHE_DIR=str(cache))
    warm_env = {k: v for k, v in base.items() if k != "NUMBA_CACHE_DIR"}
    results = {"machine": machine(), "cores": os.cpu_count(), "wheel": None, "cold": [],
               "warm": [], "chain4": None, "kernel_speed": None}
    try:
        wheels = sorted((ROOT / "dist").glob("flexmbs-*.whl"))
        if wheels and not a.skip_wheel:
            results["wheel"] = wheel_runs(wheels[-1], work, log)
        elif not a.skip_wheel:
            log("no wheel in dist/ (make wheel): the wheel's first runs are left out")
        for model in a.cold:
            shutil.rmtree(cache, ignore_errors=True)
            cache.mkdir()
            r = run_model(ROOT / model, env, work / "cold.h5")
            r["model"] = model
            r["load"] = load()
            log(f"cold {model}: {r['wall']:.1f} s, {r['rss_mb']:.0f} MB peak, "
                f"compiling {r['compile_time']:.1f} s, {r['parts']}")
            results["cold"].append(r)
            runs = [run_model(ROOT / model, env, work / "warm.h5")
                    for _ in range(a.repeat)]
            w = min(runs, key=lambda x: x["wall"])
            w["model"] = model
            w["wall_median"] = statistics.median(x["wall"] for x in runs)
            log(f"warm {model}: {w['wall_median']:.2f} s (median of {a.repeat}), "
                f"integrating {w['integration']:.2f} s")
            results["warm"].append(w)
        wheel = wheel_command(work) if results["wheel"] else None
        results["chain4"] = None if a.skip_chain else chain_runs(warm_env, work, a.repeat,
                                                                   log, wheel)
        if not a.skip_speed:
            cases = dict(SPEED_CASES)
            cases.pop("H2, 50 elements", None)
            cases["ARM-50"] = (ARM50.format(bench=str(ROOT / "benchmarks")), 0.05)
            results["kernel_speed"] = {"load_before": load(),
                                       "cases": kernel_speed(cases, a.repeat, log),
                                       "load_after": load()}
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return results


def _load(part):
    return f"load average {part['load_before']:.1f} to {part['load_after']:.1f}"


def table(results):
    """The documentation's start-up tables (markdown) from a run's JSON."""
    rows = ["| measurement | wall time | peak memory | notes |", "|---|---|---|---|"]
    wh = results.get("wheel")
    cold_h2 = next((r for r in results["cold"] if r["model"].endswith("huang_two_link.toml")),
                   None)
    if wh:
        rows.append(f"| new virtual environment, `pip install {wh['wheel']}` "
                    f"({wh['wheel_mb']:.0f} MB) | {wh['install']:.0f} s | | "
                    "its dependencies from the package index or pip's cache |")
        for key, what in (("first_h2", "then the first `flexmbs run {m}`"),
                          ("first_loop", "then the first `flexmbs run {m}` (closed loop)"),
                          ("warm_h2", "then H2 again")):
            r = wh[key]
            vs = ""
            if key == "first_h2" and cold_h2:
                vs = (f"; {cold_h2['wall'] / r['wall']:.0f} times as fast as the checkout's "
                      "first run on an empty cache (below)")
            rows.append(f"| {what.format(m=r['model'])} | {r['wall']:.1f} s | "
                        f"{r['rss_mb']:.0f} MB | compiling {r['compile_time']:.1f} s, "
                        f"integrating {r['integration']:.2f} s{vs} |")
    for r in results["cold"]:
        seconds = {}
        for name, _, s in r["parts"]:
            seconds[name] = seconds.get(name, 0) + s
        parts = ", ".join(f"{name} {s} s" for name, s in seconds.items())
        elsewhere = ("; the output quantities meanwhile in a second process"
                     if r.get("outputs_elsewhere") else "")
        rows.append(f"| checkout, first `flexmbs run {r['model']}`, empty kernel cache | "
                    f"{r['wall']:.0f} s | {r['rss_mb']:.0f} MB | compiling "
                    f"{r['compile_time']:.0f} s ({parts}{elsewhere}); integrating "
                    f"{r['integration']:.2f} s |")
    for r in results["warm"]:
        rows.append(f"| the same run again (warm cache) | {r['wall_median']:.2f} s | "
                    f"{r['rss_mb']:.0f} MB | integrating {r['integration']:.2f} s |")
    c = results["chain4"]
    if c:
        for name in ("1 ms", "10 s"):
            x = c[name]
            peer = (f"; Exudyn's whole process {x['exudyn_wall']:.2f} s (flexmbs/Exudyn "
                    f"{x['ratio']:.2f})" if "ratio" in x else "")
            wheel = (f"; {x['wheel_wall']:.2f} s from the wheel's environment "
                     f"({min(x['wheel_all']):.2f} to {max(x['wheel_all']):.2f} s)"
                     if "wheel_wall" in x else "")
            rows.append(f"| `flexmbs run data/models/chain_spatial_4.toml --t-end "
                        f"{'0.001' if name == '1 ms' else '10'}`, warm, from the checkout | "
                        f"{x['flexmbs_wall']:.2f} s | | integrating "
                        f"{x['flexmbs_integration']:.3f} s{wheel}{peer}; "
                        f"`python -c \"import numpy\"` {x['python_numpy']:.2f} s"
                        + (f"; one cached kernel's whole process {x['numba_floor']:.2f} s"
                           if "numba_floor" in x else "") + " |")
    m = results["machine"]
    rows.append("")
    loads = [f"{what} under a {_load(p)}" for what, p in (("the wheel's runs", wh),
                                                           ("CHAIN-4's", c)) if p]
    rows.append(f"Measured on {m.get('cpu', '?')} ({results.get('cores', '?')} cores): "
                + ", ".join(loads) + ".")
    ks = results.get("kernel_speed")
    if ks:
        rows += ["", "| run | steps | generic kernels s | native kernels s | generic/native |",
                 "|---|---|---|---|---|"]
        for name, r in ks["cases"].items():
            rows.append(f"| {name} | {r['steps']} | {r['generic']:.3f} | {r['native']:.3f} | "
                        f"{r['ratio']:.3f} |")
        rows.append("")
        rows.append(f"Integration times, medians of interleaved processes; {_load(ks)}.")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cold", nargs="*", default=["data/models/huang_two_link.toml"])
    p.add_argument("--skip-wheel", action="store_true", help="leave the wheel's runs out")
    p.add_argument("--skip-speed", action="store_true", help="leave the kernel speed out")
    p.add_argument("--skip-chain", action="store_true", help="leave CHAIN-4 out")
    p.add_argument("--repeat", type=int, default=3)
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    results = bench(a, log)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(results, indent=1))
    print(table(results))


if __name__ == "__main__":
    main()
