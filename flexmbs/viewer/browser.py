"""The viewer's page in a headless Chromium, driven by Playwright: screenshots
(`flexmbs view ... --screenshot`, the documentation's gallery) and the page's own
answers (where a point is drawn, on which pixel).

Playwright comes with the `view` extra; the browser is the system's Chromium (Debian's
package `chromium`: `apt-get install chromium`), or the one FLEXMBS_CHROMIUM names.
Playwright's own browser downloads are not used.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import FlexmbsError
from .page import write_html
from .scene import Scene

__all__ = ["chromium_path", "browser_page", "screenshot", "CHROMIUM_FLAGS", "READY_TIMEOUT_MS"]

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
)
READY_TIMEOUT_MS = 60_000
_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def chromium_path() -> str | None:
    """The Chromium to drive: FLEXMBS_CHROMIUM, else the first of chromium,
    chromium-browser, google-chrome on PATH; None when there is none."""
    named = os.environ.get("FLEXMBS_CHROMIUM")
    if named:
        return named if Path(named).is_file() else None
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@contextmanager
def browser_page(size: tuple[int, int] = (960, 600)) -> Iterator[tuple[Any, list[str]]]:
    """(a Playwright page of `size` CSS pixels, the list its console errors and page
    errors go to) in a fresh headless Chromium, closed on exit."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise FlexmbsError("a screenshot needs playwright: pip install 'flexmbs[view]'") from None
    executable = chromium_path()
    if executable is None:
        raise FlexmbsError(
            "a screenshot needs Chromium: install it (Debian: apt-get install chromium) "
            "or name it in FLEXMBS_CHROMIUM"
        )
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="flexmbs-chromium-") as profile:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile,
                executable_path=executable,
                headless=True,
                args=list(CHROMIUM_FLAGS),
                viewport={"width": size[0], "height": size[1]},
                device_scale_factor=1,
            )
            try:
                page = context.new_page()
                page.on(
                    "console",
                    lambda m: errors.append(m.text) if m.type == "error" else None,
                )
                page.on("pageerror", lambda e: errors.append(str(e)))
                yield page, errors
            finally:
                context.close()


def wait_ready(page: Any) -> None:
    """Wait until the viewer has drawn its first frame."""
    page.wait_for_function(
        "window.flexmbsViewer && window.flexmbsViewer.ready === true",
        timeout=READY_TIMEOUT_MS,
    )


def screenshot(
    scene: Scene,
    path: str | os.PathLike[str],
    size: tuple[int, int] = (960, 600),
    options: dict[str, Any] | None = None,
) -> Path:
    """A PNG of `scene` as the viewer draws it (`options` as for page_html; the
    controls are hidden unless options says panels: true)."""
    settings = {"panels": False, **(options or {})}
    out = Path(path)
    with tempfile.TemporaryDirectory(prefix="flexmbs-view-") as folder:
        page_file = write_html(scene, Path(folder) / "scene.html", settings)
        with browser_page(size) as (page, errors):
            page.goto(page_file.as_uri())
            wait_ready(page)
            page.screenshot(path=os.fspath(out))
            if errors:
                raise FlexmbsError(f"the viewer's page reported: {errors[0]}")
    return out
