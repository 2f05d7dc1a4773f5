"""The local web server of ``multiref lsdscc annotate serve`` and ``annotate browse``.

Standard library only (``http.server.ThreadingHTTPServer``). The page and its assets are
package data (``lsdscc/web/``): nothing is fetched from outside the loopback address.

Routes (every answer to ``/api/...`` is JSON; every error is ``{"error": message}`` with a
4xx status for the request's fault):

- ``GET /``: the page (``annotate.html`` or ``browse.html``); ``GET /static/NAME``: its assets;
- annotate: ``GET /api/state`` (annotator, progress, query list, where to resume),
  ``GET /api/query/N`` (query N, 0-based, with its candidates and labels),
  ``POST /api/label`` with ``{"changes": [{"row_id", "relevant", "group"}, ...]}``
  (``Content-Type: application/json``; applied all or nothing, then saved; answers
  ``{"progress": {"done", "total"}, "query": the query's new state}``);
- browse: ``GET /api/state`` (the whole document of :mod:`lsdscc.annotate_browse`).

POST bodies must be JSON sent as ``application/json``: a browser cannot send that from
another site without a CORS preflight, which this server never grants. On a loopback
address, requests whose ``Host`` is not a loopback name get 403 (DNS rebinding).
"""

from __future__ import annotations

import json
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from multiref.errors import UserError

ASSETS = {"annotate.html": "text/html", "browse.html": "text/html", "annotate.js": "text/javascript",
          "browse.js": "text/javascript", "common.js": "text/javascript", "annotate.css": "text/css"}
