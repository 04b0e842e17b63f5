r"""Reading a large result file: the peak memory of what a command reads, against the
file's size, from a ~400 MB file (flexmbs.io.result_reader reads each series when it is
first asked for).

    .venv/bin/python benchmarks/bench_reading.py --json benchmarks/results/reading.json
    .venv/bin/python benchmarks/bench_reading.py --table benchmarks/results/reading.json

The file: --rows rows (default 600 000) of a model of 30 coordinates and sensors of 11
columns, written by ResultWriter (some 0.7 kB a row). Each way of reading runs in a
fresh process; its memory is the peak resident set while it reads (VmHWM, reset just
before by /proc/self/clear_refs) less the resident set then (Python, numpy, h5py and
flexmbs imported), the median of --repeats processes. Linux only. "every series" reads
time, q, u, every energy and sensor: the file's whole content, once.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import begin, finish, log

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

NQ, SENSORS = 30, {"tip": 3, "elbow": 3, "wrist": 3, "angle": 1, "torque": 1}
WAYS = {
    "open_result: what describes the run": "r = open_result(p)",
    "the energy balance (`flexmbs energy`)": "energy_balance(open_result(p))",
    "`flexmbs info`": "describe_result(p)",
    "one coordinate: `r.column(\"c7\")`": "open_result(p).column('c7')",
    "a tenth of the run: `open_result(p, window=...)`, every series":
        "r = open_result(p, window=(t0, t0 + (t1 - t0) / 10)); touch(r)",
    "q whole: `r.q`": "open_result(p).q",
    "every series": "touch(open_result(p))",
}
CHILD = """
import sys, json
import numpy as np, h5py
from flexmbs.io.results import open_result
from flexmbs.analysis.energy import energy_balance
from flexmbs.analysis.info import describe_result

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

def touch(r):
    return [r.time, r.q, r.u, *[r.energy[k] for k in r.energy],
            *[r.sensors[k] for k in r.sensors]]

p = sys.argv[1]
with h5py.File(p, "r") as f:
    t0, t1 = float(f["time"][0]), float(f["time"][-1])
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident set starts again from the present one
before = status("VmRSS")
exec(sys.argv[2])
peak = status("VmHWM")
print(json.dumps({"before": before, "peak": peak}))
"""


def write_file(path, nrows):
    from flexmbs.io.results import ResultWriter
    from flexmbs.model.topology import Topology, body_path_matrix, joint_path_matrix
    parent = np.array([-1])
    topology = Topology(body_names=("b",), joint_names=("j",), parent=parent,
                        marker_names=("j:p@ground", "j:c@b"),
                        body_path=body_path_matrix(parent), joint_path=joint_path_matrix(parent))
    w = ResultWriter(path, model_text="", model_json="{}", topology=topology,
                     coordinate_names=[f"c{k}" for k in range(NQ)],
                     sensor_names=list(SENSORS), sensor_sizes=list(SENSORS.values()),
                     solver_name="BDF", settings={}, state_rest_names=["W_nc"])
    batch, k0 = 20_000, 0
    while k0 < nrows:
        k = min(batch, nrows - k0)
        t = 1e-3 * np.arange(k0, k0 + k)
        q = np.sin(t)[:, None] + np.arange(NQ)
        w.append(t, q, 2 * q, np.column_stack([t] * 7),
                 np.cos(t)[:, None] + np.arange(sum(SENSORS.values())), t[:, None])
        k0 += k
    w.close("finished")


def measure(path, code):
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), code], capture_output=True,
                       text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    got = json.loads(r.stdout.strip().splitlines()[-1])
    return got["peak"] - got["before"]


def table(results):
    size = results["file_bytes"]
    rows = [f"| reading a {size / 1e6:.0f} MB result file ({results['rows']} rows) | "
            "memory MB (peak, above the process before) | of the file's size |",
            "|---|---|---|"]
    for way in results["ways"]:
        rows.append(f"| {way['way']} | {way['bytes'] / 1e6:.1f} | {way['bytes'] / size:.3f} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=600_000)
    parser.add_argument("--repeats", type=int, default=3)
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    ways = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "large.h5"
        t0 = time.perf_counter()
        write_file(path, args.rows)
        size = os.path.getsize(path)
        log(f"wrote {size / 1e6:.0f} MB in {time.perf_counter() - t0:.1f} s")
        for way, code in WAYS.items():
            taken = [measure(path, code) for _ in range(args.repeats)]
            ways.append({"way": way, "bytes": statistics.median(taken), "all": taken})
            log(f"  {way}: {ways[-1]['bytes'] / 1e6:.1f} MB")
    results = {"machine": info, "rows": args.rows, "file_bytes": size, "ways": ways}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
