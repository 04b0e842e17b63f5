"""The command line end to end: run, info, energy, plot, bad input, interrupted runs."""

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from cli_in_process import flexmbs_here

from flexmbs import open_result

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "data" / "models"


def flexmbs(*args, timeout=600):
    """Run `python -m flexmbs ARGS` and return the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "flexmbs", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def test_chain_spatial_4_conserves_energy(tmp_path):
    """docs/explanation/benchmark-models.md CHAIN-4 spatial, 10 s at rtol 1e-10: max |E - E0|
    <= 1e-7 N m g L."""
    out = tmp_path / "chain.h5"
    r = flexmbs("run", MODELS / "chain_spatial_4.toml", "-o", out, "--t-end", 10,
                "--rtol", 1e-10, "--atol", 1e-12)
    assert r.returncode == 0, r.stderr
    assert "finished" in r.stdout
    res = open_result(out)
    assert res.status == "finished"
    assert res.time[-1] == pytest.approx(10.0, abs=1e-12)
    e = res.energy["total"]
    n, m, g, length = 4, 1.0, 9.81, 0.5
    assert np.abs(e - e[0]).max() <= 1e-7 * n * m * g * length
    r = flexmbs("energy", out, "--json", "--max-ratio", 1e-6)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["drift_max"] == pytest.approx(np.abs(e - e[0]).max())
    assert report["passed"] is True
    r = flexmbs("energy", out, "--max-ratio", 1e-14)
    assert r.returncode == 1
    assert "FAIL" in r.stdout.upper()


def test_run_with_overrides_info_and_plot(tmp_path, capsys):
    out = tmp_path / "planar.h5"
    r = flexmbs("run", MODELS / "chain_planar_4.toml", "-o", out, "--t-end", 0.5,
                "--set", "joints.j1.initial=0.3", "--set", "solver.method=scipy-radau",
                "--output-step", 0.1)
    assert r.returncode == 0, r.stderr
    res = open_result(out)
    assert res.time == pytest.approx(np.linspace(0, 0.5, 6))
    assert res.q[0, 0] == pytest.approx(0.3)
    assert res.solver["method"] == "scipy-radau"
    assert res.model_overrides == ["joints.j1.initial=0.3", "solver.method=scipy-radau"]
    assert "[joints.j1]" in res.model_text
    info = flexmbs_here(capsys, "info", out)
    assert info.returncode == 0
    assert "finished" in info.stdout and "theta1" in info.stdout
    png = tmp_path / "plot.png"
    p = flexmbs_here(capsys, "plot", out, "theta1", "energy", "-o", png)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = flexmbs_here(capsys, "plot", out, "no_such_signal", "-o", png)
    assert bad.returncode == 2 and "no_such_signal" in bad.stderr


@pytest.mark.parametrize("args,fragment", [
    (["--set", "bodies.link1.mass=-1"], 'body "link1": field "mass"'),
    (["--set", "joints.nope.initial=1"], '--set "joints.nope.initial"'),
    (["--solver", "euler"], "euler"),
    (["--t-end", "-1"], "t_end"),
    (["--solver", "galpha", "--rho-inf", "1.5"], 'solver: field "rho_inf"'),
    (["--solver", "galpha", "--fixed-step", "0"], 'solver: field "fixed_step"'),
])
def test_bad_input_exits_2_without_traceback(tmp_path, capsys, args, fragment):
    r = flexmbs_here(capsys, "run", MODELS / "chain_planar_4.toml", "-o", tmp_path / "x.h5", *args)
    assert r.returncode == 2
    assert fragment in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("flexmbs: error:")


def test_galpha_from_the_command_line(tmp_path):
    """--solver galpha with --rho-inf and --fixed-step: the settings reach the result
    file, and `flexmbs energy` names the numerical dissipation."""
    out = tmp_path / "h2.h5"
    r = flexmbs("run", MODELS / "huang_two_link.toml", "-o", out, "--t-end", 0.2,
                "--solver", "galpha", "--rho-inf", 0.5, "--fixed-step", 1e-3)
    assert r.returncode == 0, r.stderr
    res = open_result(out)
    assert res.solver["method"] == "galpha" and res.solver["nsteps"] == 200
    assert res.solver["settings"]["rho_inf"] == 0.5
    assert res.solver["settings"]["fixed_step"] == 1e-3
    e = flexmbs("energy", out, "--json")
    report = json.loads(e.stdout)
    assert report["method"] == "galpha" and report["rho_inf"] == 0.5
    assert report["numerical_dissipation"] is not None
    assert "numerical dissipation" in flexmbs("energy", out).stdout


def test_bad_model_file_and_missing_result(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[bodies.a]\nmass = = 1\n")
    r = flexmbs("run", bad)
    assert r.returncode == 2 and str(bad) in r.stderr and "Traceback" not in r.stderr
    r = flexmbs("info", tmp_path / "missing.h5")
    assert r.returncode == 2 and "missing.h5" in r.stderr and "Traceback" not in r.stderr


def _long_run_with_rows(out, rows_wanted=50):
    """(process, rows): a long run of CHAIN-4 (1000 s at rtol 1e-12, outputs every
    1 ms) started in its own process, once its result file holds more than
    `rows_wanted` rows; the process is still running."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "flexmbs", "run", str(MODELS / "chain_spatial_4.toml"),
         "-o", str(out), "-q", "--t-end", "1000", "--rtol", "1e-12", "--atol", "1e-14",
         "--output-step", "1e-3"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 600
    rows = 0
    while time.time() < deadline and proc.poll() is None and rows <= rows_wanted:
        time.sleep(0.5)
        if out.exists():
            try:
                with h5py.File(out, "r", locking=False) as f:
                    rows = f["time"].shape[0]
            except (OSError, KeyError, ValueError, RuntimeError):
                rows = 0  # caught inside a commit, half-written: look again later
    assert proc.poll() is None and rows > rows_wanted, "the run ended too soon"
    return proc, rows


