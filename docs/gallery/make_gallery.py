"""Make the pictures of the documentation's gallery (docs/gallery.md) and of the
viewer's guide (docs/guides/viewer.md) with the viewer itself, in a headless Chromium:

    .venv/bin/python docs/gallery/make_gallery.py          # every picture
    .venv/bin/python docs/gallery/make_gallery.py spin_up  # the pictures named

Each shipped model is drawn at its initial state (`flexmbs view MODEL.toml`); the
guide's pictures are H8's run at 1.5 s, the UR5 of example-robot-data imported with
its meshes, posed by its joints' initial values (the test extra installs it), and the
live view of the rotary flexible link 0.8 s into a run stepped from Python, its slider
at the voltage the loop held.
"""

import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from flexmbs.viewer import scene_of_model, scene_of_result
from flexmbs.viewer.browser import browser_page, screenshot, wait_ready

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "data" / "models"
HERE = Path(__file__).resolve().parent
SIZE = (640, 400)
VIEWS = {"chain_planar_4": "xz", "four_bar": "xy", "four_bar_flexible": "xy",
         "slider_crank_flexible": "xy", "rolling_disk_straight": "iso", "gear_pair": "xz"}
UR5 = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data"
       / "robots/ur_description/urdf/ur5_robot.urdf")


def flexmbs(*args):
    subprocess.run([sys.executable, "-m", "flexmbs", *args], check=True)


def gallery(names):
    for model in sorted(MODELS.glob("*.toml")):
        if names and model.stem not in names:
            continue
        scene = scene_of_model(model)
        out = screenshot(scene, HERE / f"{model.stem}.png", SIZE,
                         {"view": VIEWS.get(model.stem, "iso")})
        print(f"{out.relative_to(ROOT)}: {scene.scale.describe()}")


def guide(names):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not names or "h8_viewer" in names:
            flexmbs("run", str(MODELS / "huang_eight_link.toml"), "-o", str(tmp / "h8.h5"),
                    "-q", "--set", "solver.t_end=2")
            scene = scene_of_result(tmp / "h8.h5")
            screenshot(scene, ROOT / "docs" / "h8_viewer.png", (1100, 680),
                       {"time": 1.5, "field": "M_z", "panels": True,
                        "sensor": "tip2_deflection"})
        if not names or "ur5_viewer" in names:  # posed by its joints' initial values
            flexmbs("import-urdf", str(UR5), "-o", str(tmp / "ur5.toml"))
            pose = {"shoulder_pan_joint": 0.6, "shoulder_lift_joint": -1.1,
                    "elbow_joint": 1.5, "wrist_1_joint": -1.9, "wrist_2_joint": -1.57}
            flexmbs("view", str(tmp / "ur5.toml"), "--screenshot",
                    str(ROOT / "docs" / "ur5_viewer.png"), "--size", "1000x620",
                    *[f"--set=joints.{k}.initial={v}" for k, v in pose.items()])

        if not names or "live_view" in names:
            live_view(ROOT / "docs" / "live_view.png")


def live_view(out):
    """The live view of examples/rotary_flexible_link.toml under a voltage held from
    its slider (2 V), 0.8 s into the run, the panel open."""
    import os

    import flexmbs as package

    os.chdir(ROOT)  # the page names the model file as given
    sim = package.Simulator("examples/rotary_flexible_link.toml")
    with package.show(sim, live=True, browser=False, inputs={"servo.voltage": (-6.0, 6.0)},
                      scale=10.0) as view, browser_page((1000, 620)) as (page, errors):
        page.goto(view.url)
        wait_ready(page)
        page.evaluate("flexmbsViewer.setInput('servo.voltage', 2)")
        time.sleep(0.5)
        while sim.time < 0.8 - 1e-9:
            sim.step(1e-3)
        page.wait_for_function(f"flexmbsViewer.time() === {sim.time!r}")
        page.evaluate("flexmbsViewer.render()")
        page.screenshot(path=str(out))
        if errors:
            raise RuntimeError(errors[0])
    sim.close()
    print(f"{out.relative_to(ROOT)}: t = {sim.time:.3f} s")


if __name__ == "__main__":
    wanted = set(sys.argv[1:])
    gallery(wanted)
    guide(wanted)
