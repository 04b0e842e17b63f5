"""The HDF5 result file: writer/reader round trip, commits, crash consistency, the
energy balance, the description and the plots (flexmbs.io.results, flexmbs.analysis)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest

import flexmbs
from flexmbs.analysis.energy import energy_balance, format_energy_report
from flexmbs.analysis.info import describe_result
from flexmbs.analysis.plot import UnknownNameError, plot_result
from flexmbs.errors import ResultFileError, ResultWriteError
from flexmbs.io.results import ENERGY_COMPONENTS, ENERGY_NAMES, Result, ResultWriter, open_result
from flexmbs.model.topology import Topology, body_path_matrix, joint_path_matrix

COORDS = ["j1.rz", "j2.rz"]
SENSORS = ["tip", "angle"]
SIZES = [3, 1]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_topology():
    parent = np.array([-1, 0])
    return Topology(body_names=("link1", "link2"), joint_names=("j1", "j2"), parent=parent,
                    marker_names=("j1:p@ground", "j1:c@link1", "j2:p@link1", "j2:c@link2"),
                    body_path=body_path_matrix(parent), joint_path=joint_path_matrix(parent))


def make_writer(path, flush_interval=0.0, coords=COORDS, sensors=SENSORS, sizes=SIZES):
    return ResultWriter(path, model_text="# model\n[bodies]\n", model_json='{"a": 1}',
                        topology=make_topology(), coordinate_names=coords,
                        sensor_names=sensors, sensor_sizes=sizes, solver_name="BDF",
                        settings={"t_end": 1.0, "rtol": 1e-6, "atol": 1e-8},
                        flush_interval=flush_interval)


def rows(t):
    """Synthetic rows: q, u (k, 2), energy (k, 7: ENERGY_COMPONENTS), sensors (k, 4) as
    functions of t."""
    t = np.asarray(t, dtype=float)
    q = np.column_stack([np.sin(t), 2 * t])
    u = np.column_stack([np.cos(t), 2 + 0 * t])
    e = np.column_stack([1 + t, -t, 0.1 * t ** 2, 0.5 + 0 * t, 0.01 * t, 0.02 * t, -0.03 * t])
    s = np.column_stack([t, 2 * t, 3 * t, -t])
    return q, u, e, s


def stored_length(path):
    with h5py.File(path, "r", locking=False) as f:
        return f["time"].shape[0]


def test_round_trip(tmp_path):
    path = tmp_path / "sub" / "dir" / "out.h5"  # parent directories are created
    t = np.linspace(0.0, 1.0, 21)
    with make_writer(path) as w:
        for chunk in np.array_split(np.arange(21), 4):
            q, u, e, s = rows(t[chunk])
            w.append(t[chunk], q, u, e, s)
        w.set_solver_statistics({"nsteps": 42, "wall_time": 0.5, "order_counts": [0, 3, 9],
                                 "message": "ok"})
    r = open_result(path)
    q, u, e, s = rows(t)
    np.testing.assert_array_equal(r.time, t)
    np.testing.assert_array_equal(r.q, q)
    np.testing.assert_array_equal(r.u, u)
    assert r.coordinate_names == COORDS
    for j, name in enumerate(ENERGY_COMPONENTS):
        np.testing.assert_array_equal(r.energy[name], e[:, j])
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    np.testing.assert_allclose(r.energy["total"], total)
    assert r.sensors["tip"].shape == (21, 3) and r.sensors["angle"].shape == (21,)
    np.testing.assert_array_equal(r.sensors["tip"], s[:, :3])
    np.testing.assert_array_equal(r.sensors["angle"], s[:, 3])
    assert r.status == "finished" and r.t_reached == 1.0
    assert r.model_text == "# model\n[bodies]\n" and json.loads(r.model_json) == {"a": 1}
    assert list(r.topology["body_names"]) == ["link1", "link2"]
    assert list(r.topology["coordinate_names"]) == COORDS
    np.testing.assert_array_equal(r.topology["joint_path"],
                                  joint_path_matrix(np.array([-1, 0])))
    assert r.solver["method"] == "BDF" and r.solver["rtol"] == 1e-6
    assert r.solver["settings"]["t_end"] == 1.0
    assert r.solver["nsteps"] == 42 and r.solver["message"] == "ok"
    np.testing.assert_array_equal(r.solver["order_counts"], [0, 3, 9])
    assert r.flexmbs_version == flexmbs.__version__ and r.created


def test_layout_attrs_and_dimension_scales(tmp_path):
    path = tmp_path / "out.h5"
    t = np.array([0.0, 0.5])
    with make_writer(path) as w:
        w.append(t, *rows(t))
    with h5py.File(path, "r") as f:
        assert set(f.attrs) >= {"flexmbs_version", "created", "status", "t_reached"}
        series = ["q", "u", *(f"energy/{n}" for n in ENERGY_NAMES),
                  *(f"sensors/{n}" for n in SENSORS)]
        for name in series:
            ds = f[name]
            assert ds.dtype == np.float64 and ds.maxshape[0] is None and ds.chunks
            assert ds.dims[0]["time"] == f["time"], name
        for name in ENERGY_NAMES:
            assert "J" in f[f"energy/{name}"].attrs["description"]
            assert f[f"energy/{name}"].attrs["units"] == "J"
        assert list(f["q"].attrs["names"]) == COORDS
        assert f["sensors/tip"].shape == (2, 3)
        assert f["time"].is_scale


def test_xarray_opens_the_file(tmp_path):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    path = tmp_path / "out.h5"
    t = np.linspace(0, 1, 5)
    with make_writer(path) as w:
        w.append(t, *rows(t))
    with xr.open_dataset(path, engine="h5netcdf") as ds:
        np.testing.assert_array_equal(ds["time"].values, t)
        assert ds["q"].dims == ("time", "coordinate")
        np.testing.assert_array_equal(ds["q"].sel(coordinate="j2.rz").values, 2 * t)
    with xr.open_dataset(path, engine="h5netcdf", group="energy") as ds:
        assert ds["kinetic"].dims == ("time",)
    with xr.open_dataset(path, engine="h5netcdf", group="sensors") as ds:
        assert ds["tip"].dims == ("time", "component3")


def test_every_append_is_committed_with_zero_interval(tmp_path):
    path = tmp_path / "out.h5"
    w = make_writer(path, flush_interval=0.0)
    for k in range(3):
        t = np.array([0.1 * k])
        w.append(t, *rows(t))
        assert stored_length(path) == k + 1
        r = open_result(path)  # readable while the writer holds the file
        assert r.status == "running" and r.t_reached == pytest.approx(0.1 * k)
        assert not r.writer_gone and r.writer_pid == os.getpid()
        assert r.status_text.startswith(f"running (pid {os.getpid()} on ")
    w.close("finished")
    assert open_result(path).status_text == "finished"


def test_nothing_reaches_the_file_before_the_interval(tmp_path):
    path = tmp_path / "out.h5"
    w = make_writer(path, flush_interval=3600.0)
    t = np.linspace(0, 1, 10)
    w.append(t, *rows(t))
    assert stored_length(path) == 0 and w.rows_pending == 10
    assert np.isnan(open_result(path).t_reached)
    w.flush()
    assert stored_length(path) == 10 and w.rows_committed == 10
    assert open_result(path).t_reached == 1.0
    t2 = np.array([1.5])
    w.append(t2, *rows(t2))
    assert stored_length(path) == 10
    w.close("finished")
    assert stored_length(path) == 11 and open_result(path).t_reached == 1.5


def test_append_checks_shapes_and_time(tmp_path):
    w = make_writer(tmp_path / "out.h5")
    t = np.array([0.0, 1.0])
    q, u, e, s = rows(t)
    with pytest.raises(ValueError, match="q must have shape"):
        w.append(t, q[:, :1], u, e, s)
    with pytest.raises(ValueError, match="energy"):
        w.append(t, q, u, {"kinetic": e[:, 0]}, s)
    w.append(t, q, u, dict(zip(ENERGY_COMPONENTS, e.T)), s)
    with pytest.raises(ValueError, match="t must not decrease"):
        w.append(np.array([0.5]), *rows([0.5]))
    with pytest.raises(ValueError, match="status"):
        w.close("done")
    w.close("failed: test")
    w.close("finished")  # a second close does nothing
    assert open_result(tmp_path / "out.h5").status == "failed: test"
    with pytest.raises(ValueError, match="closed"):
        w.append(t, q, u, e, s)


def test_no_coordinates_and_no_sensors(tmp_path):
    path = tmp_path / "out.h5"
    with make_writer(path, coords=[], sensors=[], sizes=[]) as w:
        t = np.array([0.0, 1.0])
        w.append(t, np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((2, 5)), np.zeros((2, 0)))
    r = open_result(path)
    assert r.q.shape == (2, 0) and r.sensors == {} and r.status == "finished"


def test_context_manager_marks_failures(tmp_path):
    with pytest.raises(RuntimeError):
        with make_writer(tmp_path / "a.h5") as w:
            w.append([0.0], *rows([0.0]))
            raise RuntimeError("Newton iteration diverged")
    r = open_result(tmp_path / "a.h5")
    assert r.status.startswith("failed: ") and "Newton iteration diverged" in r.status
    assert r.nsamples == 1  # the pending row was committed
    with pytest.raises(KeyboardInterrupt):
        with make_writer(tmp_path / "b.h5", flush_interval=3600.0) as w:
            w.append([0.0, 0.1], *rows([0.0, 0.1]))
            raise KeyboardInterrupt
    r = open_result(tmp_path / "b.h5")
    assert r.status == "failed: interrupted by the user" and r.t_reached == 0.1


CHILD = textwrap.dedent("""
    import sys, time
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    sys.path.insert(0, sys.argv[3])
    from test_results_io import make_writer, rows
    w = make_writer(sys.argv[1], flush_interval=0.05)
    committed, k = 0, 0
    while True:
        t = np.array([0.01 * k])
        w.append(t, *rows(t))
        k += 1
        if w.rows_committed != committed:
            committed = w.rows_committed
            print(committed, repr(float(0.01 * (committed - 1))), flush=True)
        time.sleep(0.002)
