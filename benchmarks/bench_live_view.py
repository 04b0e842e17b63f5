"""What the live view (flexmbs.show(sim, live=True)) costs the control loop it watches:
the loops of benchmarks/bench_control_loop.py (the rotary flexible link under LQR, the
UR5 with three flexible links under PD, a controller in Python at 1 kHz) timed without
a view and with one, its page open in a headless Chromium (Playwright, the system's
Chromium) asking for frames as fast as it draws them; interleaved rounds, medians.
Slowdown = wall with the view / wall without - 1; and on the CPU clock of this
process (the loop's thread and the server's: what the view itself takes from the
loop, without the browser's processes competing for the cores). Also the frames the
page got per second of the loop, the CPU time per frame of the server's thread (the
view keeps frames under flexmbs.viewer.live.LOOP_SHARE of the loop's time), the CPU
time of the process's threads other than the loop's (the server's: the frames, the
requests) per second of the loop, and the
CPU time of the browser's processes (Chromium and Playwright's driver, read from
/proc) per second of the loop: what they take from a machine without a core to spare.

    .venv/bin/python benchmarks/bench_live_view.py --json results/live_view.json
    .venv/bin/python benchmarks/bench_live_view.py --table results/live_view.json
"""

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import flexmbs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_control_loop import DT, rotary_link, ur5  # noqa: E402

CASES = {"rotary flexible link (LQR)": (rotary_link, 10.0),
         "UR5, three flexible links (PD)": (ur5, 4.0)}


def _children_cpu():
    """CPU time (s) of this process's descendants (the browser), from /proc (0 where
    there is none)."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents, cpu = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / ticks
    mine, total = {os.getpid()}, 0.0
    grown = True
    while grown:
        grown = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                total += cpu[pid]
                grown = True
    return total


def loop(make, t_end, page=None):
    """(wall s of the loop, steps, frames the page got, CPU s per frame, CPU s of this
    process, CPU s of the browser, CPU s of this process's other threads than the
    loop's) of one run, with the live view open in `page` (None: no view)."""
    from flexmbs.viewer.browser import wait_ready

    model, controller, _ = make()
    sim = flexmbs.Simulator(model)
    view = None
    if page is not None:
        view = flexmbs.show(sim, live=True, browser=False)
        page.goto(view.url)
        wait_ready(page)
        page.wait_for_function("flexmbsViewer.liveFrames > 0")
    steps = int(round(t_end / DT))
    frames = view.frames if view else 0
    browser = _children_cpu()
    start, process, own = time.perf_counter(), time.process_time(), time.thread_time()
    for _ in range(steps):
        sim.step(DT, inputs=controller(sim))
    wall = time.perf_counter() - start
    own = time.thread_time() - own
    process = time.process_time() - process
    browser = _children_cpu() - browser
    cpu = 0.0
    if view is not None:
        frames = view.frames - frames
        cpu = view.frame_cpu
        page.goto("about:blank")
        view.close()
    sim.close()
    return wall, steps, frames, cpu, process, browser, process - own


def measure(rounds):
    from flexmbs.viewer.browser import browser_page

    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
           "python": platform.python_version(), "rounds": rounds, "dt": DT, "cases": {}}
    load = []
    with browser_page((960, 600)) as (page, errors):
        for make, _ in CASES.values():  # compile and warm up
            loop(make, 0.2)
            loop(make, 0.2, page)
        runs = {name: {"plain": [], "view": []} for name in CASES}
        for _ in range(rounds):
            load.append(os.getloadavg()[0])
            for name, (make, t_end) in CASES.items():
                runs[name]["plain"].append(loop(make, t_end))
                runs[name]["view"].append(loop(make, t_end, page))
        if errors:
            raise RuntimeError(f"the page reported: {errors[0]}")
    out["load_average"] = float(np.median(load))
    for name, r in runs.items():
        plain = np.array([x[0] for x in r["plain"]])
        view = np.array([x[0] for x in r["view"]])
        ratio = view / plain
        cpu_ratio = np.array([x[4] for x in r["view"]]) / np.array([x[4] for x in r["plain"]])
        out["cases"][name] = {
            "slowdown_cpu": float(np.median(cpu_ratio) - 1.0),
            "slowdown_cpu_spread": float(cpu_ratio.max() - cpu_ratio.min()),
            "browser_cpu_per_s": float(np.median([x[5] / x[0] for x in r["view"]])),
            "server_share": float(np.median([x[6] / x[0] for x in r["view"]])),
            "steps": r["plain"][0][1],
            "wall": float(np.median(plain)), "wall_view": float(np.median(view)),
            "slowdown": float(np.median(ratio) - 1.0),
            "slowdown_spread": float(ratio.max() - ratio.min()),
            "frames_per_s": float(np.median([x[2] / x[0] for x in r["view"]])),
            "frame_cpu_ms": float(np.median([x[3] for x in r["view"]]) * 1e3),
        }
    return out


def table(results):
    lines = ["| control loop at 1 kHz | steps | wall (s) | with the live view (s) | slowdown, "
             "wall | slowdown, CPU of the process | frames per s | server CPU per frame (ms) "
             "| the server's threads' CPU per s of the loop | browser CPU per s of the loop (s) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results["cases"].items():
        lines.append(f"| {name} | {r['steps']} | {r['wall']:.3f} | {r['wall_view']:.3f} | "
                     f"{100 * r['slowdown']:.1f} % (+-{50 * r['slowdown_spread']:.1f}) | "
                     f"{100 * r['slowdown_cpu']:.1f} % (+-{50 * r['slowdown_cpu_spread']:.1f}) | "
                     f"{r['frames_per_s']:.0f} | {r['frame_cpu_ms']:.2f} | "
                     f"{100 * r['server_share']:.1f} % | {r['browser_cpu_per_s']:.2f} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--table", help="print the table of a results file")
    a = p.parse_args()
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return
    results = measure(a.rounds)
    print(table(results))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
