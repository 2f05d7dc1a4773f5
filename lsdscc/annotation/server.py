"""The local web server of ``multiref lsdscc annotate serve`` and ``annotate browse``.

Standard library only (``http.server.ThreadingHTTPServer``). The page and its assets are
package data (``lsdscc/annotation/web/``): nothing is fetched from outside the loopback address.

Routes (every answer to ``/api/...`` is JSON; every error is ``{"error": message}`` with a
4xx status for the request's fault):

- ``GET /``: the page (``annotate.html`` or ``browse.html``); ``GET /static/NAME``: its assets;
- annotate: ``GET /api/state`` (annotator, progress, query list, where to resume),
  ``GET /api/query/N`` (query N, 0-based, with its candidates and labels),
  ``POST /api/label`` with ``{"changes": [{"row_id", "relevant", "group"}, ...]}``
  (``Content-Type: application/json``; applied all or nothing, then saved; answers
  ``{"progress": {"done", "total"}, "query": the query's new state}``);
- browse: ``GET /api/state`` (the whole document of :mod:`lsdscc.annotation.browse`).

POST bodies must be JSON sent as ``application/json``: a browser cannot send that from
another site without a CORS preflight, which this server never grants. Requests whose
``Host`` is not the address the server listens on (``127.0.0.2:PORT``), or ``localhost:PORT``
on a loopback address, get 403 (DNS rebinding: a page of another site whose name was
re-pointed at this address sends its own name); on a wildcard address (``0.0.0.0``) any IP
literal with the right port is accepted, never a name other than ``localhost``.

Every malformed request gets a 4xx JSON answer, never a dropped connection: ids are ASCII
digits, a ``Content-Length`` must be ASCII digits and at most ``MAX_BODY``, a body nested
over :data:`multiref.util.files.MAX_JSON_DEPTH` levels is refused, a body that does not arrive within
``Handler.timeout`` seconds gets 408. The listen backlog holds ``REQUEST_QUEUE_SIZE``
connections (socketserver's default of 5 reset clients under load).
"""

from __future__ import annotations

import ipaddress
import json
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from multiref.util.errors import UserError

ASSETS = {"annotate.html": "text/html", "browse.html": "text/html", "annotate.js": "text/javascript",
          "browse.js": "text/javascript", "common.js": "text/javascript", "annotate.css": "text/css"}
MAX_BODY = 1 << 20  # 1 MiB: a page's change is a few hundred bytes
LOOPBACK = ("127.0.0.1", "localhost", "::1")
REQUEST_QUEUE_SIZE = 1024  # the listen backlog (the kernel caps it at net.core.somaxconn)
READ_TIMEOUT = 30.0  # seconds a client may take to send a request line, headers or body


def _ip(text: str):
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _host_port(address: str, port: int) -> str:
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def allowed_hosts(address: str, port: int):
    """The ``Host`` header values a server bound to ``(address, port)`` answers (lowercase):
    the address itself with the port (also bare on port 80), plus ``localhost:PORT`` on a
    loopback address; None for a wildcard address (``0.0.0.0``, ``::``), which answers any
    IP literal with the port (DNS rebinding needs a name)."""
    ip = _ip(address)
    if ip is not None and ip.is_unspecified:
        return None
    names = {address.lower()} | ({"localhost"} if (ip is not None and ip.is_loopback) or address == "localhost" else set())
    hosts = {_host_port(name, port) for name in names}
    if port == 80:
        hosts |= {f"[{name}]" if ":" in name else name for name in names}
    return hosts


def host_allowed(host: str, address: str, port: int) -> bool:
    """Whether a request's ``Host`` header (any case) is one the server bound to ``(address, port)`` answers."""
    host = host.strip().lower()
    allowed = allowed_hosts(address, port)
    if allowed is not None:
        return host in allowed
    name, _, given = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    name = name.strip("[]") if name else host.strip("[]")
    if (given or "80") != str(port):
        return False
    return name == "localhost" or _ip(name) is not None


