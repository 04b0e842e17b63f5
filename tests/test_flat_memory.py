"""A run with a result file keeps no history in memory: its outputs are read back
from the file, equal to the ones a run keeping them has, and its peak memory does not
grow with the number of output rows."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from flexmbs import simulate
from flexmbs.model.library import four_bar, huang_eight_link


@pytest.mark.parametrize("build", [lambda: huang_eight_link(elements=1, t_end=0.05),
                                   lambda: four_bar(t_end=0.05)],
                         ids=["H8 (actuators)", "four-bar (multipliers)"])
def test_the_outputs_read_from_the_file_are_those_kept_in_memory(tmp_path, build):
    kept = simulate(build(), tmp_path / "a.h5", output_step=0.01, history=True)
    read = simulate(build(), tmp_path / "b.h5", output_step=0.01)
    assert read._arrays["y"] is None          # nothing kept until asked for
    for name in ("t", "y", "energy", "sensors"):
        np.testing.assert_array_equal(getattr(read, name), getattr(kept, name))
    import h5py
    with h5py.File(tmp_path / "b.h5", "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["rest_column"][:]]
    assert len(names) == kept.y.shape[1] - 2 * len(kept.coordinate_names)
    assert names[0] == "W_nc" and names == [n for n in names if n]
    with pytest.raises(ValueError, match="result file"):
        simulate(build(), None, history=False)


_PEAK = textwrap.dedent("""
    import json, resource, sys
    from flexmbs.model.library import chain_model
    from flexmbs import simulate
    step, path = float(sys.argv[1]), sys.argv[2]
    model = chain_model(4, "spatial", t_end=4.0)
    sim = simulate(model, path, output_step=step, rtol=1e-6, atol=1e-8)
    print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                      / 1024.0, "status": sim.status}))
""")


def _peak(step, path):
    out = subprocess.run([sys.executable, "-c", _PEAK, str(step), str(path)],
                         capture_output=True, text=True, check=True, timeout=1800)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_peak_memory_does_not_grow_with_the_output_rows(tmp_path):
    """CHAIN-4 for 4 s with 2 000 and with 2 000 000 output rows (each row 30 numbers:
    0.5 GB if kept): the two processes' peak memory within 100 MB."""
    few = _peak(2e-3, tmp_path / "few.h5")
    many = _peak(2e-6, tmp_path / "many.h5")
    assert few["status"] == many["status"] == "finished"
    import h5py
    with h5py.File(tmp_path / "many.h5", "r") as f:
        assert f["time"].shape[0] == 2_000_001 and f["time"][-1] == 4.0  # t0 too
    assert many["peak_mb"] - few["peak_mb"] < 100.0, (few, many)
