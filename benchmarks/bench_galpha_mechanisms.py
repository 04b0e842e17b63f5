r"""`galpha` against `bdf` at equal accuracy on the flexible models beyond H2 and SPIN:
the flexible four-bar (FB-flex, a closed loop), the slider-crank with a flexible rod
(SC, a closed loop driven at 30 rad/s), H8 (the eight-link tree under PD control) and
ARM-50 (a two-link arm, its forearm a 50-element aluminium tube, under geared PD
motors on point-to-point trajectories; built here, `arm50()`).

    .venv/bin/pip install -e '.[bench]'
    NUMBA_CACHE_DIR=/tmp/nc_bench .venv/bin/python benchmarks/bench_galpha_mechanisms.py \
        --json benchmarks/results/galpha_mechanisms.json --cache /tmp/galpha_mech_cache
    .venv/bin/python benchmarks/bench_galpha_mechanisms.py \
        --table benchmarks/results/galpha_mechanisms.json

One model: --model fb sc h8 arm50 (default all four); --t-end for a quick look.

Per model (one process, run one at a time: the timings are the runs' own counters,
sim.statistics["wall_time"], with numba compilation excluded by a warm-up first):

1. Horizon: the model's own (FB 10 s, SC 2 s, H8 5 s, ARM-50 3 s). For FB, `bdf` at
   its rtol 1e-8 takes millions of steps: a first run over --probe (1 s) extrapolates
   its time to the full horizon; above --budget (900 s) every method is compared
   over the probe's horizon instead, and the probe is the `bdf` run (the JSON says
   so: "horizon_reason").
2. Reference: `bdf` at rtol 100 times tighter than the model's 1e-8 (1e-10,
   atol rtol / 100), except ARM-50 and SC at 1e-9: ARM-50's first 0.3 s at 1e-10
   took 206 s (29 392 steps, order 2, 1 151 convergence failures), over half an hour
   for 3 s; SC at 1e-10 was stopped unfinished after 2 800 s. A reference over
   --reference-max-wall (2 400 s) is stopped and the model reported as failed.
   --cache keeps the references between runs (they are not compared in time).
3. `bdf` at the model's rtol (1e-8, atol 1e-10): steps, integration time and its
   largest difference from the reference over the outputs, in two measures: the
   joint angles (rad: FB crank and rocker; SC the rod's angle at the crank, the
   crank being driven; H8 its nine angles, the prismatic d3 left out; ARM-50
   shoulder and elbow), and the elastic deflection (FB the coupler's middle node,
   SC the rod's middle node, H8 the tips of links 1 and 2, ARM-50 the forearm's tip;
   each in its body's frame): max_t |d - d_ref| / max_t |d_ref| (the 3-vector's
   norm; H8 the larger of its two tips).
4. `galpha`: rtol 1e-3, 1e-4, 1e-5 with rho_inf 0.9 and 0.5, and three fixed steps
   (rho_inf 0.9, the Newton iteration's rtol 1e-8, as the README asks for fixed
   steps). A run is "equally accurate" when both its measures are within --slack
   (5 %) of bdf's; the cheapest such run is `galpha` at equal accuracy: steps and
   integration time against bdf's (both run --repeat times in turn when bdf takes
   under --repeat-limit s; medians), else one run each. When none qualifies the
   sweep goes on at rtol 1e-6 and 1e-7 (rho_inf 0.9) until one does; when still
   none, the closest (the smallest of max(joint ratio, deflection ratio) to bdf's)
   is reported, as bench_galpha.py does. A galpha run over --max-wall s is stopped
   and recorded as "timeout".
5. The other way round (--no-bdf-sweep skips it): `bdf` at rtol 1e-4, 1e-5, 1e-6
   and 1e-7, and for every finished galpha run the cheapest `bdf` (of these and the
   default) whose two measures are both within --slack of the galpha run's: its
   time against galpha's ("bdf_match", single runs).
6. Failures of either method (status, message, or an exception) are recorded in
   the runs and collected under "failures".
7. When the horizon was shortened (FB), galpha at rtol 1e-4 and 1e-5 (rho_inf 0.9,
   the README's range for flexible mechanisms) also runs the model's full horizon,
   to see the closed loop through (status, steps, time: "full_horizon_galpha").

The tables of --table (equal accuracy against bdf at its default rtol; galpha at rtol
1e-4 and 1e-5 against the cheapest bdf as accurate; the failures) come from the JSON.
"""

