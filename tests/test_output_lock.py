"""One writer per result file (flexmbs.io.output_lock): a second run on the same path is
refused before any work, with one line naming the first; the lock goes when its run
ends, however it ends; a lock left by a run that is gone is taken over."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from flexmbs import load_model, simulate
from flexmbs.cli import main
from flexmbs.io.output_lock import OutputLock, OutputLocked, lock_holder, lock_path
from flexmbs.io.results import open_result

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MODELS = ROOT / "data" / "models"
sys.path.insert(0, str(HERE))
from test_results_io import make_writer, rows  # noqa: E402

HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[2])
    from flexmbs.io.output_lock import OutputLock
    OutputLock(sys.argv[1]).acquire()
    print("held", flush=True)
    time.sleep(120)
""")


def hold_in_another_process(path):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(ROOT)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_naming_the_first(tmp_path):
    path = tmp_path / "a.h5"
    w = make_writer(path)
    w.append([0.0], *rows([0.0]))
    with pytest.raises(OutputLocked) as refused:
        make_writer(path)
    text = str(refused.value)
    assert text.startswith(f"{path}: another run is writing it (pid {os.getpid()} on "
                           f"{socket.gethostname()}, since ")
    assert "choose another -o" in text
    w.close("finished")
    r = open_result(path)
    assert r.status == "finished" and r.nsamples == 1  # the first run's file, whole
    assert not os.path.exists(lock_path(path))
    make_writer(path).close("finished")  # free again


def test_a_run_is_refused_before_any_work_while_another_writes(tmp_path, capsys):
    """`flexmbs run` on a file another process writes: exit 2, one line naming that
    process, within a fraction of a second (nothing compiled); the file untouched."""
    out = tmp_path / "busy.h5"
    holder = hold_in_another_process(out)
    try:
        start = time.perf_counter()
        status = main(["run", str(MODELS / "chain_planar_4.toml"), "-o", str(out)])
        took = time.perf_counter() - start
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 2 and len(err) == 1, err
        assert err[0].startswith(f"flexmbs: error: {out}: another run is writing it "
                                 f"(pid {holder.pid} on {socket.gethostname()}")
        assert took < 5.0 and not out.exists()
        holder.send_signal(signal.SIGKILL)  # the holder is gone: its lock is stale
        holder.wait()
        assert lock_holder(out) is None
        model = load_model(MODELS / "chain_planar_4.toml", ["solver.t_end=0.02"])
        said = []
        sim = simulate(model, out, log=said.append)
        assert sim.status == "finished" and open_result(out).finished
        assert said and "taking over the lock" in said[0] and str(holder.pid) in said[0]
        assert not os.path.exists(lock_path(out))
    finally:
        holder.kill()
        holder.wait()


def test_simulate_is_refused_while_another_writes(tmp_path):
    out = tmp_path / "x.h5"
    with OutputLock(out):
        with pytest.raises(OutputLocked, match="another run is writing it"):
            simulate(load_model(MODELS / "chain_planar_4.toml"), out)
    assert not out.exists()


def test_a_stale_lock_of_a_process_that_is_gone_is_taken_over(tmp_path):
    """A lock file that records a process of this host that has ended (its lock let go
    when it did; on a file system without flock the record alone decides)."""
    out = tmp_path / "s.h5"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    record = {"host": socket.gethostname(), "pid": int(gone), "started": "earlier"}
    Path(lock_path(out)).write_text(json.dumps(record))
    partial = tmp_path / f".s.h5.{gone}.partial"
    partial.write_bytes(b"left by the run that is gone")
    lock = OutputLock(out).acquire()
    assert lock.stale == record and not partial.exists()
    assert json.loads(Path(lock_path(out)).read_text())["pid"] == os.getpid()
    lock.release()
    import flexmbs.io.output_lock as output_lock
    Path(lock_path(out)).write_text(json.dumps(record))
    saved = output_lock.fcntl
    output_lock.fcntl = None  # a file system without flock: the record decides
    try:
        lock = OutputLock(out).acquire()
        assert lock.stale == record
        lock.release()
        alive = dict(record, pid=os.getppid())
        Path(lock_path(out)).write_text(json.dumps(alive))
        with pytest.raises(OutputLocked, match=f"pid {os.getppid()} on"):
            OutputLock(out).acquire()
        elsewhere = dict(record, host="another-host")  # cannot be asked: held
        Path(lock_path(out)).write_text(json.dumps(elsewhere))
        with pytest.raises(OutputLocked, match="on another-host"):
            OutputLock(out).acquire()
    finally:
        output_lock.fcntl = saved


def test_the_lock_goes_with_a_failed_or_interrupted_run(tmp_path):
    out = tmp_path / "f.h5"
    with pytest.raises(RuntimeError):
        with make_writer(out) as w:
            w.append([0.0], *rows([0.0]))
            raise RuntimeError("diverged")
    assert not os.path.exists(lock_path(out))
    killed = tmp_path / "k.h5"
    holder = hold_in_another_process(killed)
    holder.send_signal(signal.SIGTERM)
    holder.wait()
    assert lock_holder(killed) is None  # a lock file may stay; nobody holds it
    make_writer(killed).close("finished")
