"""`flexmbs view` serves the viewer's page on this machine (127.0.0.1 only) with the
standard library's HTTP server: `/` the page, `/scene.json` the scene alone (and no
icon, without an error). Nothing
is fetched from elsewhere; the server answers until it is stopped (Ctrl-C)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .page import page_html
from .scene import Scene

__all__ = ["ViewerServer", "LOCALHOST"]

LOCALHOST = "127.0.0.1"


class ViewerServer:
    """The page of `scene` served at http://127.0.0.1:PORT/ (`port` 0: a free one).
    `start()` serves from a thread, `serve_forever()` in the caller's; `url` is where;
    `stop()` ends it. Usable as a context manager (start, then stop)."""

    def __init__(self, scene: Scene, port: int = 0, options: dict[str, Any] | None = None):
        page = page_html(scene, options).encode("utf-8")
        data = scene.to_json().encode("utf-8")

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                path = self.path.split("?", 1)[0]
                if path in ("/", "/index.html"):
                    self._send(page, "text/html; charset=utf-8")
                elif path == "/scene.json":
                    self._send(data, "application/json")
                elif path == "/favicon.ico":
                    self._send(b"", "image/x-icon", 204)
                else:
                    self._send(b"not found", "text/plain", 404)

            def _send(self, body: bytes, kind: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # quiet: the command line says where the page is

        self._httpd = ThreadingHTTPServer((LOCALHOST, port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{LOCALHOST}:{self._httpd.server_address[1]}/"

    def start(self) -> ViewerServer:
        """Serve from a background thread; returns self."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted."""
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def __enter__(self) -> ViewerServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