import argparse
import json
import os
import signal
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from peers import add_results_options, log, machine, printed_table

from flexmbs.elements import material
from flexmbs.elements.modal import body_modes
from flexmbs.elements.sections import round_tube_section
from flexmbs.model.description import Model
from flexmbs.model.library import four_bar_flexible, huang_eight_link, slider_crank
from flexmbs.model.timefunctions import Trajectory
from flexmbs.simulation import simulate

# ------------------------------------------------------------------ ARM-50
ARM_LINK1 = dict(mass=1.0, length=0.5, com=(0.25, 0.0, 0.0), inertia=(1e-4, 0.0209, 0.0209))
ARM_TUBE = dict(outer_diameter=0.025, wall=0.0015, length=0.7, elements=50, tip_mass=0.2,
                alpha=2e-4, youngs_modulus=70e9, density=2700.0, poisson_ratio=0.33)
ARM_MOTORS = {  # joint: kp, kd, gear ratio, rotor inertia, torque limit, target (rad)
    "shoulder": dict(kp=200.0, kd=15.0, gear_ratio=50.0, rotor_inertia=1e-5,
                     max_torque=1.0, target=-0.6),
    "elbow": dict(kp=80.0, kd=5.0, gear_ratio=50.0, rotor_inertia=5e-6, max_torque=0.5,
                  target=0.8)}
ARM_MOVE = 1.0  # s, the trajectories' duration
ARM_SPEC_FREQUENCY = 21.8  # Hz, the spec's first bending frequency of the forearm
ARM_BUILD_NOTE = (
    "every feature of the spec exists in flexmbs (round_tube_section, material with "
    "nu, node mass, alpha K_ff, geared PD actuators with rotor inertia and torque "
    "limits, Trajectory set-points); choices the spec leaves open: the quintic "
    "trajectory profile (flexmbs's default), no motor damping, the forearm released "
    "undeformed under gravity (it rings at its first mode from t = 0), its section y "
    "axis along link-1 y (bending in the x-z plane of motion)")


