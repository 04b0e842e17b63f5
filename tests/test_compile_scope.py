"""What a run compiles: every kernel once, for the model and workspace passed by
reference; the reaction sensors' kernels only for a model that has them; and the
user told what compiles, the progress line's rate leaving it out."""

import json
import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from flexmbs.runtime.compile_notice import CompileWatch, part_name

JIT = os.environ.get("NUMBA_DISABLE_JIT") != "1"

_INSPECT = textwrap.dedent("""
    import json, sys
    import numba
    import flexmbs
    from flexmbs.model.library import huang_two_link
    from flexmbs import simulate
    from flexmbs.dynamics import outputs, reactions, sensors

    model = huang_two_link(elements=1)
    sim = simulate(model, None, t_end=0.02, output_step=0.01)
    plain, kernels = [], 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("flexmbs"):
            continue
        for attr in vars(module).values():
            if not isinstance(attr, numba.core.registry.CPUDispatcher):
                continue
            kernels += 1
            for sig in attr.overloads:
                if any(getattr(a, "name", "").startswith(("ModelArrays", "Workspace"))
                       for a in sig):
                    plain.append(attr.py_func.__qualname__)
    print(json.dumps({
        "status": sim.status, "kernels": kernels, "plain": sorted(set(plain)),
        "reaction_outputs": len(outputs.reaction_outputs.overloads),
        "accelerations": len(reactions.accelerations.overloads),
        "reaction_sensor_values": len(sensors.reaction_sensor_values.overloads),
        "compile_time": sim.statistics["compile_time"]}))
""")


@pytest.mark.skipif(not JIT, reason="numba off")
def test_a_run_compiles_for_references_only_and_only_what_the_model_uses():
    """A run of H2 (no reaction sensors) in a fresh process: no kernel has a
    signature taking the model or workspace tuples themselves (each would carry its
    own copy of the code below it and a Python entry converting ~150 arrays), and the
    reaction sensors' kernels (with the accelerations they need) are neither
    compiled nor loaded."""
    out = subprocess.run([sys.executable, "-c", _INSPECT], capture_output=True,
                         text=True, timeout=1800, check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    assert r["status"] == "finished" and r["kernels"] > 50
    assert r["plain"] == []
    assert r["reaction_outputs"] == r["accelerations"] == \
        r["reaction_sensor_values"] == 0
    assert r["compile_time"] >= 0.0


def test_the_reaction_sensors_go_through_their_own_kernel():
    """output_quantities on a model with a joint-reaction sensor fills it (through
    reaction_outputs) and gives the other sensors as the kinematic kernel alone."""
    from flexmbs import compile_model
    from flexmbs.dynamics.outputs import has_reaction_sensors, kinematic_outputs, output_quantities
    from flexmbs.model.library import four_bar
    model = four_bar()   # its cut joint: coupler_rocker
    model.add_sensor("pivot", "joint_reaction", joint="crank_pivot")
    model.add_sensor("cut", "joint_reaction", joint="coupler_rocker")
    cm = compile_model(model)
    assert has_reaction_sensors(cm.arrays)
    y = cm.initial_state()[None, :]
    t = np.array([0.0])
    e1, s1 = np.zeros((1, 7)), np.full((1, cm.nsensor_values), np.nan)
    output_quantities(cm.arrays, cm.new_workspace(), t, y, e1, s1)
    e2, s2 = np.zeros((1, 7)), np.full((1, cm.nsensor_values), np.nan)
    kinematic_outputs(cm.arrays, cm.new_workspace(), t, y, e2, s2)
    assert np.all(np.isfinite(s1))
    assert np.isnan(s2).any()
    done = np.isfinite(s2)
    np.testing.assert_array_equal(s1[done], s2[done])
    np.testing.assert_array_equal(e1, e2)


def test_the_compile_watch_counts_times_and_names_what_compiles():
    """A function compiled under the watch: counted once, timed, reported as a part
    under its own name (or the user's words for a known kernel); a second call loads
    nothing new and reports nothing."""
    lines = []

    def twice(x):
        return 2.0 * x + 1.0

    kernel = numba.njit(cache=False)(twice)
    with CompileWatch(write=lines.append) as watch:
        assert kernel(1.5) == 4.0
        assert kernel(2.5) == 6.0
    if not JIT:
        assert watch.functions == 0 and lines == []
        return
    assert watch.functions >= 1 and watch.seconds > 0.0
    assert [p[0] for p in watch.parts] == ["twice"]
    assert watch.elapsed() == watch.seconds
    assert part_name("bdf_advance") == "the BDF step loop"
    if watch.seconds > 0.5:
        assert lines[0].startswith("flexmbs: compiling kernels")
        assert "twice: " in lines[-1]


def test_the_progress_rate_leaves_out_compilation(monkeypatch, capsys):
    """The progress line's rate is simulated time over wall time less the compile
    time that the watch reports since the line started."""
    from flexmbs.simulation import progress

    class Watch:
        seconds = 0.0

        def elapsed(self):
            return self.seconds

    watch = Watch()
    clock = iter([100.0, 110.0])
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    bar = progress.Progress(True, 0.0, 10.0, watch)
    watch.seconds = 8.0           # 8 of the 10 wall seconds went to compiling
    bar.update(4.0, 17, force=True)
    err = capsys.readouterr().err
    assert " 2 s/s," in err and "17 steps" in err and "4/10 s" in err
