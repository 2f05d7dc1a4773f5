"""Reading user files with errors that name the file and the line.

Every reader raises :class:`multiref.util.errors.UserError` for a user mistake (a missing file,
an empty file, bad JSON, a record of the wrong shape), with ``path:line`` in the message.
"""

from __future__ import annotations

import json
import os
import re
from typing import Iterator

from multiref.util.errors import UserError, where
from multiref.util.location import is_remote

#: the deepest nesting of arrays and objects a JSON input may have (references need 3 or 4;
#: deeper input raised RecursionError inside the parser, a crash instead of an error message)
MAX_JSON_DEPTH = 100
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_LONG_NUMBER = re.compile(r"\d{4000}")


def _json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside strings (linear time, at C speed)."""
    from itertools import accumulate

    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = brackets.translate({ord("["): "+", ord("{"): "+", ord("]"): "-", ord("}"): "-"})
    return max(accumulate(1 if c == "+" else -1 for c in steps), default=0)


def _too_deep_at(text: str, limit: int) -> int:
    """Offset of the first bracket that opens level ``limit + 1`` (strings skipped)."""
    depth = 0
    for match in re.finditer(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return match.start()
        elif token in "]}":
            depth -= 1
    return 0


def check_json_depth(text: str, path: str, first_line: int = 1, limit: int = MAX_JSON_DEPTH) -> None:
    """UserError ``path:line: JSON nested deeper than LIMIT levels`` when arrays and objects
    outside strings nest deeper than ``limit``; ``first_line`` is the line ``text`` starts on.
    Checked before any parser (``json`` or ``orjson``) sees the text, so the bound is the
    same whatever the parser and the depth of the caller's stack."""
    if text.count("[") + text.count("{") <= limit or _json_depth(text) <= limit:
        return
    offset = _too_deep_at(text, limit)
    line = first_line + text.count("\n", 0, offset)
    column = offset - text.rfind("\n", 0, offset)
    raise UserError(f"{where(path, line)}: JSON nested deeper than {limit} levels (column {column})")


def parse_json(text: str, path: str, first_line: int = 1, **options):
    """``json.loads(text, **options)`` with bounded nesting (:func:`check_json_depth`) and a
    ``path:line`` UserError for what the parser refuses without a position (a number of over
    4,300 digits; a RecursionError). ``json.JSONDecodeError`` is left to the caller, which
    knows how to word it."""
    check_json_depth(text, path, first_line)
    try:
        return json.loads(text, **options)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise UserError(f"{where(path, first_line)}: JSON nested too deeply") from None
    except ValueError as exc:  # int() of a too long number: ValueError with no position
        found = _LONG_NUMBER.search(text)
        line = first_line + text.count("\n", 0, found.start()) if found else first_line
        raise UserError(f"{where(path, line)}: invalid JSON ({str(exc).split(';')[0]})") from None


def require_file(path: str, what: str = "input file") -> str:
    """Return ``path`` if it is a readable file; else raise a one-line UserError."""
    if not os.path.exists(path):
        raise UserError(f"{what} not found: {path}")
    if os.path.isdir(path):
        raise UserError(f"{what} is a directory, expected a file: {path}")
    return path