def arm50(elements=ARM_TUBE["elements"], t_end=3.0):
    """ARM-50: gravity -9.81 along z. Link 1 rigid (1 kg, 0.5 m along +x, centre of mass
    at 0.25 m, inertia about it diag(1e-4, 0.0209, 0.0209) kg m^2) on the revolute
    `shoulder` about ground y. Link 2 an aluminium round tube (E 70 GPa, rho 2700
    kg/m^3, nu 0.33; 25 mm outer diameter, 1.5 mm wall), 0.7 m along +x, `elements`
    elements, clamped at node 0, 0.2 kg at the tip node, structural damping
    alpha K_ff with alpha = 2e-4 s, on the revolute `elbow` about link-1 y at
    (0.5, 0, 0). Both joints at 0, at rest, the tube undeformed (released so under
    gravity). Geared PD motors (kp, kd on the joint, gear ratio 50, rotor inertia
    reflected n^2 J_r, motor-torque limits 1 and 0.5 N m, no motor damping) follow
    quintic point-to-point trajectories (the library's default profile; the spec
    names none) from 0 to -0.6 rad (shoulder) and 0 to 0.8 rad (elbow) over 1 s.
    Sensors: both joint angles, the tip's elastic deflection in the link-2 frame,
    both actuator torques."""
    model = Model("arm_50", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.005)
    l1 = ARM_LINK1
    model.add_rigid_body("link1", mass=l1["mass"], com=l1["com"], inertia=l1["inertia"],
                         inertia_about="com")
    model.add_marker("link1", "elbow", position=(l1["length"], 0.0, 0.0))
    tb = ARM_TUBE
    model.add_beam_body("link2", [[0.0, 0.0, 0.0], [tb["length"], 0.0, 0.0]],
                        round_tube_section(tb["outer_diameter"], tb["wall"]),
                        material(tb["youngs_modulus"], tb["density"],
                                 poisson_ratio=tb["poisson_ratio"]),
                        elements=elements, reference=(0.0, 1.0, 0.0),
                        node_masses={-1: tb["tip_mass"]}, alpha=tb["alpha"])
    model.add_marker("link2", "tip", node=-1)
    y = (0.0, 1.0, 0.0)
    model.add_joint("shoulder", "revolute", parent="ground", child="link1", axis=y)
    model.add_joint("elbow", "revolute", parent="link1", parent_marker="elbow",
                    child="link2", axis=y)
    for joint, m in ARM_MOTORS.items():
        model.add_actuator(f"{joint}_motor", joint, kp=m["kp"], kd=m["kd"],
                           gear_ratio=m["gear_ratio"], rotor_inertia=m["rotor_inertia"],
                           max_torque=m["max_torque"],
                           setpoint=Trajectory(times=(0.0, ARM_MOVE),
                                               values=(0.0, m["target"])))
    model.add_sensor("shoulder", "joint_coordinate", joint="shoulder")
    model.add_sensor("elbow", "joint_coordinate", joint="elbow")
    model.add_sensor("tip_deflection", "marker_deflection", body="link2", marker="tip",
                     frame="link2")
    for joint in ARM_MOTORS:
        model.add_sensor(f"{joint}_torque", "actuator_torque", actuator=f"{joint}_motor")
    return model


def arm50_check():
    """The forearm alone, clamped with its payload: its lowest frequencies (Hz)."""
    modes = body_modes(arm50().bodies["link2"])
    elastic = [(float(f), d) for f, d, r in
               zip(modes.frequencies, modes.descriptions, modes.rigid) if not r]
    return {"first_bending_hz": elastic[0][0], "spec_hz": ARM_SPEC_FREQUENCY,
            "lowest_hz": [[round(f, 3), d] for f, d in elastic[:6]],
            "forearm_mass_kg": float(arm50().bodies["link2"].mass)}


def slider_crank_rod_angle(t_end):
    """SC as shipped (data/models/slider_crank_flexible.toml), with a sensor of the
    rod's angle at the crank (the crank itself is driven)."""
    model = slider_crank(t_end=t_end)
    model.add_sensor("rod_angle", "joint_coordinate", joint="crank_rod")
    return model


H8_ANGLES = ["theta1", "theta2", "theta4x", "theta4y", "theta4z", "theta5", "theta6",
             "theta7", "theta8"]
FIXED_NEWTON_RTOL = 1e-8
MODELS = {
    "fb": {"name": "four_bar_flexible", "build": lambda T: four_bar_flexible(t_end=T),
           "t_end": 10.0, "closed_loop": True, "rtol": 1e-8, "reference_rtol": 1e-10,
           "joints": ["crank", "rocker"], "deflections": ["bending"],
           "fixed": (1e-3, 2e-4, 1e-4), "probe": True},
    "sc": {"name": "slider_crank_flexible", "build": slider_crank_rod_angle, "t_end": 2.0,
           "closed_loop": True, "rtol": 1e-8, "reference_rtol": 1e-9,
           "reference_note": "1e-9, not 1e-10: at 1e-10 bdf was stopped unfinished after "
           "2 800 s (its first 0.05 s had taken 16 s, 157 701 steps)",
           "joints": ["rod_angle"], "deflections": ["deflection"],
           "fixed": (1e-4, 2e-5, 1e-5)},
    "h8": {"name": "huang_eight_link", "build": lambda T: huang_eight_link(t_end=T),
           "t_end": 5.0, "closed_loop": False, "rtol": 1e-8, "reference_rtol": 1e-10,
           "joints": H8_ANGLES, "deflections": ["tip1_deflection", "tip2_deflection"],
           "fixed": (2e-3, 1e-3, 5e-4)},
    "arm50": {"name": "arm_50", "build": lambda T: arm50(t_end=T), "t_end": 3.0,
              "closed_loop": False, "rtol": 1e-8, "reference_rtol": 1e-9,
              "reference_note": "1e-9, not 1e-10: at 1e-10 bdf's first 0.3 s took 206 s "
              "(29 392 steps at order 2, 1 151 Newton convergence failures), over half "
              "an hour for 3 s",
              "joints": ["shoulder", "elbow"], "deflections": ["tip_deflection"],
              "fixed": (2e-3, 1e-3, 5e-4)},
}
SENSOR_SIZES = {"joint_coordinate": 1, "joint_rate": 1, "actuator_torque": 1,
                "actuator_work": 1, "marker_position": 3, "marker_deflection": 3,
                "marker_velocity": 3, "marker_angular_velocity": 3}
