r"""The viewer's cost of a finite-element body (docs/guides/viewer.md): plates of
quadratic tetrahedra of a few thousand nodes against H8 (eight bodies, two beams) in
the same run.

    .venv/bin/python benchmarks/bench_viewer_fe.py --json benchmarks/results/viewer_fe.json
    .venv/bin/python benchmarks/bench_viewer_fe.py --table benchmarks/results/viewer_fe.json

Each model at 600 frames of random states (joint angles, and elastic coordinates of a
plate's size): the time `build_scene` takes (median of --repeat), the page's size, and
in a headless Chromium (Playwright, software rendering) the time to show one frame
(`seek` and `render`, the median over 60 frames). The plate: 600 x 400 x 20 mm,
nx x ny x nz bricks of six 10-node tetrahedra, hinged at its edge x = 0, 10
fixed-interface modes.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import begin, finish, log  # noqa: E402

FRAMES = 600
MESHES = ((12, 8, 1), (24, 16, 2))


def plate(divisions):
    import scipy.sparse as sp

    import flexmbs
    from flexmbs.elements.fe_body import FeData
    from flexmbs.elements.solid import box_mesh, solid_matrices
    pts, tets = box_mesh(0.6, 0.4, 0.02, divisions)
    k, ms = solid_matrices(pts, tets, 7.0e10, 0.33, 2700.0)
    data = FeData(pts, np.arange(1, len(pts) + 1), 3, k, sp.kron(ms, sp.identity(3), "csr"),
                  cells=(("tetra10", tets),))
    model = flexmbs.Model("plate", gravity=(0.0, 0.0, -9.81))
    model.add_fe_body("plate", data=data, modes=10,
                      interfaces={"hinge": {"box": [[-1e-3, -1, -1], [1e-3, 1, 1]]}})
    model.add_marker("plate", "hinge", interface="hinge")
    model.add_joint("hinge", "revolute", "ground", "plate", child_marker="hinge",
                    axis=(0, 1, 0))
    return model, len(pts)


def states(cm, elastic):
    rng = np.random.default_rng(1)
    qs = np.tile(cm.q0, (FRAMES, 1))
    names = list(cm.coordinate_names)
    flexible = np.array(["." in n for n in names])
    qs[:, ~flexible] += 0.3 * rng.standard_normal((FRAMES, int((~flexible).sum())))
    qs[:, flexible] = elastic * rng.standard_normal((FRAMES, int(flexible.sum())))
    return np.linspace(0.0, 1.0, FRAMES), qs


def measure(name, model, nodes, page, repeat):
    from flexmbs import compile_model
    from flexmbs.viewer.browser import wait_ready
    from flexmbs.viewer.page import write_html
    from flexmbs.viewer.scene import build_scene
    cm = compile_model(model)
    times, qs = states(cm, 1e-4)
    build_scene(cm, model, times[:2], qs[:2], name)  # kernels loaded
    spent = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        scene = build_scene(cm, model, times, qs, name)
        spent.append(time.perf_counter() - t0)
    with tempfile.TemporaryDirectory() as tmp:
        out = write_html(scene, Path(tmp) / "page.html", {"panels": False})
        size = os.path.getsize(out)
        page.goto(out.as_uri())
        wait_ready(page)
        frame_ms = page.evaluate("""() => {
            const t = [];
            for (let f = 0; f < 60; f++) {
              const a = performance.now();
              flexmbsViewer.seek(f / 599); flexmbsViewer.render();
              t.push(performance.now() - a);
            }
            t.sort((x, y) => x - y);
            return t[30];
        }""")
    fe = [b for b in scene.data["bodies"] if b["kind"] == "fe"]
    row = {"model": name, "nodes": nodes, "surface_nodes": sum(b["points"] for b in fe),
           "build_s": statistics.median(spent), "page_mb": size / 1e6, "frame_ms": frame_ms}
    log(f"{name}: {row}")
    return row


def study(a):
    from flexmbs.model.library import huang_eight_link
    from flexmbs.viewer.browser import browser_page
    rows = []
    with browser_page((900, 600)) as (page, errors):
        peer = measure("H8", huang_eight_link(), 0, page, a.repeat)
        for divisions in MESHES:
            model, nodes = plate(divisions)
            row = measure(f"plate {'x'.join(map(str, divisions))}", model, nodes, page,
                          a.repeat)
            row["build_ratio"] = row["build_s"] / peer["build_s"]
            row["frame_ratio"] = row["frame_ms"] / peer["frame_ms"]
            rows.append(row)
        assert not errors, errors
    return {"frames": FRAMES, "peer": peer, "rows": rows}


def table(results):
    p = results["peer"]
    lines = [
        f"| model ({results['frames']} frames) | nodes (on the surface) | build_scene (s) "
        "| page (MB) | a frame in the page (ms) |",
        "|---|---|---|---|---|",
        f"| H8 (the peer) | - | {p['build_s']:.2f} | {p['page_mb']:.2f} | "
        f"{p['frame_ms']:.1f} |",
    ]
    for r in results["rows"]:
        lines.append(
            f"| {r['model']} | {r['nodes']} ({r['surface_nodes']}) | {r['build_s']:.2f} "
            f"(x{r['build_ratio']:.1f}) | {r['page_mb']:.2f} | {r['frame_ms']:.1f} "
            f"(x{r['frame_ratio']:.1f}) |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    started = begin(p, table)
    if started is None:
        return
    a, info, start = started
    results = study(a)
    results["machine"] = info
    finish(a, results, start, table)


if __name__ == "__main__":
    main()
