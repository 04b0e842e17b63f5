"""`flexmbs animate`: the deformed mechanism moving in 3-D, as a GIF or an MP4, or one
frame of it as a PNG.

Each frame draws the shape of flexmbs.io.deformed_shape at an output time: the beams'
centre lines (blue), the rigid bodies as lines from their frames to their markers
(grey), the joints (black points), with the time in the title. `scale` magnifies the
elastic displacements (the title says so); by default it is chosen from the run's
largest elastic displacement and the arm's size (flexmbs.analysis.deflection_scale),
so that the bend shows. The axes are equal and fixed over the whole animation and fit
the extent of every frame: the views along an axis (xy, xz, yz) are plain 2-D
drawings in those two axes, the iso view a 3-D box shaped like the arm's extent, with
a few round ticks per axis so that their labels stay apart. matplotlib draws with its
Agg canvas (no pyplot); GIF is written with Pillow (matplotlib's own dependency), MP4
with imageio and imageio-ffmpeg (the `viz` extra).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FlexmbsError
from ..io.deformed_shape import DeformedShape
from ..io.results import Result, open_result
from ..model.description import Model
from .deflection_scale import DeflectionScale, arm_size, readable_scale
from .vtk_export import shape_of_result

__all__ = [
    "animate_result",
    "frame_times",
    "VIEWS",
    "ANIMATION_FORMATS",
    "MAX_FRAMES",
    "default_scale",
]

VIEWS = {"iso": (25.0, -60.0), "xy": (90.0, -90.0), "xz": (0.0, -90.0), "yz": (0.0, 0.0)}
"""(elevation, azimuth) in degrees of each view; "xz" looks along -y."""
PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}
"""The two axes drawn by each view along an axis."""
TICKS = 4  # at most this many ticks per axis: labels that do not run into each other
MARGIN = 0.06  # of the arm's extent, around it
ANIMATION_FORMATS = ("gif", "mp4", "png")
FIGURE_SIZE = (6.4, 4.8)  # inches: 640 x 480 pixels at DPI, even for the video codec
DPI = 100
MAX_FRAMES = 5000
"""The most frames an animation draws (200 s of film at 25 frames a second; each
frame is drawn by matplotlib, some 0.1 s)."""
BEAM_COLOR, RIGID_COLOR, JOINT_COLOR = "tab:blue", "0.45", "black"


def frame_times(time: NDArray[np.float64], fps: float, speed: float, max_frames: int) -> list[int]:
    """The output rows to draw: one per 1 / fps s of film, which shows `speed` s of
    simulated time per second, at most `max_frames` (spread evenly), always the first
    and the last row."""
    if len(time) == 0:
        return []
    span = float(time[-1] - time[0])
    wanted = int(min(max_frames, max(2, np.floor(span / speed * fps) + 1)))
    targets = np.linspace(time[0], time[-1], wanted)
    rows = np.unique(np.clip(np.searchsorted(time, targets), 0, len(time) - 1))
    return [int(k) for k in rows]


def _limits(points: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """(low, high) of a box holding every point of every frame, with a margin; an
    axis along which the arm does not extend gets a tenth of the largest extent."""
    low, high = points.reshape(-1, 3).min(axis=0), points.reshape(-1, 3).max(axis=0)
    extent = high - low
    largest = max(float(extent.max()), 1e-6)
    pad = np.maximum(extent, 0.1 * largest) * MARGIN + np.maximum(0.1 * largest - extent, 0) / 2
    return low - pad, high + pad


def default_scale(
    shape: DeformedShape,
    frames: Sequence[NDArray],
    rows_q: Sequence[NDArray],
    times: Sequence[float],
) -> DeflectionScale:
    """The scale of flexmbs.analysis.deflection_scale for these frames: the largest
    elastic displacement over them against the arm's size."""
    largest = 0.0
    rows = [slice(p.first_point, p.first_point + len(p.local)) for p in shape.beams]
    for t, q in zip(times, rows_q):
        d = shape.frame(t, q).point_data["elastic_displacement"]
        for r in rows:
            if r.stop > r.start:
                largest = max(largest, float(np.linalg.norm(d[r], axis=1).max()))
    return readable_scale(largest, arm_size(np.array(frames)))


def _draw(ax: Any, shape: DeformedShape, points: NDArray[np.float64], plane: tuple | None) -> None:
    beams = {p.body for p in shape.beams}
    axes = plane if plane is not None else (0, 1, 2)
    for cell, body in zip(shape.lines, shape.line_body):
        xyz = points[cell]
        flexible = body in beams
        ax.plot(
            *(xyz[:, k] for k in axes),
            color=BEAM_COLOR if flexible else RIGID_COLOR,
            linewidth=2.5 if flexible else 4.0,
            solid_capstyle="round",
        )
    joints = points[shape.vertices]
    if len(joints):
        extra = {} if plane is not None else {"depthshade": False}
        ax.scatter(*(joints[:, k] for k in axes), color=JOINT_COLOR, s=18, zorder=3, **extra)


