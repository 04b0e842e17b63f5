"""The viewer's page: one self-contained HTML file that holds three.js, the viewer's
script and style, and the scene, so that it opens from disk, from a local server or
inside a notebook's output alike, with no network."""

from __future__ import annotations

import html
import json
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from .scene import Scene

__all__ = ["page_html", "write_html", "notebook_html", "THREE_VERSION"]

THREE_VERSION = "0.187.0"  # flexmbs/viewer/static/three.min.js: three.js of this release


@cache
def _static(name: str) -> str:
    return (resources.files("flexmbs.viewer") / "static" / name).read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot end the <script> element it is put in."""
    return text.replace("</", "<\\/")


def page_html(scene: Scene, options: dict[str, Any] | None = None) -> str:
    """The page of `scene`; `options` the viewer's starting settings (view, time,
    scale, panels, field, sensors), as documented in docs/guides/viewer.md."""
    title = html.escape(f"{scene.data['title']} - flexmbs")
    settings = json.dumps(options or {}, separators=(",", ":"))
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>{title}</title>\n"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<style>\n{_static('viewer.css')}</style>\n</head>\n<body>\n"
        "<div id='flexmbs-viewer'></div>\n"
        f"<script>\n{_script_safe(_static('three.min.js'))}\n</script>\n"
        "<script type='application/json' id='flexmbs-scene'>"
        f"{_script_safe(scene.to_json())}</script>\n"
        "<script type='application/json' id='flexmbs-options'>"
        f"{_script_safe(settings)}</script>\n"
        f"<script>\n{_script_safe(_static('viewer.js'))}\n</script>\n"
        "</body>\n</html>\n"
    )


def write_html(
    scene: Scene, path: str | os.PathLike[str], options: dict[str, Any] | None = None
) -> Path:
    """Write the page of `scene` to `path`; returns the path."""
    out = Path(path)
    out.write_text(page_html(scene, options), encoding="utf-8")
    return out


def notebook_html(scene: Scene, height: int = 560, options: dict[str, Any] | None = None) -> str:
    """The page in an iframe (its own document, so that its script and style stay in
    it), for a notebook's output."""
    page = html.escape(page_html(scene, options), quote=True)
    return (
        f'<iframe srcdoc="{page}" style=\'width: 100%; height: {int(height)}px; '
        "border: 1px solid #d0d4da; border-radius: 4px' "
        "title='flexmbs viewer'></iframe>"
    )