SWEEP = ([("galpha", r, rho, None) for rho in (0.9, 0.5) for r in (1e-3, 1e-4, 1e-5)])
EXTRA = [("galpha", 1e-6, 0.9, None), ("galpha", 1e-7, 0.9, None)]
BDF_LOOSE = [("bdf", r, None, None) for r in (1e-4, 1e-5, 1e-6, 1e-7)]
PRACTICAL = [("galpha", 1e-4, 0.9, None), ("galpha", 1e-5, 0.9, None)]


class RunTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise RunTimeout()


def columns(model):
    """{sensor name: slice of sim.sensors}."""
    out, k = {}, 0
    for name, sensor in model.sensors.items():
        size = SENSOR_SIZES[sensor.type]
        out[name] = slice(k, k + size)
        k += size
    return out


def label(config):
    method, rtol, rho, fixed = config
    if method == "bdf":
        return f"bdf rtol {rtol:.0e}"
    if fixed:
        return f"galpha h {fixed:.0e}, rho {rho:g}"
    return f"galpha rtol {rtol:.0e}, rho {rho:g}"


def run(spec, config, t_end, max_wall=None):
    """One run; its outputs (joint angles, deflections) and counters. Exceptions and
    a run stopped at max_wall s are statuses, not errors."""
    method, rtol, rho, fixed = config
    model = spec["build"](t_end)
    cols = columns(model)
    extra = {} if method == "bdf" else {"rho_inf": rho, "fixed_step": fixed}
    r = {"config": list(config), "label": label(config), "t_end": t_end}
    start = time.perf_counter()
    if max_wall:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, max_wall)
    try:
        sim = simulate(model, None, method=method, rtol=rtol, atol=rtol * 1e-2,
                       t_end=t_end, **extra)
    except RunTimeout:
        r.update(status="timeout", message=f"stopped after {max_wall:g} s",
                 wall=time.perf_counter() - start, steps=None)
        return r
    except Exception as exc:  # noqa: BLE001 - a failure is a finding
        r.update(status="error", message=f"{type(exc).__name__}: {exc}",
                 wall=time.perf_counter() - start, steps=None)
        return r
    finally:
        if max_wall:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    st = sim.statistics
    r.update(status=sim.status, message=sim.message or "", wall=float(st["wall_time"]),
             steps=int(st["nsteps"]), rejected=int(st.get("nrejected", 0)),
             residuals=int(st["nres"]), jacobians=int(st["njac"]),
             t_reached=float(sim.t[-1]))
    r["_t"] = np.asarray(sim.t)
    r["_joints"] = np.column_stack([sim.sensors[:, cols[n]] for n in spec["joints"]])
    r["_deflections"] = np.stack([sim.sensors[:, cols[n]] for n in spec["deflections"]])
    return r


