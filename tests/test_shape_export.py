"""`flexmbs export` (VTKHDF for ParaView) and `flexmbs animate`: the geometry read back
with VTK's own reader against the marker and beam sensors of the same run."""

from pathlib import Path

import numpy as np
import pytest

from flexmbs import open_result, simulate
from flexmbs.analysis.animation import animate_result, frame_times
from flexmbs.analysis.vtk_export import export_vtk, shape_of_result
from flexmbs.cli import main
from flexmbs.model.library import huang_two_link

vtk = pytest.importorskip("vtk")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
H2 = ROOT / "data" / "models" / "huang_two_link.toml"
SENSORS = """
[sensors.tip_global]
type = "marker_position"
body = "link2"
marker = "tip"

[sensors.elbow]
type = "marker_position"
body = "link1"
marker = "joint2"

[sensors.root_forces]
type = "beam_section_forces"
body = "link2"
element = 0
at = "start"

[sensors.middle_forces]
type = "beam_section_forces"
body = "link2"
element = 1
at = 0.5
"""
ROUND_OFF = 1e-12  # m: the same kinematics, summed in another order


@pytest.fixture(scope="module")
def h2_run(tmp_path_factory):
    """H2 with 2 elements and sensors of the tip, the elbow and section forces, 0.05 s."""
    folder = tmp_path_factory.mktemp("export")
    model = folder / "h2.toml"
    model.write_text(H2.read_text() + SENSORS)
    out = folder / "h2.h5"
    status = main(["run", str(model), "-o", str(out), "-q", "--set", "solver.t_end=0.05",
                   "--set", "output.step=0.005", "--set", "bodies.link2.elements=2"])
    assert status == 0
    return out


def _read(path):
    reader = vtk.vtkHDFReader()
    reader.SetFileName(str(path))
    reader.UpdateInformation()
    return reader


def _step(reader, k):
    reader.SetStep(k)
    reader.Update()
    out = reader.GetOutput()
    data = out.GetPointData()
    return (vtk_to_numpy(out.GetPoints().GetData()),
            {name: vtk_to_numpy(data.GetArray(name)) for name in
             ("elastic_displacement", "outer_fibre_strain", "section_forces")}, out)


def test_the_exported_shape_is_where_the_sensors_saw_the_arm(h2_run, tmp_path):
    vtkhdf = tmp_path / "h2.vtkhdf"
    assert main(["export", str(h2_run), "-o", str(vtkhdf)]) == 0
    result = open_result(h2_run)
    reader = _read(vtkhdf)
    assert reader.GetNumberOfSteps() == len(result.time) == 11
    times = reader.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS())
    assert np.array_equal(np.array(times), result.time)  # exact, not rounded
    shape = shape_of_result(result)
    beam = shape.beams[0]
    last = beam.first_point + len(beam.local) - 1
    middle = beam.first_point + len(beam.local) // 2 + 2  # xi = 0.5 of element 1
    for k in (0, 5, 10):
        points, data, polydata = _step(reader, k)
        assert np.abs(points[last] - result.sensors["tip_global"][k]).max() < ROUND_OFF
        elbow = shape.vertices[1]  # joint2's child marker: link2's frame origin
        assert np.abs(points[elbow] - result.sensors["elbow"][k]).max() < ROUND_OFF
        assert np.abs(data["elastic_displacement"][last]
                      - result.sensors["tip_deflection"][k]).max() < ROUND_OFF
        # the bending and torsion parts are linear in qf in both; N differs by the
        # consistent membrane term (second order), which the shape leaves out
        for point, sensor in ((beam.first_point, "root_forces"), (middle, "middle_forces")):
            want = result.sensors[sensor][k][1:]
            got = data["section_forces"][point][1:]
            assert np.abs(got - want).max() <= 1e-9 * max(1.0, np.abs(want).max())
        assert polydata.GetNumberOfLines() == 2  # link1 (frame to its marker), link2
        assert polydata.GetNumberOfVerts() == 2  # the two joints
    # the strain at the outer fibres from the same section's forces (whose moments
    # matched the sensor): eps = N / EA - y M_z / EI_z + z M_y / EI_y
    link2 = shape.cm.model.bodies["link2"]
    section, e = link2.section, link2.material.youngs_modulus
    n, _, _, _, m_y, m_z = data["section_forces"][beam.first_point]
    fibres = [(section.max_y, 0.0), (-section.max_y, 0.0), (0.0, section.max_z),
              (0.0, -section.max_z)]
    eps = [n / (e * section.area) - y * m_z / (e * section.i_z) + z * m_y / (e * section.i_y)
           for y, z in fibres]
    want = max(eps, key=abs)
    assert abs(want) > 1e-5  # the root is bent
    assert abs(data["outer_fibre_strain"][beam.first_point] - want) < 1e-9 * abs(want)


def test_the_file_grows_step_by_step_and_keeps_the_body_of_each_cell(h2_run, tmp_path):
    import h5py
    path, steps = export_vtk(h2_run, tmp_path / "a.vtkhdf", subdivisions=2)
    with h5py.File(path) as f:
        names = [n.decode() for n in f["flexmbs/body_names"][()]]
        assert names == ["link1", "link2"]
        assert int(f["VTKHDF/Steps"].attrs["NSteps"]) == steps
        assert f["VTKHDF/Points"].shape == (steps * (2 + 5 + 2), 3)  # link1, link2, joints
    _, _, polydata = _step(_read(path), 0)
    body = vtk_to_numpy(polydata.GetCellData().GetArray("body"))
    assert list(body) == [0, 1, 0, 1]  # joints (child bodies), then the lines


