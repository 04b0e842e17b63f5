"""`flexmbs view` serves the viewer's page on this machine (127.0.0.1 only) with the
standard library's HTTP server: `/` the page, `/scene.json` the scene alone (and no
icon, without an error); a live view (flexmbs.viewer.live) adds routes of its own.
Nothing is fetched from elsewhere; the server answers until it is stopped (Ctrl-C).
Connections are kept alive (HTTP/1.1), so that a page that asks again and again is
answered on one connection by one thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .page import page_html
from .scene import Scene

__all__ = ["ViewerServer", "LOCALHOST", "Route", "MAX_POST_BYTES"]

LOCALHOST = "127.0.0.1"
MAX_POST_BYTES = 65536
"""The largest body a route takes (a POST of the page's inputs is a few bytes)."""

Route = Callable[[bytes | None], tuple[bytes, str]]
"""A route of its own: the request's body (None for a GET) to (the answer, its type);
ValueError answers 400 with its text."""


class ViewerServer:
    """The page of `scene` served at http://127.0.0.1:PORT/ (`port` 0: a free one).
    `start()` serves from a thread, `serve_forever()` in the caller's; `url` is where;
    `stop()` ends it. Usable as a context manager (start, then stop). `routes`:
    {path: Route} answered beside the page, to GET and to POST."""

    def __init__(
        self,
        scene: Scene,
        port: int = 0,
        options: dict[str, Any] | None = None,
        routes: Mapping[str, Route] | None = None,
    ):
        page = page_html(scene, options).encode("utf-8")
        data = scene.to_json().encode("utf-8")
        extra = dict(routes or {})

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 - the standard library's name
                path = self.path.split("?", 1)[0]
                if path in ("/", "/index.html"):
                    self._send(page, "text/html; charset=utf-8")
                elif path == "/scene.json":
                    self._send(data, "application/json")
                elif path in extra:
                    self._route(extra[path], None)
                elif path == "/favicon.ico":
                    self._send(b"", "image/x-icon", 204)
                else:
                    self._send(b"not found", "text/plain", 404)

            def do_POST(self) -> None:  # noqa: N802
                path = self.path.split("?", 1)[0]
                size = int(self.headers.get("Content-Length") or 0)
                if path not in extra or not 0 <= size <= MAX_POST_BYTES:
                    self.close_connection = True
                    self._send(b"not found", "text/plain", 404)
                    return
                self._route(extra[path], self.rfile.read(size))

            def _route(self, route: Route, body: bytes | None) -> None:
                try:
                    answer, kind = route(body)
                except ValueError as exc:
                    self._send(str(exc).encode("utf-8"), "text/plain; charset=utf-8", 400)
                    return
                self._send(answer, kind)

            def _send(self, body: bytes, kind: str, status: int = 200) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the page went away meanwhile

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