def differences(r, ref):
    """(joints, deflection): the largest joint-angle difference (rad) and the largest
    deflection difference relative to the reference's largest deflection, over the
    outputs both runs have."""
    if "_t" not in r or r["status"] != "finished":
        return None, None
    n = min(len(r["_t"]), len(ref["_t"]))
    joints = float(np.abs(r["_joints"][:n] - ref["_joints"][:n]).max())
    rel = []
    for d, dr in zip(r["_deflections"], ref["_deflections"]):
        rel.append(np.linalg.norm(d[:n] - dr[:n], axis=1).max()
                   / np.linalg.norm(dr, axis=1).max())
    return joints, float(max(rel))


def public(r):
    return {k: v for k, v in r.items() if not k.startswith("_")}


def reference(spec, key, t_end, cache, log, max_wall=None):
    config = ("bdf", spec["reference_rtol"], None, None)
    path = Path(cache) / f"{key}_{t_end:g}_{spec['reference_rtol']:g}.npz" if cache else None
    if path and path.exists():
        z = np.load(path, allow_pickle=False)
        r = json.loads(str(z["meta"]))
        r.update(_t=z["t"], _joints=z["joints"], _deflections=z["deflections"],
                 cached=str(path))
        log(f"  reference {r['label']} from {path}: {r['status']}, {r['steps']} steps, "
            f"{r['wall']:.1f} s")
        return r
    r = run(spec, config, t_end, max_wall)
    log(f"  reference {r['label']}: {r['status']} {r['message']}, {r['steps']} steps, "
        f"{r['wall']:.1f} s")
    if path and "_t" in r:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, t=r["_t"], joints=r["_joints"], deflections=r["_deflections"],
                 meta=json.dumps(public(r)))
    return r