def read_jsonl(path: str, what: str = "JSON lines file", allow_empty: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` for each non-blank line of a JSON lines file.

    Raises UserError on a missing file, invalid UTF-8, invalid JSON, a line that is not a
    JSON object, or (unless ``allow_empty``) a file with no records.
    """
    require_file(path, what)
    count = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UserError(f"{where(path, number)}: not valid UTF-8 ({exc.reason})") from None
            if not line.strip():
                continue
            try:
                record = parse_json(line, path, number)
            except json.JSONDecodeError as exc:
                raise UserError(f"{where(path, number)}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(record, dict):
                raise UserError(f"{where(path, number)}: expected a JSON object, got {type(record).__name__}")
            count += 1
            yield number, record
    if count == 0 and not allow_empty:
        raise UserError(f"{path}: file has no records")


def read_csv(path: str, what: str = "CSV file", delimiter: str | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)`` of a CSV (TSV when ``path`` ends in ``.tsv`` or
    ``delimiter`` is a tab) read with ``csv.DictReader``. Every fault is a one-line UserError
    naming ``path:line``: invalid UTF-8, a malformed row, a cell longer than the csv module's
    limit (131,072 characters), no header."""
    import csv

    require_file(path, what)
    delimiter = delimiter or ("\t" if path.lower().endswith(".tsv") else ",")
    kind = "TSV" if delimiter == "\t" else "CSV"
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        try:
            if not reader.fieldnames:
                raise UserError(f"{path}: file is empty")
            for record in reader:
                yield reader.line_num, record
        except UnicodeDecodeError as exc:
            raise UserError(f"{where(path, reader.line_num + 1)}: not valid UTF-8 ({exc.reason}); expected a "
                            f"{kind} text file") from None
        except csv.Error as exc:  # e.g. "field larger than field limit (131072)", raised before line_num counts the line
            raise UserError(f"{where(path, reader.line_num + 1)}: not a valid {kind} row ({str(exc)[:120]})") from None


def finite_number(raw, path: str, line: int, what: str) -> float:
    """``float(raw)`` when it is a finite number; else a UserError naming ``path:line`` and
    ``what`` (NaN, inf, ``1e400`` and 4,300-digit numbers are refused, never averaged)."""
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        raise UserError(f"{where(path, line)}: {what} {str(raw)[:40]!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise UserError(f"{where(path, line)}: {what} {str(raw)[:40]!r} is not a finite number")
    return value


def read_text(path: str, what: str = "input file") -> str:
    """The whole file as text; UserError if missing, not UTF-8 or empty."""
    require_file(path, what)
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    if not text.strip():
        raise UserError(f"{path}: file is empty")
    return text


def read_json(path: str, what: str = "JSON file"):
    """Load a whole JSON document, with a file-and-line error on bad JSON."""
    text = read_text(path, what)
    try:
        return parse_json(text, path)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where(path, exc.lineno)}: invalid JSON ({exc.msg} at column {exc.colno})") from None


# -- remote paths ---------------------------------------------------------------------------

REMOTE_TIMEOUT = 5.0
_ENDPOINTS = {"gs": ("storage.googleapis.com", 443), "s3": ("s3.amazonaws.com", 443)}


def remote_endpoint(url: str):
    """``(host, port)`` that reading ``url`` contacts first, or None for a local path.

    gs:// honours ``STORAGE_EMULATOR_HOST`` as the Google Cloud Storage client does.
    """
    from urllib.parse import urlsplit

    if not is_remote(url):
        return None
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "gs" and os.environ.get("STORAGE_EMULATOR_HOST"):
        emulator = urlsplit(os.environ["STORAGE_EMULATOR_HOST"])
        return emulator.hostname, emulator.port or (443 if emulator.scheme == "https" else 80)
    if scheme in _ENDPOINTS:
        return _ENDPOINTS[scheme]
    if scheme in ("http", "https") and parts.hostname:
        return parts.hostname, parts.port or (443 if scheme == "https" else 80)
    return None


def _connect(endpoint, timeout: float):
    """None if a TCP connection to ``endpoint`` opens within ``timeout`` s, else the reason."""
    import socket
    import threading

    result = ["timed out"]

    def attempt():
        try:
            socket.create_connection(endpoint, timeout=timeout).close()
            result[0] = None
        except OSError as exc:
            result[0] = exc.strerror or str(exc) or type(exc).__name__

    thread = threading.Thread(target=attempt, daemon=True)  # name resolution has no timeout of its own
    thread.start()
    thread.join(timeout + 0.5)
    return result[0]


def check_reachable(urls, timeout: float = REMOTE_TIMEOUT) -> None:
    """UserError naming the first URL whose service cannot be reached within ``timeout`` s.

    Run before a pipeline starts, so an offline machine fails in seconds instead of after
    the cloud client's retries.
    """
    checked = {}
    for url in urls:
        endpoint = remote_endpoint(url)
        if endpoint is None:
            continue
        if endpoint not in checked:
            checked[endpoint] = _connect(endpoint, timeout)
        if checked[endpoint] is not None:
            host, port = endpoint
            raise UserError(f"cannot reach {url}: {host}:{port} did not answer ({checked[endpoint]}); "
                            "check the network, or copy the data to a local path")


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def check_remote_paths(args) -> None:
    """:func:`check_reachable` for every URL among parsed command-line arguments.

    Skipped for a Beam ``--dry_run`` (it only builds the job graph, offline).
    """
    beam = list(getattr(args, "beam_args", None) or [])
    if any(a == "--dry_run" or (a.startswith("--dry_run=") and a.split("=", 1)[1].lower() != "false") for a in beam):
        return
    urls = [s for name, value in sorted(vars(args).items()) if not name.startswith("_") and name != "func"
            for s in _strings(value) if is_remote(s)]
    urls += [a.split("=", 1)[-1] for a in beam if is_remote(a)]
    check_reachable(urls)


def require_writable(path: str, what: str = "output") -> str:
    """Return ``path`` if it can be created or overwritten; else a one-line UserError.

    Checked before work starts: the nearest existing ancestor must be a writable folder.
    Remote paths (``gs://``...) are left to :func:`check_remote_paths`.
    """
    if not path or is_remote(path):
        return path
    target = os.path.abspath(path)
    existing = target
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if existing != target and not os.path.isdir(existing):
        raise UserError(f"{what} {path}: cannot be written, {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK):
        raise UserError(f"{what} {path}: no permission to write {existing}")
    return path


def meminfo(field: str) -> int | None:
    """A field of Linux's ``/proc/meminfo`` in bytes (``MemTotal``, ``MemAvailable``), None when
    the file or the field cannot be read (another system)."""
    key = field.encode("ascii") + b":"
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
