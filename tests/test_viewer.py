"""`flexmbs view`: the scene document against the run's kinematics, and the page in a
real headless Chromium (Playwright): no console error, one object per body, the drawn
tip where the run's marker sensor saw it, on the pixel, a picture that is not blank.
The served page, the standalone HTML file and the notebook output are the same page."""

import html
import re
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from flexmbs import compile_model, open_result
from flexmbs.analysis.deflection_scale import readable_scale
from flexmbs.analysis.vtk_export import shape_of_result
from flexmbs.cli import main
from flexmbs.io.deformed_shape import DeformedShape
from flexmbs.model.library import huang_eight_link
from flexmbs.viewer import scene_of_model, scene_of_result, show
from flexmbs.viewer.array_text import unpacked
from flexmbs.viewer.browser import chromium_path
from flexmbs.viewer.scene import build_scene
from flexmbs.viewer.server import ViewerServer

ROOT = Path(__file__).resolve().parents[1]
H2 = ROOT / "data" / "models" / "huang_two_link.toml"
H8 = ROOT / "data" / "models" / "huang_eight_link.toml"
SENSORS = """
[sensors.tip_global]
type = "marker_position"
body = "link2"
marker = "tip"
"""
PIXEL = 1.0  # px: a point drawn where it is, seen by the same camera
FLOAT32 = 2e-6  # m: the page computes in float32 from float32 data, on an arm of ~1 m


@pytest.fixture(scope="module")
def h2_run(tmp_path_factory):
    """H2 with 2 elements and a global marker sensor at the tip, 0.1 s."""
    folder = tmp_path_factory.mktemp("view")
    model = folder / "h2.toml"
    model.write_text(H2.read_text() + SENSORS)
    out = folder / "h2.h5"
    status = main(["run", str(model), "-o", str(out), "-q", "--set", "solver.t_end=0.1",
                   "--set", "output.step=0.01", "--set", "bodies.link2.elements=2"])
    assert status == 0
    return out


def _pose(rotation, position):
    t = np.eye(4)
    t[:3, :3] = np.asarray(rotation).reshape(3, 3)
    t[:3, 3] = position
    return t


def _cardan(th):
    c, s = np.cos(th), np.sin(th)
    rx = np.array([[1, 0, 0], [0, c[0], -s[0]], [0, s[0], c[0]]])
    ry = np.array([[c[1], 0, s[1]], [0, 1, 0], [-s[1], 0, c[1]]])
    rz = np.array([[c[2], -s[2], 0], [s[2], c[2], 0], [0, 0, 1]])
    return rx @ ry @ rz


def _document_marker(data, el, k, f, scale):
    """The frame of the document's marker k in its body's axes at frame f, scale K."""
    m = data["markers"][k]
    rot, pos = np.reshape(m["rotation"], (3, 3)), np.array(m["position"])
    if m["elastic"] >= 0:
        e = el[f, m["elastic"]].astype(float)
        rot, pos = _cardan(scale * e[3:]) @ rot, pos + scale * e[:3]
    return _pose(rot, pos)


def _drawn_points(data, f, scale):
    """The beams' centre lines (global axes) as the page builds them from the document:
    the chain T_i = T_p M_P J_i M_O^-1 with the elastic terms magnified `scale` times
    (written out here as the page's script does it, from the document alone)."""
    rel, el = unpacked(data["relative"]), unpacked(data["markerElastic"])
    defl = unpacked(data["deflection"])

    def marker(k):
        return _document_marker(data, el, k, f, scale)

    poses, out = [], {}
    for b, body in enumerate(data["bodies"]):
        j = _pose(rel[f, b, :9], rel[f, b, 9:])
        parent = poses[body["parent"]] if body["parent"] >= 0 else np.eye(4)
        poses.append(parent @ marker(body["markerP"]) @ j @ np.linalg.inv(marker(body["markerO"])))
        if body["kind"] == "beam":
            local = unpacked(body["local"]) + scale * defl[f, body["firstPoint"]:
                                                           body["firstPoint"] + body["points"]]
            out[body["name"]] = local @ poses[b][:3, :3].T + poses[b][:3, 3]
    return out


