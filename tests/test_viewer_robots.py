"""Robots described by others, one link made a beam, drawn in a real headless Chromium
with their meshes: the six arms of benchmarks/bench_urdf_robots.py (a hobby arm's
printed parts, industrial and collaborative arms, a humanoid's arm with its gripper),
each imported with `--flexible`, viewed as `flexmbs view MODEL --html` writes it: every
body and every mesh the scene holds is an object of the page, no mesh falls back to
the collision shapes, the beam is drawn, no console error, the picture is not blank.
One robot in the default suite, the other five marked slow (about 15 s together)."""

import sysconfig
from pathlib import Path

import numpy as np
import pytest

from flexmbs.cli import main
from flexmbs.viewer import scene_of_model
from flexmbs.viewer.browser import chromium_path

ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
SIX = {  # name -> (URDF under ROBOTS, the link made a beam)
    "so100": ("so_arm_description/urdf/so100.urdf", "upper_arm"),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", "forearm_link"),
    "panda": ("panda_description/urdf/panda.urdf", "panda_link2"),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", "link2"),
    "z1": ("z1_description/urdf/z1.urdf", "link02"),
    "talos_arm": ("talos_data/robots/talos_left_arm.urdf", "arm_left_4_link"),
}
DRAWN = 0.05  # the least fraction of the picture's pixels that differ from the background


def _browser_problem():
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (the view extra)"
    if chromium_path() is None:
        return "no Chromium on this machine (Debian: apt-get install chromium)"
    if not ROBOTS.is_dir():
        return "example-robot-data is not installed (the test extra)"
    return None


pytestmark = pytest.mark.skipif(_browser_problem() is not None, reason=str(_browser_problem()))


@pytest.fixture(scope="module")
def chromium():
    from flexmbs.viewer.browser import browser_page

    with browser_page((900, 600)) as (page, errors):
        yield page, errors


def _drawn_fraction(path):
    """The fraction of the picture's pixels that differ from the background (the colour
    at the top of its middle column)."""
    from PIL import Image

    image = np.asarray(Image.open(path).convert("RGB")).astype(int)
    background = image[2, image.shape[1] // 2]
    return (np.abs(image - background).sum(axis=2) > 30).mean()


def _robot_is_drawn(chromium, tmp_path, name):
    from flexmbs.viewer.browser import wait_ready

    page, errors = chromium
    urdf, link = SIX[name]
    toml = tmp_path / f"{name}.toml"
    assert main(["import-urdf", str(ROBOTS / urdf), "-o", str(toml), "--flexible", link]) == 0
    scene = scene_of_model(toml)
    assert len(scene.data["meshes"]) > 0 and scene.warnings == [], scene.warnings
    out = tmp_path / f"{name}.html"
    assert main(["view", str(toml), "--html", str(out)]) == 0
    errors.clear()
    page.goto(out.as_uri())
    wait_ready(page)
    bodies = page.evaluate("flexmbsViewer.bodyObjects()")
    assert len(bodies) == len(scene.data["bodies"]) and link in bodies
    assert page.evaluate("flexmbsViewer.count('mesh')") == len(scene.data["meshes"])
    assert page.evaluate(f"flexmbsViewer.drawnBeamPoint({link!r}, -1)") is not None
    page.evaluate("flexmbsViewer.render()")
    assert page.evaluate("flexmbsViewer.meshesInView()"), "the view cuts the robot off"
    page.screenshot(path=str(tmp_path / f"{name}.png"))
    assert _drawn_fraction(tmp_path / f"{name}.png") > DRAWN
    assert errors == []


def test_a_robot_with_a_beam_is_drawn_with_its_meshes(chromium, tmp_path):
    _robot_is_drawn(chromium, tmp_path, "talos_arm")


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in SIX if n != "talos_arm"])
def test_six_robots_with_a_beam_are_drawn_with_their_meshes(chromium, tmp_path, name):
    _robot_is_drawn(chromium, tmp_path, name)
