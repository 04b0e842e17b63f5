r"""Writing a result file: what holding a commit's disk room first costs, and what the
chunk size costs, against the writer without them, in the same process.

    .venv/bin/python benchmarks/bench_writing.py --json benchmarks/results/writing.json
    .venv/bin/python benchmarks/bench_writing.py --table benchmarks/results/writing.json

The writer (flexmbs.io.results.ResultWriter) commits --commits times a model of 30
coordinates and sensors of 11 columns (some 0.7 kB a row), --rows-per-commit rows each
time, in three ways taken in turn, --repeats times, the median kept: as shipped (the
room of each commit held with fallocate before it writes, chunks of 16 KiB); the same
without holding room (the disk's free space alone would decide); and with the chunks
of 64 KiB a series had before (which make the first row of a run need more room). The
room a run needs before its first row is the writer's own bound for one row
(`_bytes_for_rows(1)` and the room kept for the status), and the file's growth at its
first commit is measured. On the disk of the benchmark's temporary folder.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from peers import begin, finish, log

import flexmbs.io.results as results_module

NQ, SENSORS = 30, {"tip": 3, "elbow": 3, "wrist": 3, "angle": 1, "torque": 1}
SHIPPED_CHUNK = results_module.CHUNK_BYTES
WAYS = {
    "room held, 16 KiB chunks (as shipped)": {"hold": True, "chunk": SHIPPED_CHUNK},
    "room not held, 16 KiB chunks": {"hold": False, "chunk": SHIPPED_CHUNK},
    "room held, 64 KiB chunks": {"hold": True, "chunk": 64 * 1024},
}


def _writer(path):
    from flexmbs.model.topology import Topology, body_path_matrix, joint_path_matrix
    parent = np.array([-1])
    topology = Topology(body_names=("b",), joint_names=("j",), parent=parent,
                        marker_names=("j:p@ground", "j:c@b"),
                        body_path=body_path_matrix(parent), joint_path=joint_path_matrix(parent))
    return results_module.ResultWriter(
        path, model_text="", model_json="{}", topology=topology,
        coordinate_names=[f"c{k}" for k in range(NQ)], sensor_names=list(SENSORS),
        sensor_sizes=list(SENSORS.values()), solver_name="BDF", settings={},
        state_rest_names=["W_nc"], flush_interval=1e9)


def _rows(k0, k):
    t = 1e-3 * np.arange(k0, k0 + k)
    q = np.sin(t)[:, None] + np.arange(NQ)
    return (t, q, 2 * q, np.column_stack([t] * 7),
            np.cos(t)[:, None] + np.arange(sum(SENSORS.values())), t[:, None])


def write(path, way, commits, per_commit):
    """Seconds a commit takes (the mean over `commits`), the writer's bound of the room
    before the first row (bytes) and the file's growth at the first commit (bytes)."""
    held = results_module.reserve
    results_module.CHUNK_BYTES = way["chunk"]
    if not way["hold"]:
        results_module.reserve = lambda fd, nbytes: True
    try:
        w = _writer(path)
        first_room = w._bytes_for_rows(1) + results_module.STATUS_ROOM
        laid_out = path.stat().st_size
        spent = 0.0
        first_growth = 0
        for c in range(commits):
            w.append(*_rows(c * per_commit, per_commit))
            t0 = time.perf_counter()
            w.flush()
            spent += time.perf_counter() - t0
            if c == 0:
                first_growth = path.stat().st_size - laid_out
        w.close("finished")
    finally:
        results_module.reserve = held
        results_module.CHUNK_BYTES = SHIPPED_CHUNK
    return spent / commits, first_room, first_growth


def table(results):
    names = list(WAYS)
    rows = ["| rows a commit | " + " | ".join(f"ms a commit: {n}" for n in names)
            + " | held / not held |",
            "|---" * (len(names) + 2) + "|"]
    for size in results["sizes"]:
        ms = [size["ways"][n]["seconds"] * 1e3 for n in names]
        rows.append(f"| {size['rows_per_commit']} | "
                    + " | ".join(f"{m:.2f}" for m in ms) + f" | {ms[0] / ms[1]:.2f} |")
    rows += ["", "| chunks | room needed before the first row (MB) | "
             "file's growth at the first commit (MB) |", "|---|---|---|"]
    for n in (names[0], names[2]):
        first = results["sizes"][0]["ways"][n]
        rows.append(f"| {n.split(', ')[1]} | {first['first_room'] / 1e6:.2f} | "
                    f"{first['first_growth'] / 1e6:.2f} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows-per-commit", type=int, nargs="+", default=[10, 1000, 10000])
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    started = begin(parser, table)
    if started is None:
        return 0
    args, info, start = started
    sizes = []
    with tempfile.TemporaryDirectory() as tmp:
        for per_commit in args.rows_per_commit:
            taken = {n: [] for n in WAYS}
            room = {}
            for r in range(args.repeats):
                for n, way in WAYS.items():  # interleaved
                    path = Path(tmp) / f"w{r}.h5"
                    seconds, first_room, first_growth = write(path, way, args.commits,
                                                              per_commit)
                    path.unlink()
                    taken[n].append(seconds)
                    room[n] = (first_room, first_growth)
            ways = {n: {"seconds": statistics.median(taken[n]), "all": taken[n],
                        "first_room": room[n][0], "first_growth": room[n][1]} for n in WAYS}
            sizes.append({"rows_per_commit": per_commit, "ways": ways})
            log(f"{per_commit} rows a commit: " + ", ".join(
                f"{n} {w['seconds'] * 1e3:.2f} ms" for n, w in ways.items()))
    results = {"machine": info, "commits": args.commits, "repeats": args.repeats,
               "tmp": tempfile.gettempdir(), "sizes": sizes}
    finish(args, results, start, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