def _rendered(
    shape: DeformedShape,
    frames: Sequence[NDArray],
    times: Sequence[float],
    view: str,
    scale: float,
    title: str,
) -> list[NDArray[np.uint8]]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    low, high = _limits(np.array(frames))
    plane = PLANES.get(view)
    names = ("x (m)", "y (m)", "z (m)")
    images = []
    for points, t in zip(frames, times):
        fig = Figure(figsize=FIGURE_SIZE, dpi=DPI)
        canvas = FigureCanvasAgg(fig)
        if plane is not None:
            a, b = plane
            ax = fig.add_subplot()
            _draw(ax, shape, points, plane)
            ax.set_xlim(low[a], high[a])
            ax.set_ylim(low[b], high[b])
            ax.set_aspect("equal", adjustable="box")
            ax.set_xlabel(names[a])
            ax.set_ylabel(names[b])
            ax.grid(True, color="0.9")
            setters: tuple[Any, ...] = (ax.xaxis, ax.yaxis)
        else:
            ax = fig.add_subplot(projection="3d")
            _draw(ax, shape, points, None)
            for k, set_limits in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)):
                set_limits(low[k], high[k])
            ax.set_box_aspect(tuple(high - low), zoom=0.85)
            elevation, azimuth = VIEWS[view]
            ax.view_init(elev=elevation, azim=azimuth)
            for k, axis in enumerate((ax.xaxis, ax.yaxis, ax.zaxis)):
                axis.set_label_text(names[k])
                axis.labelpad = 6
            ax.tick_params(labelsize=8, pad=1)
            setters = (ax.xaxis, ax.yaxis, ax.zaxis)
        extent = high - low
        for axis, k in zip(setters, plane or (0, 1, 2)):
            share = float(extent[k] / extent.max())  # fewer ticks on a short axis
            axis.set_major_locator(MaxNLocator(max(1, round(TICKS * share)), min_n_ticks=2))
        magnified = f", deflection x{scale:g}" if scale != 1.0 else ""
        ax.set_title(f"{title}   t = {t:.3f} s{magnified}")
        fig.tight_layout()
        canvas.draw()
        images.append(np.asarray(canvas.buffer_rgba())[:, :, :3].copy())
    return images


def _write(images: list[NDArray[np.uint8]], path: Path, fps: float) -> None:
    suffix = path.suffix.lstrip(".").lower()
    if suffix == "png":
        from PIL import Image

        Image.fromarray(images[0]).save(path)
        return
    if suffix == "gif":
        from PIL import Image

        first, *rest = [Image.fromarray(im) for im in images]
        first.save(
            path, save_all=True, append_images=rest, duration=int(round(1000.0 / fps)), loop=0
        )
        return
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401 - the writer's backend; missing is an input error
    except ImportError:
        raise FlexmbsError(
            f"{path}: an MP4 needs imageio and imageio-ffmpeg (pip install "
            "'flexmbs[viz]'); a .gif needs nothing more"
        ) from None
    writer: Any = imageio.get_writer(
        path, fps=fps, codec="libx264", quality=7, macro_block_size=1
    )  # an ffmpeg writer; imageio's stubs give its base class
    with writer:
        for im in images:
            writer.append_data(im)


def animate_result(
    result: str | os.PathLike[str] | Result,
    path: str | os.PathLike[str],
    scale: float | None = None,
    view: str = "iso",
    fps: float = 25.0,
    speed: float = 1.0,
    max_frames: int = 250,
    model: Model | None = None,
    at: float | None = None,
    log: Callable[[str], None] | None = None,
) -> tuple[Path, int]:
    """Write the animation of `result` (a path or a Result) to `path` (.gif or .mp4):
    `scale` magnifies the elastic displacements (None: the scale that makes the run's
    largest deflection a tenth of the arm's size, `default_scale`, said to `log`),
    `view` one of VIEWS, `fps` frames per second of film, `speed` simulated seconds
    per second of film, at most `max_frames` frames. A .png is one frame: the output
    time nearest `at` (s; None: the last). Returns (path, frames)."""
    out = Path(path)
    suffix = out.suffix.lstrip(".").lower()
    if suffix not in ANIMATION_FORMATS:
        raise FlexmbsError(
            f'{out}: unknown animation format "{suffix}"; expected a file name ending '
            "in .gif or .mp4 (or .png for one frame)"
        )
    if view not in VIEWS:
        raise FlexmbsError(f'unknown view "{view}"; expected one of {", ".join(VIEWS)}')
    if not 1 <= max_frames <= MAX_FRAMES:
        raise FlexmbsError(
            f"--max-frames {max_frames}: expected 1 .. {MAX_FRAMES} frames (each is drawn "
            "in some 0.1 s; a longer film: a lower --fps or a higher --speed)"
        )
    if at is not None and suffix != "png":
        raise FlexmbsError(
            f"{out}: --at is the time of one frame, written as a .png; an animation "
            "shows the whole run"
        )
    if at is not None and not np.isfinite(at):
        raise FlexmbsError(f"--at {at}: expected a finite time (s)")
    if not isinstance(result, Result):
        result = open_result(result)
    if len(result.time) == 0:
        raise FlexmbsError(f"{result.path}: the file holds no output row to animate")
    if at is not None and not result.time[0] <= at <= result.time[-1]:
        raise FlexmbsError(
            f"{result.path}: --at {at:g} s lies outside the outputs of the run, "
            f"{result.time[0]:g} .. {result.time[-1]:g} s"
        )
    shape = shape_of_result(result, model)
    if suffix == "png":
        target = result.time[-1] if at is None else at
        rows = [int(np.argmin(np.abs(result.time - target)))]
    else:
        rows = frame_times(result.time, fps, speed, max_frames)
    times = [float(result.time[k]) for k in rows]
    if scale is None:  # from the whole run, so that a single frame shares it
        every = np.linspace(0, len(result.time) - 1, min(len(result.time), 400)).astype(int)
        sample = sorted({int(k) for k in every} | set(rows))
        plain = [shape.frame(float(result.time[k]), result.q[k]).points for k in sample]
        chosen = default_scale(
            shape, plain, [result.q[k] for k in sample], [float(result.time[k]) for k in sample]
        )
        scale = chosen.scale
        if log is not None:
            log(chosen.describe())
    frames = [shape.frame(float(result.time[k]), result.q[k], scale).points for k in rows]
    title = Path(result.path).stem
    _write(_rendered(shape, frames, times, view, scale, title), out, fps)
    return out, len(rows)