def test_sigkill_leaves_a_readable_file(tmp_path, capsys):
    """A run killed with SIGKILL leaves a file that opens and holds a consistent prefix
    of the outputs (everything up to the last flush, at most ~1 s of wall time old)."""
    out = tmp_path / "killed.h5"
    proc, rows = _long_run_with_rows(out)
    time.sleep(1.5)  # let it write a few more flushes, then kill mid-run
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    res = open_result(out)
    assert res.status == "running"  # it never got to say otherwise
    assert res.writer_gone and res.writer_pid == proc.pid
    assert res.status_text.startswith("unfinished: the writing process is gone")
    info = flexmbs_here(capsys, "info", out)
    assert info.returncode == 0 and "unfinished: the writing process is gone" in info.stdout
    n = len(res.time)
    assert n > rows
    assert res.q.shape == (n, 4) and res.energy["total"].shape == (n,)
    assert res.t_reached == pytest.approx(res.time[-1])
    assert np.all(np.diff(res.time) > 0)
    assert np.all(np.isfinite(res.q))


def _file_size_limit(limit):
    """preexec_fn: a file-size limit (`ulimit -f`) of `limit` bytes, reported as EFBIG
    rather than by SIGXFSZ."""
    def set_limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


def test_a_full_disk_stops_the_run_with_a_readable_file(tmp_path):
    """No room for the next rows (here a file-size limit of 20 MB): exit status 1, one
    line, the rows written so far readable, the reason in the file."""
    out = tmp_path / "full.h5"
    r = subprocess.run(
        [sys.executable, "-m", "flexmbs", "run", str(MODELS / "chain_spatial_4.toml"),
         "-o", str(out), "-q", "--t-end", "1000", "--output-step", "1e-3"],
        cwd=ROOT, capture_output=True, text=True, preexec_fn=_file_size_limit(20_000_000))
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"flexmbs: error: {out}: no room for the result file")
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    res = open_result(out)
    assert res.status.startswith("failed: no room for the result file")
    assert res.nsamples > 1000 and np.all(np.diff(res.time) > 0)
    assert f"the rows up to t = {res.time[-1]:g} s are written" in res.status
    assert os.path.getsize(out) < 20_000_000


def test_no_room_for_the_layout_stops_before_the_run(tmp_path):
    """No room even for the file's layout (a file-size limit of 20 kB): exit status 1
    and one line with the system's reason; no file, and no hidden partial one, left."""
    out = tmp_path / "tiny.h5"
    r = subprocess.run(
        [sys.executable, "-m", "flexmbs", "run", str(MODELS / "chain_spatial_4.toml"),
         "-o", str(out), "-q", "--t-end", "1"],
        cwd=ROOT, capture_output=True, text=True, preexec_fn=_file_size_limit(20_000))
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"flexmbs: error: {out}: the result file could not be "
                               "laid out (File too large)")
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert os.listdir(tmp_path) == []


