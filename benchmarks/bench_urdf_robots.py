r"""Robots described by others, imported as they are: every URDF of the
example-robot-data package (the test extra), and six arms with one link made a beam.

    .venv/bin/python benchmarks/bench_urdf_robots.py walk      # all URDFs of the package
    .venv/bin/python benchmarks/bench_urdf_robots.py flexible  # the arms, rigid and flexible
    .venv/bin/python benchmarks/bench_urdf_robots.py table     # the tables of docs/guides/urdf.md

walk: for each URDF, `flexmbs.formats.urdf.import_urdf` at the defaults (timed), a run of
0.5 s under gravity at the imported solver settings (timed, integration and writing
the result file) and `flexmbs energy`'s check; or the one line of its refusal. Results
in benchmarks/results/urdf_robots.json. `walk FILE ...` walks the named URDFs (paths
under the package's robots folder) and replaces their rows in the results.

flexible: for each arm of FLEXIBLE, the whole `flexmbs run` process of 1 s (a separate
process, kernels warm, timed from outside) of the rigid import and of the import with
one link made a beam at the imported defaults, their ratio, the steps, and the energy
check of the flexible run. Results in benchmarks/results/urdf_flexible.json.

table: the tables of both, written into docs/guides/urdf.md between its markers.
"""

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DOCS = HERE.parent / "docs" / "guides" / "urdf.md"
ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
FLEXIBLE = [  # (name, URDF under ROBOTS, the link made a beam)
    ("SO-100", "so_arm_description/urdf/so100.urdf", "upper_arm"),
    ("UR5", "ur_description/urdf/ur5_robot.urdf", "forearm_link"),
    ("Panda", "panda_description/urdf/panda.urdf", "panda_link2"),
    ("xArm7", "xarm_description/urdf/xarm7.urdf", "link2"),
    ("Z1", "z1_description/urdf/z1.urdf", "link02"),
    ("Talos arm", "talos_data/robots/talos_left_arm.urdf", "arm_left_4_link"),
]
MARKS = {
    "walk": ("<!-- urdf-robots table -->", "<!-- end urdf-robots table -->"),
    "flexible": ("<!-- urdf-flexible table -->", "<!-- end urdf-flexible table -->"),
}


def walk_one(path):
    """{robot, bodies, dof, import_s, run_s, verdict, why} of one URDF."""
    from flexmbs.analysis.energy import energy_balance
    from flexmbs.errors import FlexmbsError
    from flexmbs.formats.urdf import import_urdf
    from flexmbs.io.results import open_result
    from flexmbs.simulation import simulate

    row = {"robot": str(path.relative_to(ROBOTS))}
    t0 = time.perf_counter()
    try:
        done = import_urdf(path)
    except FlexmbsError as exc:
        row.update(verdict="refused", why=str(exc).split(": ", 1)[-1])
        return row
    row["import_s"] = time.perf_counter() - t0
    row["bodies"] = len(done.model.bodies)
    row["notes"] = done.notes
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.h5")
        t1 = time.perf_counter()
        simulate(done.model, out, t_end=0.5)
        row["run_s"] = time.perf_counter() - t1
        # the coordinates less one per coupler (a mimic joint follows its leader)
        row["dof"] = len(open_result(out).coordinate_names) - len(done.model.couplers)
        balance = energy_balance(out)
    row["verdict"] = "passes" if balance["passed"] else "fails"
    row["why"] = "; ".join(balance["failed_because"])
    row["energy_drift_J"] = balance["drift_max"]
    return row


def walk(args):
    from flexmbs.formats.urdf import import_urdf

    import_urdf(ROBOTS / "ur_description/urdf/ur5_robot.urdf")  # the kernels loaded once
    paths = [ROBOTS / f for f in args.files] or sorted(ROBOTS.rglob("*.urdf"))
    rows = []
    for path in paths:
        row = walk_one(path)
        print(json.dumps({k: v for k, v in row.items() if k != "notes"}), flush=True)
        rows.append(row)
    doc = {"package": "example-robot-data", "t_end": 0.5, "rows": rows,
           "load": os.getloadavg()[0]}
    if args.files:  # replace those rows of the whole walk
        doc = json.loads((RESULTS / "urdf_robots.json").read_text())
        new = {r["robot"]: r for r in rows}
        doc["rows"] = [new.get(r["robot"], r) for r in doc["rows"]]
    (RESULTS / "urdf_robots.json").write_text(json.dumps(doc, indent=1) + "\n")


