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
from flexmbs.viewer.browser import chromium_path
from flexmbs.viewer.scene import build_scene, unpacked
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


def _drawn_points(data, f, scale):
    """The beams' centre lines (global axes) as the page builds them from the document:
    the chain T_i = T_p M_P J_i M_O^-1 with the elastic terms magnified `scale` times
    (written out here as the page's script does it, from the document alone)."""
    rel, el = unpacked(data["relative"]), unpacked(data["markerElastic"])
    defl = unpacked(data["deflection"])

    def marker(k):
        m = data["markers"][k]
        rot, pos = np.reshape(m["rotation"], (3, 3)), np.array(m["position"])
        if m["elastic"] >= 0:
            e = el[f, m["elastic"]].astype(float)
            rot, pos = _cardan(scale * e[3:]) @ rot, pos + scale * e[:3]
        return _pose(rot, pos)

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