BAD_MODELS = {
    "a beam too large for the memory": (
        '[bodies.b]\ntype = "beam"\npoints = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]\n'
        'elements = 1000000\nreference = [0.0, 1.0, 0.0]\n[bodies.b.section]\n'
        'type = "circle"\ndiameter = 0.01\n[bodies.b.material]\n'
        'youngs_modulus = 7e10\nshear_modulus = 2.6e10\ndensity = 2700.0\n',
        'field "elements": 1000000 elements'),
    "unparsable": ("[bodies.a]\nmass = = 1\n", "line 2"),
    "unknown field": ('[bodies.a]\nmass = 1.0\nmas = 2\ninertia = [1, 1, 1]\n'
                      'inertia_about = "com"\n', 'field "mas"'),
    "zero mass": ('[bodies.a]\nmass = 0.0\ninertia = [1, 1, 1]\ninertia_about = "com"\n'
                  '[joints.j]\ntype = "revolute"\nparent = "ground"\nchild = "a"\n',
                  'field "mass"'),
    "loop that cannot close": (
        '[ground.markers.far]\nposition = [5.0, 0.0, 0.0]\n'
        '[bodies.a]\nmass = 1.0\ninertia = [1, 1, 1]\ninertia_about = "com"\n'
        '[bodies.a.markers.tip]\nposition = [1.0, 0.0, 0.0]\n'
        '[joints.j1]\ntype = "revolute"\nparent = "ground"\nchild = "a"\n'
        '[joints.j2]\ntype = "spherical"\nparent = "ground"\nparent_marker = "far"\n'
        'child = "a"\nchild_marker = "tip"\n', "cannot be made to close the loops"),
    "only joint cut": ('[bodies.a]\nmass = 1.0\ninertia = [1, 1, 1]\ninertia_about = "com"\n'
                       '[joints.j1]\ntype = "revolute"\nparent = "ground"\nchild = "a"\n'
                       'cut = true\n', "not connected to the ground"),
    "parallel universal axes": (
        '[bodies.a]\nmass = 1.0\ninertia = [1, 1, 1]\ninertia_about = "com"\n'
        '[joints.j1]\ntype = "universal"\nparent = "ground"\nchild = "a"\n'
        'axes = [[1, 0, 0], [2, 0, 0]]\n', "parallel"),
    "no bodies": ('[model]\nname = "empty"\n', "no bodies"),
}


@pytest.mark.parametrize("case", sorted(BAD_MODELS))
def test_bad_model_files_exit_2_with_the_file_named(tmp_path, case):
    text, fragment = BAD_MODELS[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    r = flexmbs("run", path, "-o", tmp_path / "out.h5")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"flexmbs: error: {path}")
    assert fragment in r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args,fragment", [
    (["--t-end", "inf"], 'solver: field "t_end"'),
    (["--output-step", "1e-11", "--t-end", "10"], 'output: field "step"'),
])
def test_unusable_settings_exit_2(tmp_path, args, fragment):
    r = flexmbs("run", MODELS / "chain_planar_4.toml", "-o", tmp_path / "x.h5", *args)
    assert r.returncode == 2 and fragment in r.stderr and "Traceback" not in r.stderr


def test_result_file_never_overwrites_the_model(tmp_path):
    model = tmp_path / "m.toml"
    model.write_text((MODELS / "chain_planar_4.toml").read_text())
    r = flexmbs("run", model, "-o", model)
    assert r.returncode == 2 and "overwrite" in r.stderr
    assert model.read_text().startswith("#")


@pytest.mark.parametrize("solver, reason", [
    ("dop853", "not positive definite"),       # the Cholesky factorisation of M* fails
    ("scipy-radau", "step size fell below"),   # M* is barely definite: steps collapse
    ("bdf", "step size fell below"),           # M* singular to rounding, |det| 1e-16:
                                               # Newton diverges, steps collapse
])
def test_singular_mass_matrix_fails_with_a_status(tmp_path, solver, reason):
    """A spherical joint started at its singular configuration (the middle of its
    x-y-z rotations at 90 deg) has a singular M*: the run fails, exit 1, with the
    reason in the message and in the file, instead of hanging or raising."""
    model = tmp_path / "sph.toml"
    model.write_text('[solver]\nt_end = 1.0\n'
                     '[bodies.a]\nmass = 1.0\ncom = [0, 0, -0.3]\n'
                     'inertia = [0.02, 0.03, 0.01]\ninertia_about = "com"\n'
                     '[joints.ball]\ntype = "spherical"\nparent = "ground"\nchild = "a"\n'
                     'initial = [0.2, 1.5707963267948966, 0.1]\n')
    out = tmp_path / "sph.h5"
    # a hang guard: this process may be the first to compile its solver's kernels,
    # while both test workers compile theirs on the 2 cores (measured above 600 s)
    r = flexmbs("run", model, "-o", out, "--solver", solver, timeout=1800)
    assert r.returncode == 1, r.stderr
    assert reason in r.stderr
    assert "singular configuration" in r.stderr  # the watch names the joint too
    res = open_result(out)
    assert res.status.startswith("failed: ") and reason in res.status