class Server(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` with a listen backlog for many simultaneous clients."""

    request_queue_size = REQUEST_QUEUE_SIZE
    daemon_threads = True


class RequestError(Exception):
    """A request the server refuses: HTTP ``status`` and a message for the JSON body."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def asset(name: str) -> bytes:
    """The bytes of a page asset shipped in ``lsdscc/annotation/web``."""
    return resources.files(__package__).joinpath("web", name).read_bytes()


class Handler(BaseHTTPRequestHandler):
    """Routes of the module docstring; ``self.server.app`` is the session or browse document."""

    server_version = "multiref-annotate"
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT  # socket timeout: a stalled client cannot hold a thread forever

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
        """Answer only requests addressed to the bound address (:func:`host_allowed`): a page of
        another site whose name was re-pointed at this address (DNS rebinding) sends its own name."""
        address, port = self.server.server_address[:2]
        host = (self.headers.get("Host") or "").strip()
        if not host_allowed(host, address, port):
            raise RequestError(HTTPStatus.FORBIDDEN,
                               f"unexpected Host header {host!r}: open the page at {url_of(self.server)}")

    def parse_request(self) -> bool:
        """http.server's parsing, refusing HTTP/0.9 (a request line without a version), whose
        answers have no status line."""
        if not super().parse_request():
            return False
        if self.request_version == "HTTP/0.9":
            self.send_error(HTTPStatus.BAD_REQUEST, "a request line needs an HTTP version (HTTP/0.9 is not served)")
            return False
        return True

    def send_error(self, code, message=None, explain=None):
        """http.server's own errors (a malformed request line, an unknown method, an
        unsupported HTTP version) as JSON too, and as the client's fault: 4xx."""
        if code == HTTPStatus.NOT_IMPLEMENTED:  # an unknown method
            code = HTTPStatus.METHOD_NOT_ALLOWED
        elif code >= 500:  # 505 HTTP version not supported: a malformed request line for us
            code = HTTPStatus.BAD_REQUEST
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # the request line was not understood: answer with a status line
            self.request_version = "HTTP/1.1"
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
            if not (number.isascii() and number.isdigit()) or len(number) > 9:  # str.isdigit takes the superscript two
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
        from multiref.util.files import parse_json

        length = (self.headers.get("Content-Length") or "").strip()
        if not (length.isascii() and length.isdigit()):
            raise RequestError(HTTPStatus.LENGTH_REQUIRED, "a Content-Length header (a number of bytes) is required")
        if len(length) > 9 or int(length) > MAX_BODY:
            raise RequestError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body of {length[:20]} bytes is over {MAX_BODY}")
        try:
            raw = self.rfile.read(int(length))
        except TimeoutError:
            raise RequestError(HTTPStatus.REQUEST_TIMEOUT, f"the body did not arrive within {self.timeout:g} s") from None
        if len(raw) < int(length):
            raise RequestError(HTTPStatus.BAD_REQUEST, f"the body ended after {len(raw)} of {length} bytes")
        try:
            return parse_json(raw.decode("utf-8"), "request body")
        except ValueError as exc:  # bad UTF-8, bad JSON, nested too deep, a number too long
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
    """The annotation page over an :class:`lsdscc.annotation.session.AnnotationSession`."""

    page = "annotate"

    def __init__(self, session):
        self.session = session

    def state(self) -> dict:
        return self.session.overview()


class BrowseApp:
    """The read-only page over a :func:`lsdscc.annotation.browse.browse_document`."""

    page = "browse"

    def __init__(self, document: dict):
        self.document = document

    def state(self) -> dict:
        return self.document


def make_server(app, host: str = "127.0.0.1", port: int = 0, verbose: bool = False) -> Server:
    """A bound (not yet serving) server for ``app``; ``port`` 0 picks a free port."""
    try:
        server = Server((host, port), Handler)
    except (OSError, OverflowError) as exc:  # OverflowError: a port over 65535
        raise UserError(f"cannot listen on {host}:{port} ({getattr(exc, 'strerror', None) or exc})") from None
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