def test_the_document_rebuilds_the_magnified_kinematics():
    """H8 (link 2 hangs at link 1's tip node, the wrist at link 2's) with random elastic
    coordinates: the chain rebuilt from the document at scale K puts every beam point
    where DeformedShape.frame(t, q, K) does, the elastic coordinates magnified before
    the kinematics (K = 1: the run's own kinematics)."""
    model, cm, shape, times, qs = _h8_bent()
    scene = build_scene(cm, model, times, qs, "h8", subdivisions=3)
    data = scene.data
    for f in range(3):
        for scale in (1.0, 30.0):
            want = shape.frame(times[f], qs[f], scale).points
            got = _drawn_points(data, f, scale)
            for part in shape.beams:
                name = shape.body_names[part.body]
                rows = slice(part.first_point, part.first_point + len(part.local))
                assert np.abs(got[name] - want[rows]).max() < 20 * FLOAT32, (f, scale, name)
    assert [b["name"] for b in data["bodies"]] == list(cm.topology.body_names)


def test_the_default_scale_makes_the_bend_a_tenth_of_the_arm():
    assert readable_scale(8.5e-4, 1.2).scale == 100.0  # 141 -> the nearest 1-2-5 step
    assert readable_scale(2.9e-2, 1.14).scale == 5.0
    assert readable_scale(0.5, 1.0).scale == 1.0  # already visible: drawn true
    assert readable_scale(0.0, 1.0).scale == 1.0
    line = readable_scale(8.5e-4, 1.2).describe()
    assert "x100" in line and "0.85 mm" in line and "1.2 m" in line


def test_scene_of_a_result_and_of_a_model(h2_run):
    result = open_result(h2_run)
    scene = scene_of_result(result)
    data = scene.data
    assert scene.frames == len(result.time) == len(unpacked(data["time"]))
    assert [s["name"] for s in data["sensors"]] == list(result.sensors)
    assert {b["name"]: b["kind"] for b in data["bodies"]} == {"link1": "rigid", "link2": "beam"}
    link2 = data["bodies"][1]
    assert link2["payloads"][0]["mass"] == 0.5 and link2["section"]["outline"] == "rect"
    assert [j["glyph"] for j in data["joints"]] == ["hinge", "hinge"]
    few = scene_of_result(result, max_frames=4)
    time = unpacked(few.data["time"])
    assert len(time) == 4 and time[0] == result.time[0] and time[-1] == result.time[-1]
    model = scene_of_model(H8)
    assert model.frames == 1 and len(model.data["bodies"]) == 8


def test_view_refuses_what_it_cannot_show_in_one_line(tmp_path, capsys):
    bad = tmp_path / "x.txt"
    bad.write_text("x")
    for args, words in (([str(bad)], "expected a result file (.h5) or a model file"),
                        ([str(tmp_path / "none.h5")], "no such result file"),
                        ([str(H2), "--field", "stress"], "expected one of outer_fibre_strain"),
                        ([str(H2), "--size", "big"], "expected WIDTHxHEIGHT")):
        assert main(["view", *args, "--html", str(tmp_path / "o.html")]) == 2, args
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and words in err[0], err


def test_a_result_of_a_model_built_in_python_is_shown_with_the_model(tmp_path, capsys):
    from flexmbs import simulate
    from flexmbs.model.library import huang_two_link
    model = huang_two_link()
    simulate(model, tmp_path / "py.h5", t_end=0.02, output_step=0.01)
    assert main(["view", str(tmp_path / "py.h5"), "--html", str(tmp_path / "py.html")]) == 2
    assert "flexmbs.show(result, model=MODEL)" in capsys.readouterr().err
    assert show(tmp_path / "py.h5", model=model).scene.frames == 3


def test_the_notebook_output_is_the_page_in_an_iframe(h2_run):
    view = show(h2_run, height=400, view="xz")
    out = view._repr_html_()
    assert out.startswith("<iframe srcdoc=") and "height: 400px" in out
    page = html.unescape(re.search(r'srcdoc="([^"]*)"', out).group(1))
    assert "window.flexmbsViewer" in page and '"view":"xz"' in page
    assert "2 bodies" in repr(view)


# ---- in a real browser ----

def _browser_problem():
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (the view extra)"
    if chromium_path() is None:
        return ("no Chromium on this machine (Debian: apt-get install chromium; make test "
                "installs it)")
    return None


browser = pytest.mark.skipif(_browser_problem() is not None, reason=str(_browser_problem()))


@pytest.fixture(scope="module")
def chromium():
    from flexmbs.viewer.browser import browser_page
    with browser_page((900, 600)) as (page, errors):
        yield page, errors


def _open(page, errors, url):
    from flexmbs.viewer.browser import wait_ready
    errors.clear()
    page.goto(url)
    wait_ready(page)