def test_a_magnified_beam_moves_k_times_its_deflection(h2_run):
    """With scale K the beam's points move K times their elastic displacement from
    the undeformed line; the joints and the point data stay those of the run."""
    result = open_result(h2_run)
    shape = shape_of_result(result)
    t, q = float(result.time[-1]), result.q[-1]
    beam = shape.beams[0]
    straight = q.copy()
    straight[beam.q_first : beam.q_first + beam.nf] = 0.0
    zero, plain = shape.frame(t, straight), shape.frame(t, q)
    big = shape.frame(t, q, scale=50.0)
    rows = slice(beam.first_point, beam.first_point + len(beam.local))
    assert np.abs(plain.points[rows] - zero.points[rows]).max() > 1e-5  # it is bent
    assert np.allclose(big.points[rows] - zero.points[rows],
                       50.0 * (plain.points[rows] - zero.points[rows]), rtol=0, atol=1e-13)
    assert np.abs(big.points[shape.vertices] - plain.points[shape.vertices]).max() < 1e-12
    assert np.array_equal(big.point_data["section_forces"], plain.point_data["section_forces"])


def test_a_magnified_beam_carries_the_bodies_it_holds():
    """H8: link 2 hangs at link 1's tip node. Magnified or not, the joint between them
    is at link 1's deformed tip: the magnified elastic coordinates go through the
    kinematics, not only into the drawing."""
    from flexmbs import compile_model
    from flexmbs.io.deformed_shape import DeformedShape
    from flexmbs.model.library import huang_eight_link

    cm = compile_model(huang_eight_link(t_end=0.1))
    shape = DeformedShape(cm, subdivisions=2)
    q = cm.q0.copy()
    rng = np.random.default_rng(3)
    for part in shape.beams:
        q[part.q_first : part.q_first + part.nf] = 1e-3 * rng.standard_normal(part.nf)
    model = cm.model
    def at_tip(j):
        body = model.bodies.get(j.parent)
        node = body.markers[j.parent_marker].node if body is not None else None
        return node is not None and node % len(body.nodes) == len(body.nodes) - 1

    held = [(k, j) for k, j in enumerate(
        j for j in model.joints.values() if j.child != "ground") if at_tip(j)]
    assert held, "H8 has a body held at a beam's tip"
    for scale in (1.0, 50.0):
        points = shape.frame(0.0, q, scale).points
        for k, joint in held:
            parent = next(p for p in shape.beams
                          if shape.body_names[p.body] == joint.parent)
            tip = points[parent.first_point + len(parent.local) - 1]
            assert np.abs(points[shape.vertices[k]] - tip).max() < 1e-12, (scale, joint.name)


def test_a_model_built_in_python_is_exported_with_the_model_given(tmp_path):
    model = huang_two_link()
    sim = simulate(model, tmp_path / "py.h5", t_end=0.02, output_step=0.01)
    assert sim.status == "finished"
    assert main(["export", str(tmp_path / "py.h5")]) == 2  # no model text in the file
    path, steps = export_vtk(tmp_path / "py.h5", model=model)
    assert path == tmp_path / "py.vtkhdf" and steps == 3


def test_export_of_what_is_not_a_result_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "x.h5"
    bad.write_text("not hdf5")
    assert main(["export", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0]


def test_frames_are_spread_over_the_run():
    time = np.linspace(0.0, 2.0, 201)
    rows = frame_times(time, fps=10.0, speed=1.0, max_frames=250)
    assert rows[0] == 0 and rows[-1] == 200 and len(rows) == 21
    assert len(frame_times(time, fps=25.0, speed=1.0, max_frames=30)) == 30
    assert frame_times(time[:1], 25.0, 1.0, 10) == [0]


def test_the_animation_moves(h2_run, tmp_path):
    from PIL import Image
    gif, frames = animate_result(h2_run, tmp_path / "h2.gif", scale=20.0, fps=100.0)
    assert frames == 6  # 0.05 s at 100 frames per second of film
    with Image.open(gif) as im:
        assert im.size == (640, 480) and im.n_frames == frames
        first = np.asarray(im.convert("RGB")).astype(int)
        im.seek(frames - 1)
        last = np.asarray(im.convert("RGB")).astype(int)
    assert (np.abs(first - last).sum(axis=2) > 0).sum() > 200  # the arm moved


def test_an_mp4_holds_every_frame(h2_run, tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    pytest.importorskip("imageio_ffmpeg")
    mp4, frames = animate_result(h2_run, tmp_path / "h2.mp4", fps=100.0, view="xz")
    with imageio.get_reader(mp4) as reader:
        images = [im for im in reader]
    assert len(images) == frames and images[0].shape == (480, 640, 3)


def test_animate_refuses_an_unknown_format(h2_run, tmp_path, capsys):
    assert main(["animate", str(h2_run), "-o", str(tmp_path / "a.avi")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ".gif or .mp4" in err[0]


def test_a_run_with_vtk_output_writes_the_shape_as_it_goes(tmp_path):
    """[output] vtk = true: the VTKHDF file beside the result file holds every output
    row, the same as `flexmbs export` writes afterwards."""
    import h5py
    out = tmp_path / "h2.h5"
    assert main(["run", str(H2), "-o", str(out), "-q", "--set", "solver.t_end=0.02",
                 "--set", "output.step=0.01", "--set", "output.vtk=true"]) == 0
    during = tmp_path / "h2.vtkhdf"
    after, steps = export_vtk(out, tmp_path / "after.vtkhdf")
    with h5py.File(during) as a, h5py.File(after) as b:
        assert int(a["VTKHDF/Steps"].attrs["NSteps"]) == steps == 3
        assert np.array_equal(a["VTKHDF/Steps/Values"][()], b["VTKHDF/Steps/Values"][()])
        assert np.abs(a["VTKHDF/Points"][()] - b["VTKHDF/Points"][()]).max() < 1e-12
