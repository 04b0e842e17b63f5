"""The small-deformation range of the floating-frame beam
(flexmbs.elements.deformation_range): a run of a beam far outside it is warned about
during the run, in the result file and in the energy report; one inside it is not; the
watch's figures against the nodal coordinates read by name."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

from flexmbs import compile_model, open_result, simulate
from flexmbs.analysis.energy import energy_balance, format_energy_report
from flexmbs.elements.deformation_range import DEFLECTION_LIMIT, ROTATION_LIMIT, DeformationWatch
from flexmbs.model.library import huang_two_link

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(model, path, t_end):
    said = []
    sim = simulate(model, path, t_end=t_end, rtol=1e-5, atol=1e-7, method="galpha",
                   output_step=0.01, log=said.append, history=True)
    return sim, said


def test_a_beam_inside_the_range_is_not_warned_about(tmp_path):
    sim, said = _run(huang_two_link(1), tmp_path / "h2.h5", 0.5)
    assert sim.status == "finished"
    assert not any("small-deformation" in s for s in said)
    assert "small_deformation" not in sim.statistics
    assert energy_balance(tmp_path / "h2.h5")["small_deformation"] is None


def test_a_soft_beam_far_outside_the_range_is_warned_about(tmp_path):
    """H2 with E and G 1e-4 of the tube's: the beam folds under its own weight."""
    path = tmp_path / "soft.h5"
    sim, said = _run(huang_two_link(2, youngs_modulus_scale=1e-4), path, 0.5)
    warnings = [s for s in said if "small-deformation" in s]
    assert len(warnings) == 1 and 'beam "link2"' in warnings[0]
    assert "small-deformation" in open_result(path).solver["small_deformation"]
    report = format_energy_report(energy_balance(path))
    assert 'warning: a beam went outside the small-deformation range' in report


SOFT_CHILD = textwrap.dedent("""
    import sys
    from flexmbs.model.library import huang_two_link
    from flexmbs import simulate
    simulate(huang_two_link(2, youngs_modulus_scale=1e-4), sys.argv[1], t_end=1e3,
             rtol=1e-5, atol=1e-7, method="galpha", output_step=0.01,
             log=lambda text: print(text, flush=True))
""")


def test_a_killed_run_keeps_the_warning_for_the_energy_report(tmp_path):
    """The soft H2 run killed (SIGKILL) after its warning: the warning reached the file
    with the commit after it, so `flexmbs energy` on the dead run's file warns too."""
    path = tmp_path / "killed.h5"
    proc = subprocess.Popen([sys.executable, "-c", SOFT_CHILD, str(path)],
                            stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        deadline = time.monotonic() + 300
        warned = False
        while not warned and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            warned = "small-deformation" in line
        assert warned, "the child did not warn"
        while time.monotonic() < deadline:
            time.sleep(0.2)
            if open_result(path).solver.get("small_deformation"):
                break
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    r = open_result(path)
    assert r.status == "running"
    report = format_energy_report(energy_balance(path))
    assert 'warning: a beam went outside the small-deformation range' in report


def test_the_watch_takes_the_largest_nodal_values(tmp_path):
    model = huang_two_link(2, youngs_modulus_scale=1e-3)
    cm = compile_model(model)
    sim, _ = _run(model, None, 0.3)
    watch = DeformationWatch(cm)
    watch.update(sim.t, sim.y)
    d, _, r, _ = watch.worst["link2"]
    names = cm.coordinate_names
    q = sim.y[:, :cm.nq]

    def column(node, dof):
        name = f"link2.n{node}.{dof}"
        return q[:, names.index(name)] if name in names else np.zeros(len(sim.t))

    length = 1.02
    moves = [np.sqrt(sum(column(n, x) ** 2 for x in "uvw")) for n in (1, 2)]
    turns = [np.sqrt(sum(column(n, x) ** 2 for x in ("tx", "ty", "tz"))) for n in (1, 2)]
    assert d == max(m.max() for m in moves) / length
    assert r == max(t.max() for t in turns)
    assert 0 < d and 0 < r  # it moves, inside or outside the limits
    assert (d > DEFLECTION_LIMIT or r > ROTATION_LIMIT) == bool(watch.report())


def test_a_reduced_beam_is_watched_through_its_modes():
    model = huang_two_link(2, youngs_modulus_scale=1e-4, modes=2)
    cm = compile_model(model)
    sim, said = _run(model, None, 0.5)
    assert any('beam "link2"' in s for s in said)
    watch = DeformationWatch(cm)
    (extent,) = watch.beams
    assert extent.to_nodal is not None
    assert extent.to_nodal.shape[1] == model.bodies["link2"].nf == 3  # 2 modes, 1 derivative
