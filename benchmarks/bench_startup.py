r"""What a user waits for before and around the integration: the first run with an
empty kernel cache (compilation), a warm run, and the fixed cost of a whole
`flexmbs run` process against Exudyn's on a small rigid model.

    .venv/bin/python benchmarks/bench_startup.py --json benchmarks/results/startup.json
    .venv/bin/python benchmarks/bench_startup.py --table benchmarks/results/startup.json

Each measurement is a separate process, timed from outside (wall time and peak
resident memory, the largest of the run's processes):

1. cold: `flexmbs run` of each model in --cold (default H2, huang_two_link.toml) with
   an empty kernel cache (NUMBA_CACHE_DIR a new folder), compiling in one process
   (FLEXMBS_COMPILE_ELSEWHERE=0) and then as it does by default (the output
   quantities in a second process, flexmbs.precompile); its compile time and parts
   from the run's own report (flexmbs.compile_notice), its integration time from the
   result file;
2. warm: the same command again, then --repeat more times (the median is kept);
3. CHAIN-4 (data/models/chain_spatial_4.toml, 10 s): the warm `flexmbs run -q`
   process against a process that imports Exudyn, builds the same chain as an
   ObjectKinematicTree (benchmarks/peers.py) and integrates it with generalized-alpha
   at h = 1e-3 s (its outputs every 0.01 s); the ratio of the two wall times. The
   fixed cost of flexmbs is the process's wall time less the integration time the
   result file records.

Exudyn is the optional `bench` extra; without it the CHAIN-4 peer is left out.
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
                "exudyn_chain(4, 'spatial', 1e-3, 10.0)")
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


def bench(a, log):
    cache = Path(tempfile.mkdtemp(prefix="flexmbs-cold-cache-"))
    work = Path(tempfile.mkdtemp(prefix="flexmbs-startup-"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    results = {"machine": machine(), "cold": [], "warm": [], "chain4": None}
    try:
        for model in a.cold:
            for one_process in (True, False):
                shutil.rmtree(cache, ignore_errors=True)
                cache.mkdir()
                run_env = dict(env, FLEXMBS_COMPILE_ELSEWHERE="0") if one_process else env
                r = run_model(ROOT / model, run_env, work / "cold.h5")
                r["model"] = model
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
        chain = ROOT / "data/models/chain_spatial_4.toml"
        run_model(chain, env, work / "chain.h5", ["--t-end", "10", "-q"])  # compile
        runs = [run_model(chain, env, work / "chain.h5", ["--t-end", "10", "-q"])
                for _ in range(a.repeat)]
        c = {"flexmbs_wall": statistics.median(x["wall"] for x in runs),
             "flexmbs_integration": statistics.median(x["integration"] for x in runs),
             "steps": runs[0]["steps"]}
        c["flexmbs_fixed"] = c["flexmbs_wall"] - c["flexmbs_integration"]
        try:
            import exudyn  # noqa: F401
            peer = [timed([sys.executable, "-c",
                           EXUDYN_CHAIN.format(bench=str(ROOT / "benchmarks"))], env)[0]
                    for _ in range(a.repeat)]
            c["exudyn_wall"] = statistics.median(peer)
            c["ratio"] = c["flexmbs_wall"] / c["exudyn_wall"]
        except ImportError:
            log("Exudyn is not installed (the bench extra): no peer for CHAIN-4")
        log(f"CHAIN-4 10 s, whole process: flexmbs {c['flexmbs_wall']:.2f} s "
            f"(fixed {c['flexmbs_fixed']:.2f} s, integrating "
            f"{c['flexmbs_integration']:.3f} s)" +
            (f", Exudyn {c['exudyn_wall']:.2f} s, ratio {c['ratio']:.2f}"
             if "ratio" in c else ""))
        results["chain4"] = c
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    return results


def table(results):
    """The documentation's start-up table (markdown) from a run's JSON."""
    rows = ["| measurement | wall time | peak memory | notes |", "|---|---|---|---|"]
    for r in results["cold"]:
        seconds = {}
        for name, _, s in r["parts"]:
            seconds[name] = seconds.get(name, 0) + s
        parts = ", ".join(f"{name} {s} s" for name, s in seconds.items())
        elsewhere = ("; the output quantities meanwhile in a second process"
                     if r.get("outputs_elsewhere") else "")
        how = ("" if r.get("outputs_elsewhere")
               else ", one process (FLEXMBS_COMPILE_ELSEWHERE=0)")
        rows.append(f"| first `flexmbs run {r['model']}`, empty kernel cache{how} | "
                    f"{r['wall']:.0f} s | {r['rss_mb']:.0f} MB | compiling "
                    f"{r['compile_time']:.0f} s ({parts}{elsewhere}); integrating "
                    f"{r['integration']:.2f} s |")
    for r in results["warm"]:
        rows.append(f"| the same run again (warm cache) | {r['wall_median']:.2f} s | "
                    f"{r['rss_mb']:.0f} MB | integrating {r['integration']:.2f} s |")
    c = results["chain4"]
    if c:
        peer = (f"; Exudyn's whole process {c['exudyn_wall']:.2f} s (ratio "
                f"{c['ratio']:.2f})" if "ratio" in c else "")
        rows.append(f"| `flexmbs run data/models/chain_spatial_4.toml --t-end 10`, warm "
                    f"| {c['flexmbs_wall']:.2f} s | | fixed cost "
                    f"{c['flexmbs_fixed']:.2f} s, integrating "
                    f"{c['flexmbs_integration']:.3f} s{peer} |")
    m = results["machine"]
    rows.append("")
    rows.append(f"Measured on {m.get('cpu', '?')} ({m.get('cores', '?')} cores).")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cold", nargs="+", default=["data/models/huang_two_link.toml"])
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