def test_file_is_committed_between_sparse_outputs(tmp_path):
    """With outputs far apart, the file still gets its first row and the integration's
    progress (t_integrated) at least once per second."""
    out = tmp_path / "sparse.h5"
    proc = subprocess.Popen(
        [sys.executable, "-m", "flexmbs", "run", str(MODELS / "chain_spatial_4.toml"),
         "-o", str(out), "-q", "--t-end", "1000", "--output-step", "500",
         "--rtol", "1e-12", "--atol", "1e-14"], cwd=ROOT)
    try:
        deadline = time.time() + 120
        t_int = 0.0
        while time.time() < deadline and not t_int > 0.0:  # nan before the first commit
            time.sleep(0.5)
            if out.exists():
                try:
                    with h5py.File(out, "r", locking=False) as f:
                        t_int = float(f.attrs.get("t_integrated", 0.0))
                except (OSError, KeyError):  # caught mid-write: h5py raises either
                    pass
        assert proc.poll() is None and t_int > 0.0
    finally:
        proc.kill()
        proc.wait()
    res = open_result(out)
    assert len(res.time) == 1 and res.time[0] == 0.0


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_sigterm_ends_the_run_with_its_name_in_the_file(tmp_path, signame):
    """SIGTERM (batch schedulers, `timeout`) and SIGHUP end a run as Ctrl-C does: the
    rows so far and the state at the signal written, the status naming the signal,
    the exit status 128 + its number, one line on stderr."""
    sig = getattr(signal, signame)
    out = tmp_path / "terminated.h5"
    proc, rows = _long_run_with_rows(out)
    os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err[-3000:]
    assert f"terminated by {signame}" in err and "Traceback" not in err
    res = open_result(out)
    assert res.status == f"failed: terminated by {signame}"
    assert len(res.time) >= rows and np.all(np.isfinite(res.q))


def test_bad_arguments_and_output_paths_get_one_line_and_status_2(tmp_path, capsys):
    """Out-of-range settings, image formats and output paths are refused before any
    work with one line naming them (exit 2, no traceback); a file that is not a
    flexmbs result is never written over, an earlier result is, and that is said;
    an output step longer than the run is warned about."""
    chain = MODELS / "chain_spatial_4.toml"
    out = tmp_path / "chain.h5"
    r = flexmbs("run", chain, "-o", out, "--t-end", 0.05, "--output-step", 0.1)
    assert r.returncode == 0, r.stderr
    assert "output step (0.1 s) is not shorter than the run" in r.stderr
    folder = tmp_path / "a_folder"
    folder.mkdir()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    cases = [
        (("energy", out, "--max-ratio", -1), ["--max-ratio", "positive number"]),
        (("plot", out, "-o", tmp_path / "x.xyz"), ["x.xyz", "image format", ".png"]),
        (("plot", out, "-o", notes / "x.png"), ["cannot be made", "notes.txt"]),
        (("run", chain, "-o", folder), ["a_folder", "is a folder"]),
        (("run", chain, "-o", notes / "x.h5"), ["cannot be made", "notes.txt"]),
        (("run", chain, "-o", notes), ["notes.txt", "not a flexmbs result"]),
        (("run", chain, "-o", out, "--rtol", 10), ["rtol", "between"]),
        (("run", chain, "-o", out, "--rtol", 1e-30), ["rtol", "between"]),
    ]
    for args, words in cases:
        r = flexmbs_here(capsys, *args)
        assert r.returncode == 2, (args, r.stderr)
        # one line of error (argparse's refusals print the command's usage before it)
        errors = [line for line in r.stderr.splitlines() if "error:" in line]
        assert "Traceback" not in r.stderr and len(errors) == 1, r.stderr
        for word in words:
            assert word in r.stderr, (args, word, r.stderr)
    assert notes.read_text() == "my notes\n"
    r = flexmbs("run", chain, "-o", out, "--t-end", 0.05)
    assert r.returncode == 0 and f"overwriting the earlier result {out}" in r.stderr
    deeper = tmp_path / "new" / "folder" / "chain.h5"   # made, as the writer does
    assert flexmbs("run", chain, "-o", deeper, "--t-end", 0.05).returncode == 0
    assert deeper.exists()