MAX_BODY = 1 << 20  # 1 MiB: a page's change is a few hundred bytes
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class RequestError(Exception):
    """A request the server refuses: HTTP ``status`` and a message for the JSON body."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def asset(name: str) -> bytes:
    """The bytes of a page asset shipped in ``lsdscc/web``."""
    return resources.files("lsdscc").joinpath("web", name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    """Routes of the module docstring; ``self.server.app`` is the session or browse document."""

    server_version = "multiref-annotate"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        if self.server.verbose:
            sys.stderr.write("[annotate] " + (format % args) + "\n")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        # after an error the request body may be unread: close rather than parse it as a request
        self.close_connection = self.close_connection or status >= 400
        self.send_response(status)
        self.send_header("Content-Type", content_type + "; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value) -> None:
        self._send(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), "application/json")

    def _check_host(self) -> None:
        """On a loopback address, answer only requests addressed to it: a page of another site
        whose name was re-pointed at 127.0.0.1 (DNS rebinding) sends its own name."""
        if self.server.server_address[0] not in ("127.0.0.1", "::1"):
            return
        host = (self.headers.get("Host") or "").strip().lower()
        name = host[1:].split("]")[0] if host.startswith("[") else host.rsplit(":", 1)[0]
        if name not in LOOPBACK:
            raise RequestError(HTTPStatus.FORBIDDEN, f"unexpected Host header {host!r}: open the page at 127.0.0.1")

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a malformed request line, an unknown method) as JSON too."""
        self.close_connection = True
        self._json(code, {"error": message or HTTPStatus(code).phrase})

    def _handle(self, route) -> None:
        try:
            self._check_host()
            route()
        except RequestError as exc:
            self._json(exc.status, {"error": str(exc)})
        except UserError as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except OSError as exc:  # the CSV could not be written: the server's fault, said plainly
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"could not save: {exc}"})

    def do_GET(self):  # noqa: N802 - http.server's name
        self._handle(self._get)

    def do_HEAD(self):  # noqa: N802
        self._handle(self._get)

    def do_POST(self):  # noqa: N802
        self._handle(self._post)

    def _not_allowed(self):
        raise RequestError(HTTPStatus.METHOD_NOT_ALLOWED, f"{self.command} is not allowed on {self.path}")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = lambda self: self._handle(self._not_allowed)  # noqa: E731

    def _get(self) -> None:
        path = self.path.split("?", 1)[0]
        app = self.server.app
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, asset(f"{app.page}.html"), "text/html")
        elif path.startswith("/static/") and path[len("/static/"):] in ASSETS:
            name = path[len("/static/"):]
            self._send(HTTPStatus.OK, asset(name), ASSETS[name])
        elif path == "/favicon.ico":  # browsers ask for it; there is none
            self.send_response(HTTPStatus.NO_CONTENT)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/api/state":
            self._json(HTTPStatus.OK, app.state())
        elif path.startswith("/api/query/") and app.page == "annotate":
            number = path[len("/api/query/"):]
            if not number.isdigit():
                raise RequestError(HTTPStatus.BAD_REQUEST, f"query index must be a number, got {number!r}")
            index = int(number)
            if index >= len(app.session.queries):
                raise RequestError(HTTPStatus.NOT_FOUND, f"no query {index} (there are {len(app.session.queries)})")
            self._json(HTTPStatus.OK, app.session.query_view(index))
        elif path == "/api/label":
            self._not_allowed()
        else:
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such page: {path}")

    def _read_json(self):
        if self.headers.get("Content-Type", "").split(";")[0].strip().lower() != "application/json":
            raise RequestError(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the body as Content-Type: application/json")
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise RequestError(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header is required")
        if int(length) > MAX_BODY:
            raise RequestError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body of {length} bytes is over {MAX_BODY}")
        raw = self.rfile.read(int(length))
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RequestError(HTTPStatus.BAD_REQUEST, f"body is not valid JSON ({exc})") from None

    def _post(self) -> None:
        path = self.path.split("?", 1)[0]
        if path != "/api/label" or self.server.app.page != "annotate":
            if path in ("/", "/api/state") or path.startswith(("/static/", "/api/query/")):
                self._not_allowed()
            raise RequestError(HTTPStatus.NOT_FOUND, f"no such page: {path}")
        body = self._read_json()
        if not isinstance(body, dict) or "changes" not in body:
            raise RequestError(HTTPStatus.BAD_REQUEST, "body must be an object {\"changes\": [...]}")
        session = self.server.app.session
        progress = session.apply(body["changes"])
        query_ids = {c["row_id"].rsplit("#", 1)[0] for c in body["changes"]}
        index = next(i for i, q in enumerate(session.queries) if q["id"] in query_ids)
        self._json(HTTPStatus.OK, {"progress": progress, "query": session.query_view(index)})


class AnnotateApp:
    """The annotation page over an :class:`lsdscc.annotate_session.AnnotationSession`."""

    page = "annotate"

    def __init__(self, session):
        self.session = session

    def state(self) -> dict:
        return self.session.overview()


class BrowseApp:
    """The read-only page over a :func:`lsdscc.annotate_browse.browse_document`."""

    page = "browse"

    def __init__(self, document: dict):
        self.document = document

    def state(self) -> dict:
        return self.document


def make_server(app, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> ThreadingHTTPServer:
    """A bound (not yet serving) server for ``app``; ``port`` 0 picks a free port."""
    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    server.daemon_threads = True
    server.app = app
    server.verbose = verbose
    return server


def url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def serve(app, host: str = "127.0.0.1", port: int = 0, verbose: bool = False, on_stop=None) -> int:
    """Serve ``app`` until Ctrl-C (SIGINT) or SIGTERM; print the URL first. Returns 0 on a
    clean stop, after ``on_stop()``."""
    import signal
    import threading

    server = make_server(app, host, port, verbose)
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main else None
    if host not in LOOPBACK:
        print(f"[annotate] warning: listening on {host}: anyone who can reach this address can read the data"
              + (" and change the labels" if app.page == "annotate" else ""), file=sys.stderr)
    print(f"serving {url_of(server)} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if main:
            signal.signal(signal.SIGTERM, previous)
        if on_stop is not None:
            on_stop()
    return 0