""")


def test_sigkill_leaves_a_consistent_prefix(tmp_path):
    """A writer killed with SIGKILL between commits leaves every committed row."""
    path = tmp_path / "killed.h5"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), REPO, os.path.join(REPO, "tests")],
        stdout=subprocess.PIPE, text=True)
    try:
        reports = []
        deadline = time.monotonic() + 60
        while len(reports) < 3 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            reports.append(line.split())
        # the child just committed and sleeps ~0.05 s before the next commit
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert len(reports) == 3, "the child did not commit"
    committed, t_last = int(reports[-1][0]), float(reports[-1][1])
    r = open_result(path)
    assert r.status == "running"
    assert r.nsamples >= committed  # a later commit may have slipped in before the kill
    assert r.t_reached == r.time[-1]
    if r.nsamples == committed:
        assert r.t_reached == t_last
    t = 0.01 * np.arange(r.nsamples)
    np.testing.assert_array_equal(r.time, t)
    q, u, e, s = rows(t)
    np.testing.assert_array_equal(r.q, q)
    np.testing.assert_array_equal(r.sensors["tip"], s[:, :3])
    np.testing.assert_array_equal(r.energy["dissipated"], e[:, 4])
    with h5py.File(path, "r") as f:  # plain h5py (with file locking) opens it too
        assert f.attrs["status"] == "running"
        lengths = {f[n].shape[0] for n in ["time", "q", "u", "energy/total", "sensors/tip"]}
        assert lengths == {r.nsamples}


def test_no_room_for_the_next_rows_stops_with_the_reason(tmp_path, monkeypatch):
    """Where disk room cannot be held (a file system without fallocate), the free space
    seen decides: without room for the next commit the committed rows stay, the
    pending ones are dropped, and the status says why, also after the run's own
    close. (tests/test_disk_faults.py fills a real disk.)"""
    import flexmbs.io.results as results
    room = {"bytes": 10 ** 12}
    monkeypatch.setattr(results, "reserve", lambda fd, nbytes: None)
    monkeypatch.setattr(results, "room_for", lambda path: room["bytes"])
    path = tmp_path / "full.h5"
    w = make_writer(path)
    t = 0.01 * np.arange(5)
    w.append(t, *rows(t))
    room["bytes"] = 1000
    t2 = 0.05 + 0.01 * np.arange(5)
    with pytest.raises(ResultWriteError, match="no room for the result file"):
        w.append(t2, *rows(t2))
    with pytest.raises(ResultWriteError):
        w.flush()
    w.close("failed: ResultWriteError: whatever the caller says")
    r = open_result(path)
    assert r.status.startswith("failed: no room for the result file: 0.0 MB left")
    assert "the rows up to t = 0.04 s are written" in r.status
    np.testing.assert_array_equal(r.time, t)


def test_less_room_than_the_rows_commits_those_that_fit(tmp_path, monkeypatch):
    """A commit with room for only some of its rows writes those (whole chunks' worth),
    then stops the run; the file holds them and says so."""
    import flexmbs.io.results as results
    path = tmp_path / "some.h5"
    w = make_writer(path, flush_interval=3600.0)
    t = 0.001 * np.arange(50_000)
    w.append(t, *rows(t))
    room = results.STATUS_ROOM + w._bytes_for_rows(20_000)
    fit = w._rows_within(50_000, room - results.STATUS_ROOM)
    assert 20_000 <= fit < 25_000  # up to the end of the chunks that 20 000 rows open
    monkeypatch.setattr(results, "reserve", lambda fd, nbytes: None)
    monkeypatch.setattr(results, "room_for", lambda p: room)
    with pytest.raises(ResultWriteError, match=f"the rows up to t = {t[fit - 1]:g} s are"):
        w.flush()
    w.close("failed: stopped")
    r = open_result(path)
    assert r.nsamples == fit and r.status.startswith("failed: no room for the result file")
    np.testing.assert_array_equal(r.time, t[:fit])
    np.testing.assert_array_equal(r.q, rows(t[:fit])[0])


BUSY_CHILD = textwrap.dedent("""
    import sys
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    sys.path.insert(0, sys.argv[3])
    from test_results_io import make_writer, rows
    w = make_writer(sys.argv[1], flush_interval=0.0)
    print("ready", flush=True)
    k = 0
    while True:  # a commit after every row, without a pause: mostly inside a commit
        t = 0.01 * np.arange(k, k + 7)
        w.append(t, *rows(t))
        k += 7
""")


def test_reading_a_file_while_it_is_written(tmp_path):
    """open_result on a file from the moment it appears, while its writer commits
    without a pause: every read returns a consistent prefix of the rows (the file
    appears laid out; reads caught inside a commit are tried again)."""
    path = tmp_path / "live.h5"
    proc = subprocess.Popen(
        [sys.executable, "-c", BUSY_CHILD, str(path), REPO, os.path.join(REPO, "tests")],
        stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.0005)
        first = open_result(path)
        assert first.status == "running" and first.coordinate_names == COORDS
        assert proc.stdout.readline().strip() == "ready"
        lengths = []
        for _ in range(40):
            r = open_result(path)
            assert r.status == "running"
            t = 0.01 * np.arange(r.nsamples)
            np.testing.assert_array_equal(r.time, t)
            np.testing.assert_array_equal(r.q, rows(t)[0])
            lengths.append(r.nsamples)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()
    assert lengths[-1] > lengths[0]


def synthetic_result(strain_scale, drift, n=201):
    """A Result with energies exchanging between kinetic, gravity and strain and a
    total that drifts linearly by `drift` J over the run."""
    t = np.linspace(0.0, 2.0, n)
    kinetic = 5.0 + 2.0 * np.sin(3 * t) ** 2
    strain = strain_scale * np.cos(3 * t) ** 2
    gravity = 100.0 - 2.0 * np.sin(3 * t) ** 2 - strain + drift * t / t[-1]
    spring = np.zeros(n)
    dissipated = -0.3 * t  # the system lost 0.3 J/s to dampers ...
    kinetic = kinetic - 0.3 * t  # ... and its kinetic energy shows it
    energy = {"kinetic": kinetic, "gravity": gravity, "strain": strain, "spring": spring,
              "dissipated": dissipated}
    return Result(path="synthetic", time=t, q=np.zeros((n, 0)), u=np.zeros((n, 0)),
                  coordinate_names=[], energy=energy, sensors={}, status="finished",
                  t_reached=2.0)


def test_energy_balance_criterion_is_the_drift_against_energy_held_and_work():
    b = energy_balance(synthetic_result(strain_scale=0.5, drift=1e-4))
    assert b["drift_max"] == pytest.approx(1e-4, rel=1e-9)
    assert b["t_drift_max"] == 2.0
    assert b["strain_max"] == pytest.approx(0.5, rel=1e-6)
    assert b["ratio"] == pytest.approx(2e-4, rel=1e-6)  # Huang's, reported
    # the largest component is kinetic (max 7 J), not gravity's arbitrary 100 J
    assert b["largest_component_name"] == "kinetic"
    assert b["relative_drift"] == pytest.approx(1e-4 / b["largest_component"])
    assert b["work_done"] == pytest.approx(0.6)
    assert b["criterion"] == "balance"
    assert b["criterion_value"] == pytest.approx(1e-4 / (b["largest_component"] + 0.6))
    assert b["passed"] and b["next_step"] is None
    assert not energy_balance(synthetic_result(0.5, 0.1))["passed"]
    assert not energy_balance(synthetic_result(0.5, 1e-4), ratio_limit=1e-5)["passed"]
    json.dumps(b, allow_nan=False)  # JSON-able
    text = format_energy_report(b)
    assert "Huang's ratio" in text and "largest energy held + work done" in text
    assert "PASS" in text


def test_a_stiff_body_whose_strain_energy_is_tiny_passes_on_what_the_system_holds():
    """Huang's ratio divides by max U: with U a millionth of the energy held, a drift
    of 1e-6 of it is a ratio near 1, which says nothing of the integration."""
    b = energy_balance(synthetic_result(strain_scale=1e-5, drift=7e-6))
    assert b["ratio"] > 0.5 and b["criterion_value"] < 1e-6 and b["passed"]


def test_energy_balance_rigid_model():
    b = energy_balance(synthetic_result(strain_scale=0.0, drift=1e-3))
    assert b["ratio"] is None and b["strain_max"] == 0.0
    assert b["criterion"] == "balance"
    assert b["largest_component"] == pytest.approx(
        max(np.max(np.abs(synthetic_result(0.0, 1e-3).energy["kinetic"])), 2.0 + 1e-3))
    assert b["criterion_value"] == pytest.approx(
        1e-3 / (b["largest_component"] + b["work_done"]))
    text = format_energy_report(b)
    assert "rigid" in text


def test_energy_balance_not_finite_fails():
    r = synthetic_result(0.5, 0.0)
    r.energy["kinetic"][-1] = np.nan
    b = energy_balance(r)
    assert not b["passed"] and not b["finite"] and b["drift_max"] is None
    json.dumps(b, allow_nan=False)


def test_energy_balance_from_file(tmp_path):
    path = tmp_path / "out.h5"
    t = np.linspace(0, 1, 11)
    with make_writer(path) as w:
        w.append(t, *rows(t))
    b = energy_balance(path)
    # rows(): E = 1 + t - t + 0.1 t^2 + 0.5 - 0.01 t
    e = 1.5 + 0.1 * t ** 2 - 0.01 * t
    assert b["drift_max"] == pytest.approx(np.max(np.abs(e - e[0])))
    assert b["criterion"] == "balance" and b["ratio"] is not None


def test_result_file_errors(tmp_path):
    with pytest.raises(ResultFileError, match="no such result file"):
        open_result(tmp_path / "missing.h5")
    text = tmp_path / "text.h5"
    text.write_text("not hdf5")
    with pytest.raises(ResultFileError, match="not an HDF5 file"):
        open_result(text)
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(3)
    with pytest.raises(ResultFileError, match="not a flexmbs result file"):
        open_result(other)
    with pytest.raises(ResultFileError, match="directory"):
        open_result(tmp_path)
    empty = tmp_path / "empty.h5"
    make_writer(empty).close("failed: nothing")
    assert open_result(empty).nsamples == 0
    with pytest.raises(ResultFileError, match="no samples"):
        energy_balance(empty)


def test_describe_result(tmp_path):
    path = tmp_path / "out.h5"
    t = np.linspace(0, 1, 11)
    with make_writer(path) as w:
        w.append(t, *rows(t))
        w.set_solver_statistics({"nsteps": 17})
    text = describe_result(path)
    for word in ("finished", "11 samples", "j1.rz", "tip (3)", "angle (1)", "BDF",
                 "nsteps = 17", "balance criterion"):
        assert word in text, word
    with pytest.raises(ResultFileError):
        describe_result(tmp_path / "missing.h5")


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "out.h5"
    t = np.linspace(0, 1, 11)
    with make_writer(path) as w:
        w.append(t, *rows(t))
    out = plot_result(path, ["j1.rz", "tip", "angle", "energy", "energy.kinetic"],
                      tmp_path / "plots" / "a.png")
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    default = plot_result(path)
    assert default == str(tmp_path / "out.png") and os.path.getsize(default) > 0
    with pytest.raises(UnknownNameError, match="'nope'.*available: j1.rz, j2.rz, tip"):
        plot_result(path, ["nope"], tmp_path / "b.png")
    with pytest.raises(ValueError):
        plot_result(path, ["energy.nope"], tmp_path / "b.png")
    assert not (tmp_path / "b.png").exists()


def test_holding_room_by_writing_fills_past_the_end_or_gives_it_back(tmp_path, monkeypatch):
    """hold_by_writing writes zeros from `start` over what lies past the file's end, and
    on a full disk cuts the file back to its size and says so."""
    import errno

    from flexmbs.io import disk_room

    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 100)
    fd = os.open(path, os.O_RDWR)
    try:
        assert disk_room.hold_by_writing(fd, 60, 3 * disk_room.ZERO_BLOCK + 5)
        data = path.read_bytes()
        assert len(data) == 60 + 3 * disk_room.ZERO_BLOCK + 5
        assert data[:100] == b"x" * 100 and data[100:] == bytes(len(data) - 100)

        def full(fd, data, offset):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(disk_room.os, "pwrite", full)
        assert disk_room.hold_by_writing(fd, len(data), 10) is False
        assert os.fstat(fd).st_size == len(data)
    finally:
        os.close(fd)


def test_where_fallocate_is_missing_a_commit_writes_its_room_first(tmp_path, monkeypatch):
    """Without fallocate each commit's room is written past the end of the HDF5 file
    before the commit (so no other process can take it), and the file, ending in
    zeros HDF5 has not used, reads back every row."""
    import flexmbs.io.results as results

    monkeypatch.setattr(results, "reserve", lambda fd, nbytes: None)
    held = []
    real = results.hold_by_writing

    def spy(fd, start, nbytes):
        held.append((start, nbytes))
        return real(fd, start, nbytes)

    monkeypatch.setattr(results, "hold_by_writing", spy)
    path = tmp_path / "zeros.h5"
    w = make_writer(path)
    t = 0.01 * np.arange(400)
    w.append(t, *rows(t))
    w.flush()
    assert held and os.path.getsize(path) >= held[-1][0] + held[-1][1] - results.STATUS_ROOM
    w.close("finished")
    r = open_result(path)
    assert r.status == "finished" and not r.damage
    np.testing.assert_array_equal(r.time, t)