def _timed(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t0, proc


def flexible(args):
    flexmbs = [sys.executable, "-m", "flexmbs"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, rel, link in FLEXIBLE:
            urdf = ROBOTS / rel
            if not urdf.is_file():
                rows.append({"robot": name, "verdict": "not in the package"})
                continue
            row = {"robot": name, "link": link}
            for kind, extra in (("rigid", []), ("flexible", ["--flexible", link])):
                model = os.path.join(tmp, f"{kind}.toml")
                result = os.path.join(tmp, f"{kind}.h5")
                proc = subprocess.run(flexmbs + ["import-urdf", str(urdf), "-o", model, *extra],
                                      capture_output=True, text=True)
                if proc.returncode:
                    row[kind] = {"error": proc.stderr.strip()}
                    break
                subprocess.run(flexmbs + ["run", model, "-o", result, "-q"])  # warm
                wall, proc = _timed(flexmbs + ["run", model, "-o", result, "-q"])
                energy = subprocess.run(flexmbs + ["energy", result, "--json"],
                                        capture_output=True, text=True)
                balance = json.loads(energy.stdout) if energy.stdout else {}
                from flexmbs.io.results import open_result

                solver = open_result(result).solver or {}
                row[kind] = {"process_s": wall, "status": proc.returncode,
                             "steps": solver.get("nsteps"), "method": solver.get("method"),
                             "energy_passed": balance.get("passed"),
                             "failed_because": balance.get("failed_because")}
                if kind == "flexible":
                    verify = subprocess.run(flexmbs + ["verify", model], capture_output=True,
                                            text=True)
                    row[kind]["verify_passed"] = verify.returncode == 0
            if "process_s" in row.get("flexible", {}) and "process_s" in row.get("rigid", {}):
                row["ratio"] = row["flexible"]["process_s"] / row["rigid"]["process_s"]
            print(json.dumps(row), flush=True)
            rows.append(row)
    doc = {"t_end": 1.0, "rows": rows, "load": os.getloadavg()[0]}
    (RESULTS / "urdf_flexible.json").write_text(json.dumps(doc, indent=1) + "\n")


def _walk_table(doc):
    lines = ["| robot | bodies | dof | import s | run s | verdict |", "|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        if r["verdict"] == "refused":
            lines.append(f"| {r['robot']} | | | | | refused: {r['why']} |")
            continue
        verdict = r["verdict"] + (f" ({r['why']})" if r.get("why") else "")
        lines.append(f"| {r['robot']} | {r['bodies']} | {r['dof']} | {r['import_s']:.3f} | "
                     f"{r['run_s']:.2f} | {verdict} |")
    return lines


def _flexible_table(doc):
    lines = ["| robot | beam | rigid process s | flexible process s | ratio | flexible steps | "
             "energy | verify |", "|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        f, g = r.get("flexible", {}), r.get("rigid", {})
        if "process_s" not in f:
            lines.append(f"| {r['robot']} | {r.get('link', '')} | | | | | "
                         f"{f.get('error', r.get('verdict', ''))} | |")
            continue
        energy = "passes" if f["energy_passed"] else "fails"
        verify = "passes" if f.get("verify_passed") else "fails"
        lines.append(f"| {r['robot']} | {r['link']} | {g['process_s']:.2f} | "
                     f"{f['process_s']:.2f} | {r['ratio']:.2f} | {f.get('steps')} | {energy} | "
                     f"{verify} |")
    return lines


def table(args):
    text = DOCS.read_text()
    for key, make in (("walk", _walk_table), ("flexible", _flexible_table)):
        source = RESULTS / ("urdf_robots.json" if key == "walk" else "urdf_flexible.json")
        if not source.is_file():
            continue
        start, end = MARKS[key]
        if start not in text:
            continue
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        body = "\n".join(make(json.loads(source.read_text())))
        text = f"{head}{start}\n{body}\n{end}{tail}"
    DOCS.write_text(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["walk", "flexible", "table"])
    parser.add_argument("files", nargs="*", help="walk: these URDFs only (under the robots folder)")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    {"walk": walk, "flexible": flexible, "table": table}[args.what](args)


if __name__ == "__main__":
    main()