def bench_model(key, a, log):
    spec = MODELS[key]
    out = {"model": key, "name": spec["name"], "closed_loop": spec["closed_loop"],
           "model_t_end": spec["t_end"], "joints": spec["joints"],
           "deflections": spec["deflections"], "loadavg_start": os.getloadavg()}
    log(f"{key} ({spec['name']})")
    if key == "arm50":
        out["arm50_check"] = arm50_check()
        out["build_note"] = ARM_BUILD_NOTE
        log(f"  ARM-50 forearm, clamped with its payload: first bending "
            f"{out['arm50_check']['first_bending_hz']:.2f} Hz (spec {ARM_SPEC_FREQUENCY})")
    # warm-up: compile every path (not timed)
    for config in (("bdf", 1e-6, None, None), ("galpha", 1e-6, 0.9, None),
                   ("galpha", 1e-8, 0.9, 1e-4)):
        run(spec, config, 2e-3)
    bdf_config = ("bdf", spec["rtol"], None, None)
    t_end = a.t_end or spec["t_end"]
    bdf = None
    if spec.get("probe") and not a.t_end:
        probe = run(spec, bdf_config, a.probe)
        projected = probe["wall"] * spec["t_end"] / a.probe
        out["probe"] = {"t_end": a.probe, "steps": probe["steps"], "wall": probe["wall"],
                        "status": probe["status"],
                        "steps_per_simulated_s": (probe["steps"] or 0) / a.probe,
                        "projected_wall_full": projected}
        log(f"  probe {label(bdf_config)} over {a.probe:g} s: {probe['steps']} steps, "
            f"{probe['wall']:.1f} s; {spec['t_end']:g} s would take ~{projected:.0f} s")
        if projected > a.budget:
            t_end = a.probe
            bdf = probe
            out["horizon_reason"] = (
                f"bdf at rtol {spec['rtol']:g} over {a.probe:g} s: {probe['steps']} steps "
                f"in {probe['wall']:.0f} s, projected {projected:.0f} s for "
                f"{spec['t_end']:g} s (> {a.budget:g} s): every method compared over "
                f"{a.probe:g} s")
        else:
            out["horizon_reason"] = f"projected {projected:.0f} s <= {a.budget:g} s"
    out["t_end"] = t_end
    ref = reference(spec, key, t_end, a.cache, log, a.reference_max_wall)
    out["reference"] = public(ref)
    if spec.get("reference_note"):
        out["reference"]["note"] = spec["reference_note"]
    if "_t" not in ref:
        log("  no reference: nothing to compare")
        out["failures"] = [public(ref)]
        return out
    if bdf is None:
        bdf = run(spec, bdf_config, t_end)
    rows = [bdf]
    bdf["joints_diff"], bdf["deflection_diff"] = differences(bdf, ref)

    def show(r):
        j, d = r.get("joints_diff"), r.get("deflection_diff")
        acc = f"joints {j:.2e} rad, deflection {d:.2e}" if j is not None else ""
        log(f"  {r['label']:28s} {r['status']:8s} {r['wall']:8.2f} s "
            f"{r['steps'] if r['steps'] is not None else '-':>9} steps  {acc}"
            + (f"  [{r['message']}]" if r["message"] else ""))
    show(bdf)
    if bdf["joints_diff"] is None:
        out["runs"] = [public(bdf)]
        out["failures"] = [public(bdf)]
        return out
    tj = bdf["joints_diff"] * (1 + a.slack)
    td = bdf["deflection_diff"] * (1 + a.slack)

    def ratio(r):
        if r.get("joints_diff") is None or r["status"] != "finished":
            return np.inf
        return max(r["joints_diff"] / bdf["joints_diff"],
                   r["deflection_diff"] / bdf["deflection_diff"])

    configs = SWEEP + [("galpha", FIXED_NEWTON_RTOL, 0.9, h) for h in spec["fixed"]]
    for config in configs + EXTRA:
        if config in EXTRA and any(ratio(r) <= 1 + a.slack for r in rows[1:]):
            break
        r = run(spec, config, t_end, a.max_wall)
        r["joints_diff"], r["deflection_diff"] = differences(r, ref)
        r["ratio_to_bdf"] = ratio(r) if np.isfinite(ratio(r)) else None
        rows.append(r)
        show(r)
    # the other way round: bdf at looser tolerances, the cheapest of them (or the
    # default) at least as accurate as each galpha run (single runs)
    loose = []
    if a.bdf_sweep:
        for config in BDF_LOOSE:
            r = run(spec, config, t_end, a.max_wall)
            r["joints_diff"], r["deflection_diff"] = differences(r, ref)
            loose.append(r)
            show(r)
    out["bdf_sweep"] = [public(r) for r in loose]
    bdfs = [r for r in [bdf] + loose if r.get("joints_diff") is not None]
    for g in rows[1:]:
        if g.get("joints_diff") is None:
            continue
        match = [b for b in bdfs if b["joints_diff"] <= g["joints_diff"] * (1 + a.slack)
                 and b["deflection_diff"] <= g["deflection_diff"] * (1 + a.slack)]
        if match:
            b = min(match, key=lambda r: r["wall"])
            g["bdf_match"] = {"bdf": b["label"], "steps": b["steps"], "wall": b["wall"],
                              "joints_diff": b["joints_diff"],
                              "deflection_diff": b["deflection_diff"],
                              "steps_ratio": b["steps"] / g["steps"],
                              "time_ratio": b["wall"] / g["wall"]}
            log(f"  {g['label']:28s} vs the cheapest bdf as accurate, {b['label']}: "
                f"{b['wall'] / g['wall']:.2f}x less time")
    ok = [r for r in rows[1:] if ratio(r) <= 1 + a.slack]
    out["targets"] = {"joints": tj, "deflection": td}
    if ok:
        best = min(ok, key=lambda r: r["wall"])
        out["equal_accuracy"] = True
    else:
        done = [r for r in rows[1:] if np.isfinite(ratio(r))]
        best = min(done, key=ratio) if done else None
        out["equal_accuracy"] = False
    if best is not None:
        walls = {"bdf": [bdf["wall"]], "galpha": [best["wall"]]}
        if bdf["wall"] < a.repeat_limit:
            walls = {"bdf": [], "galpha": []}
            for _ in range(a.repeat):
                for k, config in (("bdf", bdf_config), ("galpha", tuple(best["config"]))):
                    walls[k].append(run(spec, config, t_end)["wall"])
        med = {k: statistics.median(v) for k, v in walls.items()}
        out["choice"] = {
            "galpha": best["label"], "joints_diff": best["joints_diff"],
            "deflection_diff": best["deflection_diff"], "ratio_to_bdf": ratio(best),
            "bdf_steps": bdf["steps"], "galpha_steps": best["steps"],
            "bdf_wall": med["bdf"], "galpha_wall": med["galpha"], "walls": walls,
            "steps_ratio": bdf["steps"] / best["steps"],
            "time_ratio": med["bdf"] / med["galpha"]}
        log(f"  {'equal accuracy' if ok else 'closest'}: {best['label']} "
            f"({ratio(best):.2f} x bdf's difference): "
            f"{out['choice']['steps_ratio']:.1f}x fewer steps, "
            f"{out['choice']['time_ratio']:.2f}x less time than bdf "
            f"(medians of {len(walls['bdf'])})")
    if t_end < spec["t_end"] and not a.t_end and a.full_check:
        out["full_horizon_galpha"] = []
        for config in PRACTICAL:
            full = run(spec, config, spec["t_end"], a.max_wall)
            out["full_horizon_galpha"].append(public(full))
            log(f"  {full['label']} over the full {spec['t_end']:g} s: {full['status']} "
                f"{full['message']}, {full['steps']} steps, {full['wall']:.1f} s")
    out["runs"] = [public(r) for r in rows]
    out["failures"] = [public(r) for r in rows + loose + [ref]
                       if r["status"] != "finished"]
    out["failures"] += [r for r in out.get("full_horizon_galpha", [])
                        if r["status"] != "finished"]
    out["loadavg_end"] = os.getloadavg()
    return out


