"""Disk faults for tests/test_disk_faults.py, run as a script on a small tmpfs that it
mounts itself (as root, or as the root of a user namespace: `unshare -rm`), so that
the disk fills for real: another process (dd, or a filler that fills and frees) takes
the room while a result file is written. Prints one JSON line per trial.

    python disk_faults.py SCENARIO FOLDER [TRIALS]

Scenarios: filled (dd fills the disk while a writer commits, TRIALS times), run (the
same under `flexmbs run`), churned (a filler fills, frees part and fills again while a
writer commits), tight (a disk with less room than one commit from the start),
unheld (churned, where room cannot be held: the free space seen decides), efbig (no
mount: a write that fails for a reason the writer did not see coming)."""

import json
import os
import random
import resource
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import flexmbs.io.results as results  # noqa: E402
from flexmbs.errors import ResultWriteError  # noqa: E402
from flexmbs.io.results import ResultWriter, open_result  # noqa: E402
from flexmbs.model.topology import Topology, body_path_matrix, joint_path_matrix  # noqa: E402

NQ, NS = 12, 20  # columns of q and of the sensors: some 300 bytes a row
STEP = 1e-3


def writer(path):
    parent = np.array([-1])
    topology = Topology(body_names=("b",), joint_names=("j",), parent=parent,
                        marker_names=("j:p@ground", "j:c@b"),
                        body_path=body_path_matrix(parent), joint_path=joint_path_matrix(parent))
    return ResultWriter(path, model_text="", model_json="{}", topology=topology,
                        coordinate_names=[f"c{k}" for k in range(NQ)], sensor_names=["s"],
                        sensor_sizes=[NS], solver_name="BDF", settings={}, flush_interval=0.02)


def rows(k0, k):
    """Rows k0 .. k0 + k - 1: t = STEP k; every column a function of t."""
    t = STEP * np.arange(k0, k0 + k)
    q = np.sin(t)[:, None] + np.arange(NQ)
    return t, q, 2 * q, np.column_stack([t] * 7), np.cos(t)[:, None] + np.arange(NS)


def check(path):
    """What the file holds: its rows, whether every value is the one written, status."""
    r = open_result(path)
    k = r.nsamples
    t, q, u, e, s = rows(0, k)
    same = (np.array_equal(r.time, t) and np.array_equal(r.q, q) and np.array_equal(r.u, u)
            and np.array_equal(r.sensors["s"], s) and np.array_equal(r.energy["kinetic"], t))
    return {"rows": k, "values_as_written": bool(same), "status": r.status,
            "damage": r.damage}


def write_until_stopped(path, seconds, batch=500, pace=0.0, then=None, then_at=0):
    """Lay the file out, append rows until the writer stops the run (or `seconds`
    pass), calling `then` once `then_at` rows are appended; what it said."""
    w = writer(path)
    k0, end, said = 0, time.monotonic() + seconds, "finished"
    try:
        while time.monotonic() < end:
            if then is not None and k0 >= then_at:
                then()
                then = None
            w.append(*rows(k0, batch))
            k0 += batch
            time.sleep(pace)
        w.close("finished")
    except ResultWriteError as exc:
        said = str(exc)
        w.close("failed: ResultWriteError")
    return said