def _screenshot(page, path):
    from PIL import Image
    page.screenshot(path=str(path))
    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def _not_blank(image):
    """The fraction of pixels that differ from the background (the corner's colour)."""
    background = image[2, image.shape[1] // 2]
    return (np.abs(image - background).sum(axis=2) > 30).mean()


@browser
def test_the_served_page_draws_the_tip_where_the_sensor_saw_it(h2_run, chromium, tmp_path):
    page, errors = chromium
    result = open_result(h2_run)
    scene = scene_of_result(result)
    with ViewerServer(scene, options={"panels": False}) as server:
        with urllib.request.urlopen(server.url + "scene.json") as r:
            assert r.status == 200 and b'"bodies"' in r.read()
        _open(page, errors, server.url)
        assert page.evaluate("flexmbsViewer.bodyObjects()") == ["link1", "link2"]
        page.evaluate("flexmbsViewer.setScale(1)")
        for row in (3, 7, len(result.time) - 1):
            t = float(result.time[row])
            frame = page.evaluate(f"flexmbsViewer.seek({t!r})")
            assert frame == row
            drawn = np.array(page.evaluate("flexmbsViewer.drawnBeamPoint('link2', -1)"))
            sensor = result.sensors["tip_global"][row]
            assert np.abs(drawn - sensor).max() < FLOAT32, (t, drawn, sensor)
            px = np.array(page.evaluate(f"flexmbsViewer.project({drawn.tolist()})"))
            want = np.array(page.evaluate(f"flexmbsViewer.project({sensor.tolist()})"))
            assert np.hypot(*(px - want)) < PIXEL
        page.evaluate("flexmbsViewer.render()")
        image = _screenshot(page, tmp_path / "served.png")
        assert _not_blank(image) > 0.01
        # the tip's pixel shows the arm (its payload ball), not the background
        x, y = np.round(want).astype(int)
        patch = image[y - 2 : y + 3, x - 2 : x + 3]
        assert (np.abs(patch - image[2, image.shape[1] // 2]).sum(axis=2) > 60).any()
    assert errors == []


@browser
def test_the_html_file_replays_magnified_with_its_controls(h2_run, chromium, tmp_path):
    """The standalone file (no server): at deflection x20 the drawn beam is where
    DeformedShape puts the magnified one; colour maps and visibility answer."""
    page, errors = chromium
    out = tmp_path / "h2.html"
    assert main(["view", str(h2_run), "--html", str(out), "--field", "M_z"]) == 0
    text = out.read_text()
    assert "http://" not in text.split("<script>", 1)[0] and 'src="http' not in text
    _open(page, errors, out.as_uri())
    result = open_result(h2_run)
    shape = shape_of_result(result)
    row = len(result.time) - 1
    page.evaluate("flexmbsViewer.setScale(20)")
    page.evaluate(f"flexmbsViewer.seek({float(result.time[row])!r})")
    want = shape.frame(float(result.time[row]), result.q[row], 20.0).points
    beam = shape.beams[0]
    for k in (0, len(beam.local) // 2, len(beam.local) - 1):
        drawn = np.array(page.evaluate(f"flexmbsViewer.drawnBeamPoint('link2', {k})"))
        assert np.abs(drawn - want[beam.first_point + k]).max() < 10 * FLOAT32, k
    assert page.evaluate("document.querySelector('.fx-legend').style.display") == "block"
    page.evaluate("flexmbsViewer.setBodyVisible('link1', false)")
    page.evaluate("flexmbsViewer.seek(0); flexmbsViewer.play()")
    page.wait_for_function("flexmbsViewer.frame() > 0", timeout=10_000)  # it plays
    page.evaluate("flexmbsViewer.pause()")
    page.evaluate("flexmbsViewer.render()")
    assert _not_blank(_screenshot(page, tmp_path / "html.png")) > 0.01
    assert errors == []


def _h8_bent():
    """H8 at random joint angles with random elastic coordinates, three states."""
    model = huang_eight_link(t_end=0.1)
    cm = compile_model(model)
    shape = DeformedShape(cm, subdivisions=3)
    rng = np.random.default_rng(7)
    qs = np.tile(cm.q0, (3, 1))
    nj = cm.nq - sum(p.nf for p in shape.beams)
    qs[:, :nj] += 0.3 * rng.standard_normal((3, nj))
    for part in shape.beams:
        qs[:, part.q_first : part.q_first + part.nf] = 2e-3 * rng.standard_normal((3, part.nf))
    times = np.array([0.0, 0.05, 0.1])
    return model, cm, shape, times, qs


@browser
def test_the_page_magnifies_the_bodies_a_beam_carries(chromium, tmp_path):
    """H8 bent at random: at x1 and x30 every drawn beam point, link 2's hanging at
    link 1's magnified tip node among them, is where DeformedShape puts it."""
    from flexmbs.viewer.page import write_html
    page, errors = chromium
    model, cm, shape, times, qs = _h8_bent()
    scene = build_scene(cm, model, times, qs, "h8", subdivisions=3)
    out = write_html(scene, tmp_path / "h8.html")
    _open(page, errors, out.as_uri())
    bodies = page.evaluate("flexmbsViewer.bodyObjects()")
    assert bodies == list(cm.topology.body_names) and len(bodies) == 8
    for f in (1, 2):
        page.evaluate(f"flexmbsViewer.seek({float(times[f])!r})")
        for scale in (1.0, 30.0):
            page.evaluate(f"flexmbsViewer.setScale({scale})")
            want = shape.frame(times[f], qs[f], scale).points
            for part in shape.beams:
                name = shape.body_names[part.body]
                for k in range(len(part.local)):
                    drawn = page.evaluate(f"flexmbsViewer.drawnBeamPoint('{name}', {k})")
                    error = np.abs(np.array(drawn) - want[part.first_point + k]).max()
                    assert error < 20 * FLOAT32, (f, scale, name, k)
    assert errors == []


@browser
def test_a_model_and_an_imported_robot_with_its_meshes(chromium, tmp_path):
    page, errors = chromium
    out = tmp_path / "h8.html"
    assert main(["view", str(H8), "--html", str(out)]) == 0
    _open(page, errors, out.as_uri())
    bodies = page.evaluate("flexmbsViewer.bodyObjects()")
    assert len(bodies) == len(set(bodies)) == 8
    assert errors == []
    ur5 = _ur5()
    if ur5 is None:
        pytest.skip("example-robot-data's UR5 is not installed (the test extra)")
    toml = tmp_path / "ur5.toml"
    assert main(["import-urdf", str(ur5), "-o", str(toml)]) == 0
    scene = scene_of_model(toml)
    assert len(scene.data["meshes"]) >= 7 and not scene.warnings
    out = tmp_path / "ur5.html"
    assert main(["view", str(toml), "--html", str(out)]) == 0
    _open(page, errors, out.as_uri())
    assert len(page.evaluate("flexmbsViewer.bodyObjects()")) == 6
    assert page.evaluate("flexmbsViewer.count('mesh')") == len(scene.data["meshes"])
    assert page.evaluate("flexmbsViewer.count('joint')") == 6
    page.evaluate("flexmbsViewer.render()")
    assert _not_blank(_screenshot(page, tmp_path / "ur5.png")) > 0.05
    assert errors == []


def _ur5():
    import sysconfig
    path = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data"
            / "robots/ur_description/urdf/ur5_robot.urdf")
    return path if path.is_file() else None


def test_the_server_answers_only_its_page(h2_run):
    scene = scene_of_result(h2_run, max_frames=3)
    with ViewerServer(scene) as server:
        assert server.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(server.url) as r:
            assert b"flexmbsViewer" in r.read()
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(server.url + "other")


def test_the_gallery_shows_every_shipped_model():
    """Each model file of data/models has its picture, named on the gallery's page."""
    page = (ROOT / "docs" / "gallery.md").read_text()
    for model in sorted((ROOT / "data" / "models").glob("*.toml")):
        assert (ROOT / "docs" / "gallery" / f"{model.stem}.png").is_file(), model.stem
        assert f"gallery/{model.stem}.png" in page and f"`{model.name}`" in page, model.stem


# ---- finite-element bodies ----

def _fe_plate(cells=True):
    """A 0.3 x 0.2 x 0.004 m plate of quadratic tetrahedra (FE body, 4 fixed-interface
    modes) hinged at its edge x = 0, with an averaged interface at its far edge and a
    node marker at a corner; three states at random hinge angles and elastic
    coordinates. `cells=False`: the same data with the node table only."""
    pytest.importorskip("skfem")
    import scipy.sparse as sp

    import flexmbs
    from flexmbs.elements.fe_body import FeData
    from flexmbs.elements.solid import box_mesh, solid_matrices
    pts, tets = box_mesh(0.3, 0.2, 0.004, (6, 4, 1))
    k, ms = solid_matrices(pts, tets, 7.0e10, 0.33, 2700.0)
    data = FeData(pts, np.arange(1, len(pts) + 1), 3, k, sp.kron(ms, sp.identity(3), "csr"),
                  cells=(("tetra10", tets),) if cells else ())
    model = flexmbs.Model("plate", gravity=(0.0, 0.0, -9.81))
    model.add_fe_body("plate", data=data, modes=4, interfaces={
        "hinge": {"box": [[-1e-3, -1, -1], [1e-3, 1, 1]]},
        "tip": {"box": [[0.299, -1, -1], [0.301, 1, 1]], "connection": "average"}})
    corner = int(np.argmax(pts[:, 0] + pts[:, 1] + pts[:, 2]))
    model.add_marker("plate", "hinge", interface="hinge")
    model.add_marker("plate", "tip", interface="tip")
    model.add_marker("plate", "corner", node=corner + 1)
    model.add_joint("hinge", "revolute", "ground", "plate", child_marker="hinge",
                    axis=(0, 1, 0))
    cm = compile_model(model)
    rng = np.random.default_rng(3)
    qs = np.tile(cm.q0, (3, 1))
    qs[:, 0] = [0.0, 0.5, -0.8]
    qs[:, 1:] = 2e-4 * rng.standard_normal((3, cm.nq - 1))
    return model, cm, pts, tets, np.array([0.0, 0.05, 0.1]), qs


def test_a_beam_hanging_from_an_fe_interface_moves_with_it():
    """A beam hung from the plate's far-edge interface (the plate drawn first, the
    beam's points after it): at x1 and x30 every beam point is where
    DeformedShape.frame(t, q, K) puts it, carried by the magnified interface."""
    from flexmbs.model.library import huang_tube, material
    model, _, _, _, times, _ = _fe_plate()
    model.add_beam_body("arm", [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0]], huang_tube(),
                        material(7.0e10, 2700.0, poisson_ratio=0.33), elements=2,
                        reference=(0.0, 1.0, 0.0))
    model.add_joint("wrist", "revolute", "plate", "arm", parent_marker="tip",
                    axis=(0, 0, 1))
    cm = compile_model(model)
    shape = DeformedShape(cm, subdivisions=3)
    rng = np.random.default_rng(5)
    qs = np.tile(cm.q0, (3, 1))
    qs += 3e-4 * rng.standard_normal(qs.shape)
    names = list(cm.coordinate_names)
    qs[:, names.index("hinge")] = [0.0, 0.5, -0.8]
    qs[:, names.index("wrist")] = [0.3, -0.2, 1.0]
    scene = build_scene(cm, model, times, qs, "plate and arm", subdivisions=3)
    assert [b["kind"] for b in scene.data["bodies"]] == ["fe", "beam"]
    arm = next(p for p in shape.beams if shape.body_names[p.body] == "arm")
    assert scene.data["bodies"][1]["firstPoint"] == 0
    for f in range(3):
        for scale in (1.0, 30.0):
            got = _drawn_points(scene.data, f, scale)["arm"]
            want = shape.frame(times[f], qs[f], scale).points
            rows = slice(arm.first_point, arm.first_point + len(arm.local))
            assert np.abs(got - want[rows]).max() < 20 * FLOAT32, (f, scale)


def _fe_truth(model, cm, t, q, scale, nodes):
    """The plate's nodes `nodes` in global axes at scale K, computed apart from the
    viewer: the frame's pose from the kinematics of q with eta magnified K times, and
    the nodes' translations read off the reduced basis (u v w of node i at rows 3 i..)."""
    from flexmbs.kinematics.recursive import forward_kinematics
    body = model.bodies["plate"]
    eta = q[1:]
    shown = q.copy()
    shown[1:] *= scale
    ws = cm.new_workspace()
    forward_kinematics(cm.arrays, ws, t, shown, np.zeros(cm.nq))
    phi = body.basis.vectors
    local = body.data.nodes[nodes] + scale * np.stack(
        [phi[3 * nodes + c] @ eta for c in range(3)], axis=1)
    return ws.r[0] + local @ ws.rot[0].T, ws


def test_an_fe_body_is_its_mesh_surface_moved_by_its_frame_and_modes():
    """The plate's drawing: its outer surface (the box's six faces, outward, their area
    and enclosed volume the box's), its points the nodes moved by the frame and Phi eta
    at scales 1 and 30 as rebuilt from the document alone; the markers on its
    interfaces where they are; the bounds and the deflection scale take it in."""
    from flexmbs.viewer.fe_surface import fe_surface
    model, cm, pts, tets, times, qs = _fe_plate()
    body = model.bodies["plate"]
    surface = fe_surface(body)
    on_box = ((np.abs(pts[:, 0]) < 1e-9) | (np.abs(pts[:, 0] - 0.3) < 1e-9)
              | (np.abs(np.abs(pts[:, 1]) - 0.1) < 1e-9)
              | (np.abs(np.abs(pts[:, 2]) - 0.002) < 1e-9))
    assert set(surface.nodes.tolist()) == set(np.flatnonzero(on_box).tolist())
    x = surface.local[surface.triangles]
    cross = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0])
    area = 0.5 * np.linalg.norm(cross, axis=1).sum()
    volume = np.einsum("ij,ij->", x.mean(axis=1), cross) / 6.0  # divergence theorem
    np.testing.assert_allclose(area, 2 * (0.3 * 0.2 + 0.3 * 0.004 + 0.2 * 0.004), rtol=1e-12)
    np.testing.assert_allclose(volume, 0.3 * 0.2 * 0.004, rtol=1e-12)

    scene = build_scene(cm, model, times, qs, "plate")
    data = scene.data
    doc = data["bodies"][0]
    assert doc["kind"] == "fe" and doc["points"] == len(surface.nodes)
    assert len(unpacked(doc["triangles"])) == len(surface.triangles) == 4 * 2 * (
        6 * 4 + 6 * 1 + 4 * 1) * 2
    eta = unpacked(data["feCoordinates"])
    rel, el = unpacked(data["relative"]), unpacked(data["markerElastic"])
    local, modes = unpacked(doc["local"]), unpacked(doc["modes"])
    for f in range(3):
        for scale in (1.0, 30.0):
            def marker(k, f=f, scale=scale):
                return _document_marker(data, el, k, f, scale)
            pose = (marker(doc["markerP"]) @ _pose(rel[f, 0, :9], rel[f, 0, 9:])
                    @ np.linalg.inv(marker(doc["markerO"])))
            e = eta[f, doc["coordinateFirst"]: doc["coordinateFirst"] + doc["nf"]]
            drawn = (local + scale * (modes @ e).reshape(-1, 3)) @ pose[:3, :3].T + pose[:3, 3]
            want, ws = _fe_truth(model, cm, times[f], qs[f], scale, surface.nodes)
            assert np.abs(drawn - want).max() < 10 * FLOAT32, (f, scale)
            # the tip interface's marker: its reference point moved with the interface
            tip = pose @ marker(doc["markerSlots"]["tip"])
            rows = body.node_rows(model.marker("plate", "tip").node)
            point = np.array(model.marker("plate", "tip").position)
            want_tip = ws.r[0] + ws.rot[0] @ (point + scale * rows[:3] @ qs[f, 1:])
            assert np.abs(tip[:3, 3] - want_tip).max() < 10 * FLOAT32, (f, scale)
    lo, hi = np.array(data["bounds"])
    every = np.vstack([_fe_truth(model, cm, times[f], qs[f], 1.0, surface.nodes)[0]
                       for f in range(3)])
    assert np.all(every >= lo - 1e-12) and np.all(every <= hi + 1e-12)
    assert 0.3 < data["size"] < 0.4  # the plate's diagonal, not the default 1 m
    largest = max(np.linalg.norm((surface.modes @ q[1:]).reshape(-1, 3), axis=1).max()
                  for q in qs)
    assert scene.scale.largest == pytest.approx(largest, rel=1e-12)
    assert scene.scale.scale > 1.0
    ranges = {f["key"]: f["range"] for f in data["fields"]}
    assert ranges["displacement"] == pytest.approx(largest, rel=1e-12)  # the colour map's


def test_an_fe_body_without_cells_is_its_nodes_as_dots():
    model, cm, pts, _, times, qs = _fe_plate(cells=False)
    scene = build_scene(cm, model, times, qs, "plate")
    doc = scene.data["bodies"][0]
    assert doc["kind"] == "fe" and doc["points"] == len(pts)
    assert unpacked(doc["triangles"]).size == 0
    # nodes 2 mm apart through the thickness, 25 mm in the plane: a 200th of the diagonal
    diagonal = np.linalg.norm([0.3, 0.2, 0.004])
    assert doc["pointRadius"] == pytest.approx(0.005 * diagonal, rel=1e-12)


@browser
def test_the_page_draws_an_fe_body_where_it_is(chromium, tmp_path):
    """The plate in the page: every drawn surface node where the kinematics and the
    basis put it (x1 and x30), the plate's blue on the pixels where it is; without
    cells its nodes as dots, where they are."""
    from flexmbs.viewer.fe_surface import fe_surface
    from flexmbs.viewer.page import write_html
    page, errors = chromium
    for cells in (True, False):
        model, cm, pts, tets, times, qs = _fe_plate(cells)
        scene = build_scene(cm, model, times, qs, "plate")
        nodes = np.arange(len(pts))
        if cells:
            nodes = fe_surface(model.bodies["plate"]).nodes
        out = write_html(scene, tmp_path / f"plate{cells}.html", {"panels": False})
        _open(page, errors, out.as_uri())
        assert page.evaluate("flexmbsViewer.count('fe')") == 1
        for f in (1, 2):
            page.evaluate(f"flexmbsViewer.seek({float(times[f])!r})")
            for scale in (1.0, 30.0):
                page.evaluate(f"flexmbsViewer.setScale({scale})")
                drawn = np.reshape(page.evaluate("flexmbsViewer.drawnFePoints('plate')"), (-1, 3))
                want, _ = _fe_truth(model, cm, times[f], qs[f], scale, nodes)
                assert np.abs(drawn - want).max() < 10 * FLOAT32, (cells, f, scale)
        # the frame of the largest bend, seen from above
        f = int(np.argmax([np.abs(fe_surface(model.bodies["plate"]).modes @ q[1:]).max()
                           for q in qs]))
        page.evaluate(f"flexmbsViewer.setScale(1); flexmbsViewer.seek({float(times[f])!r})")
        page.evaluate("flexmbsViewer.setView('xy')")
        want, _ = _fe_truth(model, cm, times[f], qs[f], 1.0, nodes)
        bend = np.linalg.norm(want - _fe_truth(model, cm, times[f], qs[f], 0.0, nodes)[0], axis=1)
        if cells:  # inside the top triangles, off the elements' edges drawn over them
            surface = fe_surface(model.bodies["plate"])
            top = surface.triangles[(surface.local[surface.triangles, 2] > 0.0).all(axis=1)]
            want, bend = want[top].mean(axis=1), bend[top].mean(axis=1)
        every = max(1, len(want) // 40)
        want, bend = want[::every], bend[::every] / scene.data["fields"][-1]["range"]
        pixels = [np.round(page.evaluate(f"flexmbsViewer.project({p.tolist()})")).astype(int)
                  for p in want]
        image = _screenshot(page, tmp_path / f"plate{cells}.png")
        blue = sum(image[y, x, 2] > image[y, x, 0] + 40 and image[y, x, 2] > image[y, x, 1] + 10
                   for x, y in pixels)  # the flexible bodies' blue
        assert blue > (0.9 if cells else 0.5) * len(pixels)
        # coloured by the length of Phi eta: grey to red, no longer the bodies' blue
        page.evaluate("flexmbsViewer.setField('displacement')")
        image = _screenshot(page, tmp_path / f"plate{cells}_d.png")
        still = sum(image[y, x, 2] > image[y, x, 0] + 40 for x, y in pixels)
        warm = [int(image[y, x, 0]) - int(image[y, x, 2]) for x, y in pixels]
        assert still <= 0.05 * len(pixels) and max(warm) > 20, (still, warm)
        assert np.corrcoef(bend, warm)[0, 1] > 0.8, cells  # redder where it bends more
        assert errors == []


def test_the_view_of_an_fe_run_replays_its_elastic_coordinates(tmp_path):
    """`flexmbs view` of a run of the shipped plate written elsewhere (its mesh found
    where the run found it): a frame per output time, the plate's eta of each."""
    pytest.importorskip("skfem")
    out = tmp_path / "plate.h5"
    assert main(["run", str(ROOT / "data" / "models" / "fe_plate.toml"), "-o", str(out),
                 "-q", "--set", "solver.t_end=0.05"]) == 0
    result = open_result(out)
    scene = scene_of_result(result)
    plate = scene.data["bodies"][0]
    assert plate["kind"] == "fe" and plate["nf"] == 6 and len(plate["markerSlots"]) == 2
    columns = [result.coordinate_names.index(f"plate.mode{k}") for k in range(1, 7)]
    eta = unpacked(scene.data["feCoordinates"])
    assert eta.shape == (len(result.time), 6)
    np.testing.assert_allclose(eta, result.q[:, columns], rtol=1e-6, atol=1e-12)
    assert np.abs(eta[-1]).max() > 0  # it bends under gravity
    assert main(["view", str(out), "--html", str(tmp_path / "plate.html")]) == 0


ARM_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="link1">
    <inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
      <inertia ixx="0.01" iyy="0.05" izz="0.05" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="link2">
    <inertial><origin xyz="0 0 0.1"/><mass value="1.0"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="2.0" effort="30.0" velocity="3.0"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="link1"/><child link="link2"/><origin xyz="0.4 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="10.0" velocity="3.0"/>
  </joint>
</robot>
"""


def _two_masses_beam(tip_mass, mid_mass, outer_diameter):
    """A cantilevered round-tube beam (1 m, 4 elements) with node masses at its middle
    and its tip, and markers at both ends."""
    from flexmbs.elements.materials import material
    from flexmbs.elements.sections import round_tube_section
    from flexmbs.model import Model
    m = Model("masses", gravity=(0.0, 0.0, -9.81))
    m.add_beam_body("beam", points=[(0, 0, 0), (1, 0, 0)], elements=4,
                    section=round_tube_section(outer_diameter, 0.1 * outer_diameter),
                    material=material(7e10, 2700.0, shear_modulus=2.6e10),
                    node_masses={-1: tip_mass, 2: mid_mass})
    m.add_marker("beam", "tip", node=-1)
    m.add_joint("hinge", "revolute", parent="ground", child="beam", axis=(0, 0, 1))
    return m


@pytest.mark.parametrize("diameter, steel", [(0.02, True), (0.2, False)])
def test_node_masses_are_balls_of_one_density(diameter, steel):
    """Every ball's volume is its mass over the scene's one density: steel's where a
    ball stands out of its tube at steel's, else the density at which the heavier
    ball is 1.5 times the tube's radius."""
    from flexmbs.viewer.scene import PAYLOAD_DENSITY, PAYLOAD_SHOWN
    data = scene_of_model(_two_masses_beam(0.4, 0.1, diameter)).data
    density = data["payloadDensity"]
    balls = {b["mass"]: b["radius"] for b in data["bodies"][0]["payloads"]}
    assert sorted(balls) == [0.1, 0.4]
    for mass, radius in balls.items():
        assert 4.0 * np.pi * radius ** 3 / 3.0 == pytest.approx(mass / density, rel=1e-12)
    half = max(data["bodies"][0]["section"]["half"])
    if steel:
        assert density == PAYLOAD_DENSITY and balls[0.4] > half
    else:
        assert density < PAYLOAD_DENSITY
        assert balls[0.4] == pytest.approx(PAYLOAD_SHOWN * half, rel=1e-12)


@browser
def test_a_beam_draws_balls_only_where_mass_is_and_hides_its_markers(chromium, tmp_path):
    """An imported link made a beam (no node mass) draws no ball, its markers are
    bands around the tube that the "markers" toggle hides; a beam with node masses
    draws one ball per mass, of the radius its mass gives at the scene's density."""
    from flexmbs.formats.urdf import load_urdf
    from flexmbs.viewer.page import write_html
    page, errors = chromium
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(ARM_URDF)
    model = load_urdf(urdf, flexible=["link1:x:4"])
    out = write_html(scene_of_model(model), tmp_path / "arm.html")
    _open(page, errors, Path(out).as_uri())
    assert page.evaluate("flexmbsViewer.beamSpheres('link1')") == []
    markers = page.evaluate("flexmbsViewer.shown('marker')")
    assert markers == page.evaluate("flexmbsViewer.count('marker')") >= 1
    page.evaluate("flexmbsViewer.setShow('showMarkers', false)")
    assert page.evaluate("flexmbsViewer.shown('marker')") == 0
    page.evaluate("flexmbsViewer.setShow('showMarkers', true)")
    assert page.evaluate("flexmbsViewer.shown('marker')") == markers
    scene = scene_of_model(_two_masses_beam(0.4, 0.1, 0.2))
    out = write_html(scene, tmp_path / "masses.html")
    _open(page, errors, Path(out).as_uri())
    spheres = page.evaluate("flexmbsViewer.beamSpheres('beam')")
    assert sorted(s["mass"] for s in spheres) == [0.1, 0.4]
    density = scene.data["payloadDensity"]
    for s in spheres:
        assert s["kind"] == "payload"
        assert 4.0 * np.pi * s["radius"] ** 3 / 3.0 == pytest.approx(s["mass"] / density,
                                                                     rel=1e-6)
    assert errors == []