def table(results):
    """Markdown table of a run, from the JSON."""
    lines = ["| model (horizon) | reference | bdf rtol 1e-8: steps, s (joints rad, "
             "deflection) | galpha at equal accuracy | steps, s (joints, deflection) | "
             "fewer steps | less time |", "|---|---|---|---|---|---|---|"]
    for m in results["models"]:
        if "runs" not in m:
            lines.append(f"| {m['name']} | failed: {m['failures']} | | | | | |")
            continue
        bdf = m["runs"][0]
        ref = m["reference"]
        horizon = f"{m['t_end']:g} s" + (f" of {m['model_t_end']:g}"
                                         if m["t_end"] < m["model_t_end"] else "")
        c = m.get("choice")
        b = (f"{bdf['steps']}, {c['bdf_wall'] if c else bdf['wall']:.2f} "
             f"({bdf['joints_diff']:.1e}, {bdf['deflection_diff']:.1e})")
        if not c:
            lines.append(f"| {m['name']} ({horizon}) | bdf {ref['config'][1]:.0e} | {b} "
                         f"| no galpha run finished | | | |")
            continue
        g = f"{c['galpha']}" if m["equal_accuracy"] else (
            f"none within 5 %; closest {c['galpha']} ({c['ratio_to_bdf']:.3g}x bdf's)")
        n = len(c["walls"]["bdf"])
        lines.append(
            f"| {m['name']} ({horizon}) | bdf {ref['config'][1]:.0e} | {b} | {g} | "
            f"{c['galpha_steps']}, {c['galpha_wall']:.3f} ({c['joints_diff']:.1e}, "
            f"{c['deflection_diff']:.1e}) | {c['steps_ratio']:.1f}x | "
            f"{c['time_ratio']:.2f}x{'' if n > 1 else ' (one run)'} |")
    lines += ["", "The other way round: galpha at rtol 1e-4 and 1e-5 (rho_inf 0.9) and the "
              "cheapest bdf of rtol 1e-4 ... 1e-8 at least as accurate (single runs):", "",
              "| model | galpha | steps, s (joints rad, deflection) | cheapest bdf as "
              "accurate | steps, s (joints, deflection) | less time |",
              "|---|---|---|---|---|---|"]
    for m in results["models"]:
        for r in m.get("runs", [])[1:]:
            if r["config"][1:] not in ([1e-4, 0.9, None], [1e-5, 0.9, None]):
                continue
            if r.get("joints_diff") is None:
                lines.append(f"| {m['name']} | {r['label']} | {r['status']}: "
                             f"{r['message']} | | | |")
                continue
            b = r.get("bdf_match")
            bs = (f"{b['bdf']} | {b['steps']}, {b['wall']:.2f} ({b['joints_diff']:.1e}, "
                  f"{b['deflection_diff']:.1e}) | {b['time_ratio']:.2f}x") if b else \
                "none of the sweep | | "
            lines.append(f"| {m['name']} | {r['label']} | {r['steps']}, {r['wall']:.3f} "
                         f"({r['joints_diff']:.1e}, {r['deflection_diff']:.1e}) | {bs} |")
    fails = [(m["name"], f) for m in results["models"] for f in m.get("failures", [])]
    if fails:
        lines += ["", "Failures:", ""]
        lines += [f"- {name}: {f['label']} over {f['t_end']:g} s: {f['status']}, "
                  f"{f['message']}" for name, f in fails]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", nargs="+", default=list(MODELS), choices=list(MODELS))
    p.add_argument("--t-end", type=float, help="every model over this horizon (a look)")
    p.add_argument("--probe", type=float, default=1.0,
                   help="FB: the horizon (s) of bdf's first run, to extrapolate")
    p.add_argument("--budget", type=float, default=900.0,
                   help="FB: the full horizon only when bdf is projected under this (s)")
    p.add_argument("--slack", type=float, default=0.05,
                   help="galpha may be this much (relative) less accurate than bdf")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--repeat-limit", type=float, default=60.0,
                   help="repeat the timed pair only when bdf takes under this (s)")
    p.add_argument("--max-wall", type=float, default=900.0,
                   help="stop a galpha run after this (s)")
    p.add_argument("--reference-max-wall", type=float, default=2400.0,
                   help="stop a reference run after this (s)")
    p.add_argument("--merge", action="store_true",
                   help="keep the other models of an existing --json file")
    p.add_argument("--no-full-check", dest="full_check", action="store_false",
                   help="skip galpha over the full horizon when it was shortened")
    p.add_argument("--no-bdf-sweep", dest="bdf_sweep", action="store_false",
                   help="skip bdf at rtol 1e-4 to 1e-7")
    p.add_argument("--cache", help="keep the reference runs here (npz)")
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return

    info = machine()
    log(f"machine: {info['cpu']}, {info['cores']} cores; numba {info['numba']}")
    start = time.perf_counter()
    results = {"machine": info, "command": " ".join(sys.argv[1:]), "slack": a.slack,
               "models": []}
    if a.merge and a.json and Path(a.json).exists():
        old = json.loads(Path(a.json).read_text())
        results["models"] = [m for m in old["models"] if m["model"] not in a.model]
        results["commands"] = old.get("commands", [old["command"]]) + [results["command"]]
        if any("model_wall" not in m for m in results["models"]):
            results["earlier_wall"] = old.get("total_wall", 0.0)
    for key in a.model:
        t0 = time.perf_counter()
        results["models"].append(bench_model(key, a, log))
        results["models"][-1]["model_wall"] = time.perf_counter() - t0
        results["models"].sort(key=lambda m: list(MODELS).index(m["model"]))
        results["total_wall"] = results.get("earlier_wall", 0.0) + sum(
            m.get("model_wall", 0.0) for m in results["models"])
        if a.json:
            Path(a.json).parent.mkdir(parents=True, exist_ok=True)
            Path(a.json).write_text(json.dumps(results, indent=1, default=float))
    log(f"total {time.perf_counter() - start:.0f} s")
    log(table(results))


if __name__ == "__main__":
    main()