def mount(folder, kib):
    os.makedirs(folder, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", folder], check=True)


def umount(folder):
    subprocess.run(["umount", "-l", folder], check=False)


def fill(folder, name="fill"):
    """dd: fills the disk until there is no room left (another process)."""
    subprocess.run(["dd", "if=/dev/zero", f"of={os.path.join(folder, name)}", "bs=64k"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def free(folder):
    for name in os.listdir(folder):
        if name.startswith("fill"):
            os.remove(os.path.join(folder, name))


def filled(folder, trial):
    """dd fills the disk once the file holds some commits; the writer goes on."""
    mount(folder, 24 * 1024)
    try:
        path = os.path.join(folder, "out.h5")
        fill_at = 4000 + 12000 * trial  # rows: each trial fills at another point of the run
        filler = []

        def start_filler():
            filler.append(subprocess.Popen(
                ["dd", "if=/dev/zero", f"of={folder}/fill", "bs=64k"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        said = write_until_stopped(path, 30.0, batch=200, pace=0.002, then=start_filler,
                                   then_at=fill_at)
        filler[0].wait()
        out = {"trial": trial, "said": said, "full": check(path)}
        free(folder)
        out["freed"] = check(path)
        return out
    finally:
        umount(folder)


CHURN = """
import os, random, sys, time
folder, stop = sys.argv[1], sys.argv[2]
block, files, k = b"\\0" * 65536, [], 0
while not os.path.exists(stop) and os.path.ismount(folder):  # never the disk below
    try:
        while True:
            name = os.path.join(folder, f"fill{k}"); k += 1
            files.append(name)
            with open(name, "wb") as f:
                for _ in range(8):
                    f.write(block)
    except OSError:
        pass
    time.sleep(random.uniform(0, 0.01))
    random.shuffle(files)
    for _ in range(random.randint(4, 24)):
        if files:
            try:
                os.remove(files.pop())
            except FileNotFoundError:
                pass
"""


def churned(folder, trial):
    """A filler fills the disk, frees a random part, fills again, while the writer
    commits."""
    mount(folder, 24 * 1024)
    stop = os.path.join(folder, "stop")
    churn = []
    try:
        path = os.path.join(folder, "out.h5")

        def start():
            churn.append(subprocess.Popen([sys.executable, "-c", CHURN, folder, stop]))
            time.sleep(0.3)

        said = write_until_stopped(path, 4.0, batch=300, then=start)
        stop_churn(churn, stop)
        free(folder)
        out = {"trial": trial, "said": said}
        if os.path.exists(path):
            out["freed"] = check(path)
        return out
    finally:
        stop_churn(churn, stop)
        umount(folder)


def stop_churn(churn, stop):
    """The filler told to stop and gone before its disk is unmounted, whatever ended
    the writer (killed if it does not stop within 10 s)."""
    for proc in churn:
        if proc.poll() is None:
            try:
                open(stop, "w").close()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()


def tight(folder, trial):
    """A disk with about 1.5 MB left when the run starts: less than one commit."""
    mount(folder, 8 * 1024)
    try:
        with open(os.path.join(folder, "fill"), "wb") as f:
            f.write(b"\0" * (8 * 1024 * 1024 - 1_500_000))
        path = os.path.join(folder, "out.h5")
        w = writer(path)
        w.flush_interval = 3600.0
        said = "finished"
        try:
            w.append(*rows(0, 20_000))  # 6 MB of rows, committed at once
            w.flush()
        except ResultWriteError as exc:
            said = str(exc)
        w.close("failed: ResultWriteError")
        return {"trial": trial, "said": said, "full": check(path)}
    finally:
        umount(folder)


def unheld(folder, trial):
    """Churned, on a file system without fallocate: the room is held by writing it."""
    results.reserve = lambda fd, nbytes: None
    return churned(folder, trial)


def efbig(folder, trial):
    """A write past a file-size limit that the writer does not see coming (it is told
    there is none): HDF5's write fails inside a commit."""
    results.size_limit_room = lambda path: 2**62
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"efbig{trial}.h5")
    w = writer(path)
    w.append(*rows(0, 1000))
    w.flush()
    committed = w.rows_committed
    resource.setrlimit(resource.RLIMIT_FSIZE,
                       (os.path.getsize(path) + 200_000 * (1 + trial), resource.RLIM_INFINITY))
    said = "finished"
    try:
        k0 = 1000
        while k0 < 200_000:
            w.append(*rows(k0, 5000))
            k0 += 5000
    except ResultWriteError as exc:
        said = str(exc)
    w.close("failed: ResultWriteError")
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return {"trial": trial, "said": said, "first_commit": committed, "full": check(path)}


def run(folder, trial):
    """`flexmbs run` of a model that writes fast; dd fills the disk once the file holds
    some commits."""
    mount(folder, 16 * 1024)
    try:
        path = os.path.join(folder, "run.h5")
        proc = subprocess.Popen(
            [sys.executable, "-m", "flexmbs", "run",
             os.path.join(ROOT, "data", "models", "chain_planar_4.toml"), "-o", path, "-q",
             "--t-end", "50", "--output-step", "2e-5"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 3000  # the kernels may be compiled first (cold cache)
        while time.monotonic() < deadline and proc.poll() is None:
            if os.path.exists(path) and os.path.getsize(path) > 2_000_000:
                break
            time.sleep(0.05)
        fill(folder)
        _, err = proc.communicate(timeout=600)
        r = open_result(path)
        t = r.time
        out = {"trial": trial, "exit": proc.returncode, "stderr": err, "rows": len(t),
               "steps_even": bool(len(t) > 1 and np.allclose(np.diff(t), 2e-5)),
               "status": r.status}
        free(folder)
        out["freed_rows"] = open_result(path).nsamples
        return out
    finally:
        umount(folder)


if __name__ == "__main__":
    scenario, folder = sys.argv[1], sys.argv[2]
    trials = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    random.seed(7)
    for trial in range(trials):
        print(json.dumps(globals()[scenario](folder, trial)), flush=True)
