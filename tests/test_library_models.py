"""The benchmark models built in Python (flexmbs.model.library) are the model files of
data/models to the bit: the same description and the same compiled arrays."""

from pathlib import Path

import numpy as np
import pytest

from flexmbs.formats.serialize import model_to_dict
from flexmbs.formats.toml_reader import load_model
from flexmbs.model import library
from flexmbs.model.compiled import compile_model

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"

TWINS = {  # model file: the library's builder of the same model
    "huang_two_link": library.huang_two_link,
    "huang_three_link": library.huang_three_link,
    "huang_rig": library.huang_rig,
    "huang_eight_link": library.huang_eight_link,
    "spin_up": library.spin_up,
    "four_bar": library.four_bar,
    "four_bar_flexible": library.four_bar_flexible,
    "slider_crank_flexible": library.slider_crank,
    "chain_planar_4": lambda: library.chain_model(4, "planar"),
    "chain_spatial_4": lambda: library.chain_model(4, "spatial"),
}


@pytest.mark.parametrize("name", sorted(TWINS))
def test_library_model_is_its_model_file(name):
    """Description and compiled arrays equal exactly (np.array_equal), with the
    coordinate and sensor names and the initial state."""
    built, read = TWINS[name](), load_model(MODELS / f"{name}.toml")
    assert model_to_dict(built) == model_to_dict(read)
    a, b = compile_model(built), compile_model(read)
    assert a.arrays._fields == b.arrays._fields
    for field, x, y in zip(a.arrays._fields, a.arrays, b.arrays):
        assert np.asarray(x).dtype == np.asarray(y).dtype, field
        assert np.array_equal(x, y), field
    assert np.array_equal(a.q0, b.q0) and np.array_equal(a.u0, b.u0)
    assert a.coordinate_names == b.coordinate_names
    assert (a.sensor_names, a.sensor_sizes) == (b.sensor_names, b.sensor_sizes)