def test_energy_exits_1_on_fail_unless_report_only(tmp_path, capsys):
    out = tmp_path / "chain.h5"
    assert flexmbs("run", MODELS / "chain_spatial_4.toml", "-o", out, "--t-end", 0.2,
                   "--rtol", 1e-4, "--atol", 1e-6).returncode == 0
    failing = flexmbs_here(capsys, "energy", out, "--max-ratio", 1e-15)
    assert failing.returncode == 1 and "FAIL" in failing.stdout
    assert flexmbs_here(capsys, "energy", out, "--max-ratio", 1e-15,
                        "--report-only").returncode == 0


def test_a_closed_pipe_ends_the_command_silently(tmp_path):
    """`flexmbs info RESULT | head -1`: the reader has gone when flexmbs writes; no
    message, the status of a tool that SIGPIPE ends."""
    out = tmp_path / "chain.h5"
    assert flexmbs("run", MODELS / "chain_spatial_4.toml", "-o", out, "--t-end",
                   0.05).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "flexmbs", "info", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdout.close()   # before the interpreter has started
    err = proc.stderr.read()
    proc.wait(timeout=120)
    assert proc.returncode == 128 + signal.SIGPIPE
    assert err == ""


DRIVEN_ONLY = """
[model]
name = "driven"
gravity = [0.0, 0.0, -9.81]
[solver]
t_end = 1.0
rtol = 1e-8
atol = 1e-10
[bodies.rod]
mass = 1.0
com = [0.0, 0.0, -0.5]
inertia = [0.1, 0.1, 0.01]
inertia_about = "com"
[joints.pivot]
type = "revolute"
parent = "ground"
child = "rod"
axis = [0.0, 1.0, 0.0]
[drivers.spin]
joint = "pivot"
law = "polynomial"
coefficients = [0.0, 1.0]
"""


def test_a_model_whose_every_coordinate_is_driven(tmp_path, capsys):
    """No free coordinate: bdf integrates the driver's work (the energy balance
    closes), as dop853 does; galpha, which controls the positions' error, is refused
    with the reason."""
    model = tmp_path / "driven.toml"
    model.write_text(DRIVEN_ONLY)
    works = []
    for solver in ("bdf", "dop853"):
        out = tmp_path / f"{solver}.h5"
        r = flexmbs_here(capsys, "run", model, "-o", out, "--solver", solver)
        assert r.returncode == 0, r.stderr
        e = flexmbs_here(capsys, "energy", out, "--json")
        assert e.returncode == 0 and json.loads(e.stdout)["passed"]
        works.append(open_result(out).energy["dissipated"][-1])
    assert works[0] == pytest.approx(works[1], rel=1e-6)
    r = flexmbs_here(capsys, "run", model, "-o", tmp_path / "g.h5", "--solver", "galpha")
    assert r.returncode == 2 and "driven" in r.stderr and "bdf" in r.stderr


def test_a_spring_between_coincident_markers_is_named(tmp_path):
    """Two markers at the same point: the spring's force has no direction; refused
    with its name and field before the run, not a non-finite residual at 1e-9 s."""
    text = DRIVEN_ONLY.replace('[drivers.spin]\njoint = "pivot"\nlaw = "polynomial"\n'
                               'coefficients = [0.0, 1.0]\n', "")
    text += """
[ground.markers.anchor]
position = [0.0, 0.0, -1.0]
[bodies.rod.markers.end]
position = [0.0, 0.0, -1.0]
[springs.tie]
body1 = "ground"
marker1 = "anchor"
body2 = "rod"
marker2 = "end"
stiffness = 100.0
rest_length = 0.1
"""
    model = tmp_path / "tie.toml"
    model.write_text(text)
    r = flexmbs("run", model, "-o", tmp_path / "tie.h5")
    assert r.returncode == 2, r.stderr
    assert 'spring "tie"' in r.stderr and "coincide" in r.stderr and "tie.toml" in r.stderr


def test_galpha_settings_given_to_another_solver_are_warned_about(tmp_path, capsys):
    r = flexmbs_here(capsys, "run", MODELS / "chain_planar_4.toml", "-o", tmp_path / "x.h5",
                     "--t-end", 0.01, "--rho-inf", 0.5, "--fixed-step", 1e-3)
    assert r.returncode == 0, r.stderr
    assert ('warning: rho_inf = 0.5 and fixed_step = 0.001 s set, which only the solver '
            '"galpha" uses; "bdf" runs without') in r.stderr
    r = flexmbs_here(capsys, "run", MODELS / "chain_planar_4.toml", "-o", tmp_path / "y.h5",
                     "--t-end", 0.01, "--solver", "galpha", "--rho-inf", 0.5)
    assert r.returncode == 0 and "only the solver" not in r.stderr
