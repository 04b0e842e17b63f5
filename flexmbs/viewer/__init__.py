"""The interactive 3-D viewer of results and models, in the browser (`flexmbs view`).

The scene of a run or a model (flexmbs.viewer.scene: beams as tubes of their section
along their deformed centre lines, finite-element bodies as the deformed outer surface
of their mesh (flexmbs.viewer.fe_surface), rigid bodies as their frames and markers,
URDF meshes, joints, payloads, sensors) is drawn by the page of flexmbs.viewer.page with
three.js, bundled in the package: the same page is served locally (`flexmbs view`),
written as one self-contained HTML file (`--html`), shown in a notebook
(`flexmbs.show`) and photographed in a headless Chromium (`--screenshot`).
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import FlexmbsError
from .page import notebook_html, page_html, write_html
from .scene import Scene
from .sources import scene_of, scene_of_model, scene_of_result

__all__ = [
    "show",
    "SceneView",
    "scene_of",
    "scene_of_result",
    "scene_of_model",
    "page_html",
    "write_html",
    "Scene",
]


class SceneView:
    """A scene displayed inline by Jupyter (its `_repr_html_`: the viewer's page in an
    iframe, self-contained, so that it stays in the saved notebook and in the
    documentation built from it). `save(path)` writes the page as an HTML file."""

    def __init__(self, scene: Scene, height: int = 560, options: dict[str, Any] | None = None):
        self.scene = scene
        self.height = height
        self.options = dict(options or {})

    def _repr_html_(self) -> str:
        return notebook_html(self.scene, self.height, self.options)

    def save(self, path: str | os.PathLike[str]) -> os.PathLike[str]:
        """Write the standalone page to `path`."""
        return write_html(self.scene, path, self.options)

    def __repr__(self) -> str:
        d = self.scene.data
        return (
            f"<flexmbs viewer of {d['title']!r}: {len(d['bodies'])} bodies, "
            f"{self.scene.frames} frames, {self.scene.scale.describe()}>"
        )


def show(
    what: Any,
    *,
    height: int = 560,
    urdf: str | os.PathLike[str] | None = None,
    scale: float | None = None,
    max_frames: int | None = None,
    model: Any = None,
    live: bool = False,
    inputs: dict[str, tuple[float, float]] | None = None,
    browser: bool = True,
    port: int = 0,
    **options: Any,
) -> Any:
    """The viewer of `what` for a notebook: a Result or a result file (the run), a
    Model or a model file (its initial state). `urdf`: the robot's URDF for its meshes
    (default: the one an imported model names); `scale`: the starting deflection
    scale (default: chosen from the run's largest deflection); `model`: the Model of a
    result written from Python; `options`: the viewer's starting view ("iso", "xz",
    "xy", "yz"), time (s), field (a colour map: "outer_fibre_strain", "N", "M_y", ...)
    and sensor (a name to plot).

    live=True, `what` a flexmbs.Simulator: the live view (flexmbs.viewer.live.LiveView)
    served on this machine and opened in the browser (`browser`), following the loop
    as it steps; `inputs` {port: (low, high)}: a slider for each; `port` the server's
    (0: a free one)."""
    from .scene import DEFAULT_MAX_FRAMES

    if live:
        from ..control.simulator import Simulator
        from .live import LiveView

        if not isinstance(what, Simulator):
            raise FlexmbsError(
                f"live=True shows a flexmbs.Simulator while it steps, got {type(what).__name__}"
            )
        return LiveView(what, inputs, port=port, browser=browser, scale=scale, options=options)

    scene = scene_of(
        what,
        urdf=urdf,
        max_frames=max_frames or DEFAULT_MAX_FRAMES,
        scale=scale,
        model=model,
    )
    return SceneView(scene, height, options)
