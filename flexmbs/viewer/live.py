"""The live view of a model stepped from Python (flexmbs.Simulator): the viewer's page,
served on this machine, follows the run while the loop steps, with sliders for the
input ports the loop leaves to the user.

    sim = flexmbs.Simulator("examples/rotary_flexible_link.toml")
    view = flexmbs.show(sim, live=True, inputs={"servo.voltage": (-6.0, 6.0)})
    while sim.time < 10.0:
        sim.step(1e-3)                      # the page moves the ruler as it goes
    view.close()

The page asks for the newest frame (`/frame.json`) each time it has drawn the last
one, so at the rate the display draws (requestAnimationFrame) and never faster than
it draws; the server answers with the frame of the loop's last step
(Simulator.snapshot: the loop is not told, and does nothing for the view), computed in
the server's thread by the scene's own kinematics (flexmbs.viewer.scene.SceneFrames,
the same as a result file's frames). Python runs one thread at a time, so that work
is taken from the loop: the server answers a frame no sooner than its thread's CPU
time per frame divided by LOOP_SHARE after the last, so that the frames take at most
that share of the loop's time; a small model gets the display's rate, a large one
fewer frames. A slider posts its value (`/inputs`), which Simulator.hold applies from
the next step on (a port that the loop's own `step(inputs=...)` sets takes the loop's
value). The view's figures on the loop it slows are in docs/guides/viewer.md.
"""

from __future__ import annotations

import json
import math
import threading
import time
import webbrowser
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FlexmbsError
from .scene import Scene, SceneFrames, build_scene
from .server import ViewerServer
from .sources import _meshes

__all__ = ["LiveView", "live_view", "LOOP_SHARE", "IDLE_WAIT"]

LOOP_SHARE = 0.05
"""The share of the loop's time the frames may take (their CPU time over the time
between them)."""

IDLE_WAIT = 0.25
"""s: how long a request waits for a step newer than the last frame it was given,
before it answers with the same one (the loop paused or ended)."""


def _scene_of_simulator(sim: Any, scale: float | None) -> Scene:
    """The scene of the simulator's model at its current state: one frame, that the
    live view fills again and again."""
    model = sim.model
    t, q = sim.snapshot()
    warnings: list[str] = []
    text = getattr(model, "source_text", "") or ""
    near = Path(model.source_path).parent if model.source_path else None
    meshes = _meshes(model, None, text, near, warnings)
    scene = build_scene(
        sim.compiled,
        model,
        np.array([t]),
        q.reshape(1, -1),
        f"{model.name} (live)",
        meshes=meshes,
        scale=scale,
        source=model.source_path or "",
    )
    scene.warnings += warnings
    _room_to_turn(scene, sim.compiled, t, q)
    k = scene.data["scale"]["value"] if scale is not None else 1.0
    scene.data["scale"]["value"] = k
    scene.data["scale"]["describe"] = (
        f"deflection x{k:g}: the run's largest bend is not known ahead (the slider sets it)"
    )
    return scene


def _room_to_turn(scene: Scene, cm: Any, t: float, q: np.ndarray) -> None:
    """The scene's bounds (which the camera frames) widened in x and y to the circle
    about the first body's origin that holds them: the arm turns about its base while
    the view is open."""
    from ..kinematics.recursive import forward_kinematics

    ws = cm.new_workspace()
    forward_kinematics(cm.arrays, ws, t, q, np.zeros(cm.nq))
    centre = np.asarray(ws.r[0], float)
    lo, hi = (np.asarray(b, float) for b in scene.data["bounds"])
    corners = np.array([[x, y] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])])
    reach = float(np.linalg.norm(corners - centre[:2], axis=1).max())
    lo[:2] = np.minimum(lo[:2], centre[:2] - reach)
    hi[:2] = np.maximum(hi[:2], centre[:2] + reach)
    scene.data["bounds"] = [lo.tolist(), hi.tolist()]


def _slider_documents(sim: Any, inputs: dict[str, tuple[float, float]]) -> list[dict]:
    """The page's sliders: name, unit, range and starting value of each port."""
    ports = {port.name: port for port in sim.ports}
    out = []
    for name, bounds in inputs.items():
        if name not in ports:
            known = ", ".join(sorted(ports)) or "none"
            raise FlexmbsError(f"live view: no input port {name!r} (the model's: {known})")
        try:
            low, high = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise FlexmbsError(
                f"live view: input {name!r}: expected (low, high), got {bounds!r}"
            ) from None
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise FlexmbsError(
                f"live view: input {name!r}: expected finite low < high, got {bounds!r}"
            )
        held = sim.inputs.get(name)
        value = min(max(held if held is not None else 0.5 * (low + high), low), high)
        out.append(
            {"name": name, "unit": ports[name].unit, "low": low, "high": high, "value": value}
        )
    return out


