r"""The flexible loops with the peers' default damping: what `modal_damping = "bands"`
(1 % below 100 Hz, 10 % below 1 kHz, critical above; ADAMS and RecurDyn give flexible
bodies this by default) changes in the motion, and what it saves.

    NUMBA_CACHE_DIR=/tmp/nc_bench .venv/bin/python benchmarks/bench_band_damping.py \
        --json benchmarks/results/band_damping.json --cache /tmp/galpha_mech_cache
    .venv/bin/python benchmarks/bench_band_damping.py \
        --table benchmarks/results/band_damping.json

The models are bench_galpha_mechanisms.py's flexible four-bar (FB, 10 s) and flexible
slider-crank (SC, 2 s), the same files with one line added to the flexible link:
`modal_damping = "bands"`. Per model, one process, numba compiled by a warm-up first:

1. What the damping changes: the damped model under `bdf` at rtol 1e-8 against the
   undamped model's reference (bench_galpha_mechanisms.py's, `bdf` 1e-10 for FB over
   its first 1 s, 1e-9 for SC over 2 s; --cache shares them with that benchmark),
   in its measures: the largest joint-angle difference (rad) and the largest
   deflection difference over the largest deflection.
2. The damped model's own reference: `bdf` at the tolerance of the undamped one (FB
   1e-10, SC 1e-9; atol rtol / 100) over the full horizon (SC at 1e-10 had not ended
   after 30 minutes).
3. `bdf` at 1e-8 (the files' setting) and 1e-6, and `galpha` at rtol 1e-4 and 1e-5
   (rho_inf 0.9 and 1), each against that reference: steps, integration time
   (sim.statistics["wall_time"]) and the two measures.
4. The undamped model as shipped, for scale: `bdf` at 1e-8 over the horizon its
   reference covers (FB 1 s, SC 2 s), from the same cache's run or a new one.
"""

import argparse
import sys

from bench_galpha_mechanisms import MODELS, differences, label, public, reference, run
from peers import begin, finish, log

DAMPED_LINK = {"fb": "coupler", "sc": "rod"}
UNDAMPED_HORIZON = {"fb": 1.0, "sc": 2.0}
CONFIGS = [("bdf", 1e-8, None, None), ("bdf", 1e-6, None, None),
           ("galpha", 1e-4, 0.9, None), ("galpha", 1e-5, 0.9, None),
           ("galpha", 1e-4, 1.0, None), ("galpha", 1e-5, 1.0, None)]


def damped(key):
    """MODELS[key] with modal_damping = "bands" on its flexible link."""
    spec = dict(MODELS[key])
    build = spec["build"]

    def build_damped(t_end):
        model = build(t_end)
        model.bodies[DAMPED_LINK[key]].modal_damping = "bands"
        return model

    spec.update(build=build_damped, name=spec["name"] + "_bands")
    return spec


def measured(r, ref):
    joints, deflection = differences(r, ref)
    out = public(r)
    out.update(joints=joints, deflection=deflection)
    return out


def bench_model(key, args):
    spec, plain = damped(key), MODELS[key]
    t_end = plain["t_end"]
    log(f"{spec['name']}: warm-up")
    run(spec, ("bdf", 1e-4, None, None), 0.01)
    run(spec, ("galpha", 1e-4, 0.9, None), 0.01)
    horizon = UNDAMPED_HORIZON[key]
    undamped_ref = reference(plain, key, horizon, args.cache, log)
    undamped = run(plain, ("bdf", 1e-8, None, None), horizon, args.max_wall)
    log(f"  undamped {label(undamped['config'])} over {horizon:g} s: {undamped['status']}, "
        f"{undamped['steps']} steps, {undamped['wall']:.1f} s")
    change = run(spec, ("bdf", 1e-8, None, None), horizon)
    out = {"model": key, "name": spec["name"], "t_end": t_end, "damped_link":
           DAMPED_LINK[key], "undamped_horizon": horizon,
           "undamped_reference": public(undamped_ref),
           "undamped_bdf": measured(undamped, undamped_ref),
           "damping_change": measured(change, undamped_ref)}
    ref = reference(spec, key + "_bands", t_end, args.cache, log)
    out["reference"] = public(ref)
    out["runs"] = []
    for config in CONFIGS:
        r = measured(run(spec, config, t_end, args.max_wall), ref)
        log(f"  {r['label']}: {r['status']}, {r['steps']} steps, {r['wall']:.2f} s, "
            f"joints {r['joints']}, deflection {r['deflection']}")
        out["runs"].append(r)
    return out


def _e(x):
    return "-" if x is None else f"{x:.1e}"


def table(results):
    rows = ["| model (horizon) | run | steps | s | joints (rad) | deflection |",
            "|---|---|---|---|---|---|"]
    change = ["| model | undamped bdf rtol 1e-8: steps, s | damped bdf rtol 1e-8: "
              "steps, s | damping's change: joints (rad), deflection |",
              "|---|---|---|---|"]
    for m in results["models"]:
        u, c = m["undamped_bdf"], m["damping_change"]
        change.append(f"| {m['name']} ({m['undamped_horizon']:g} s) | {u['steps']}, "
                      f"{u['wall']:.1f} | {c['steps']}, {c['wall']:.2f} | "
                      f"{_e(c['joints'])}, {_e(c['deflection'])} |")
        ref = m["reference"]
        rows.append(f"| {m['name']} ({m['t_end']:g} s) | reference {ref['label']} | "
                    f"{ref['steps']} | {ref['wall']:.2f} | | |")
        for r in m["runs"]:
            steps = r["steps"] if r["status"] == "finished" else r["status"]
            rows.append(f"| | {r['label']} | {steps} | {r['wall']:.2f} | "
                        f"{_e(r['joints'])} | {_e(r['deflection'])} |")
    return "\n".join(change) + "\n\n" + "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=["fb", "sc"], choices=["fb", "sc"])
    parser.add_argument("--cache", help="directory of the references (npz)")
    parser.add_argument("--max-wall", type=float, default=1800.0,
                        help="stop a run after this many seconds")
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    results = {"machine": info, "models": [bench_model(k, args) for k in args.model]}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