class LiveView:
    """The page of `sim` (a flexmbs.Simulator) served at `url`, following its steps
    (module text); `inputs` {port: (low, high)} the sliders; `port` the server's
    (0: a free one); `browser`: open the page in the system's browser. `frames`:
    the frames answered; `frame_cpu`: their mean CPU time (s) in the server's thread
    (the kinematics and the JSON of a frame).
    `close()` stops the server (the page then waits for another)."""

    def __init__(
        self,
        sim: Any,
        inputs: dict[str, tuple[float, float]] | None = None,
        *,
        port: int = 0,
        browser: bool = True,
        scale: float | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.sim = sim
        self.scene = _scene_of_simulator(sim, scale)
        assert self.scene.moving is not None
        self._frames: SceneFrames = self.scene.moving
        sliders = _slider_documents(sim, dict(inputs or {}))
        live = {"frame": "frame.json", "inputs": "inputs", "sliders": sliders}
        settings = {"view": "iso", **(options or {}), "live": live}
        self._lock = threading.Lock()
        self._thread_cpu = threading.local()
        self._next = 0.0  # perf_counter time before which no frame is answered
        self._last_time: float | None = None
        self.frames = 0
        self._cpu = 0.0
        routes = {"/frame.json": self._frame_route, "/inputs": self._inputs_route}
        self.server = ViewerServer(self.scene, port, settings, routes).start()
        if browser:
            webbrowser.open(self.url)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def frame_cpu(self) -> float:
        return self._cpu / self.frames if self.frames else 0.0

    def _spent(self) -> float:
        """CPU time (s) of this thread since its last request began (a connection the
        page keeps is served by one thread): the last frame's work, its answer and
        this request's reading; 0 on a thread's first request."""
        now = time.thread_time()
        last = getattr(self._thread_cpu, "last", None)
        self._thread_cpu.last = now
        return 0.0 if last is None else now - last

    def _frame_route(self, body: bytes | None) -> tuple[bytes, str]:
        """The frame of the loop's last step, as JSON: t (s), and the moving arrays
        of the scene's one frame. The next is answered no sooner than this one's CPU
        time (from _spent, or its own work on a new connection) over LOOP_SHARE."""
        spent = self._spent()
        with self._lock:
            wait = self._next - time.perf_counter()
            if wait > 0.0:
                time.sleep(wait)
            deadline = time.perf_counter() + IDLE_WAIT
            t, q = self.sim.snapshot()
            while t == self._last_time and time.perf_counter() < deadline:
                time.sleep(0.02)
                t, q = self.sim.snapshot()
            self._last_time = t
            work = time.thread_time()
            self._frames.fill(0, t, q)
            doc = {"t": t, **self._frames.document()}
            answer = json.dumps(doc, separators=(",", ":")).encode("utf-8")
            work = time.thread_time() - work
            self._cpu += work
            self._next = time.perf_counter() + max(spent, work) / LOOP_SHARE
            self.frames += 1
        return answer, "application/json"

    def _inputs_route(self, body: bytes | None) -> tuple[bytes, str]:
        """A slider's value: {port: value} held from the next step on."""
        if body is None:
            return json.dumps(self.sim.inputs).encode("utf-8"), "application/json"
        try:
            values = json.loads(body)
        except ValueError:
            raise ValueError("expected a JSON object {port: value}") from None
        if not isinstance(values, dict):
            raise ValueError("expected a JSON object {port: value}")
        try:
            self.sim.hold(values)
        except FlexmbsError as exc:
            raise ValueError(str(exc)) from None
        return b"{}", "application/json"

    def close(self) -> None:
        """Stop serving the page."""
        self.server.stop()

    def __enter__(self) -> LiveView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<flexmbs live view of {self.sim.model.name!r} at {self.url}>"


def live_view(
    sim: Any,
    inputs: dict[str, tuple[float, float]] | None = None,
    **options: Any,
) -> LiveView:
    """The live view of `sim` (LiveView, its arguments)."""
    return LiveView(sim, inputs, **options)
