"""Reading user files with errors that name the file and the line.

Every reader raises :class:`multiref.errors.UserError` for a user mistake (a missing file,
an empty file, bad JSON, a record of the wrong shape), with ``path:line`` in the message.
"""

from __future__ import annotations

import json
import os
from typing import Iterator

from multiref.errors import UserError, where


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
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{where(path, number)}: invalid JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(record, dict):
                raise UserError(f"{where(path, number)}: expected a JSON object, got {type(record).__name__}")
            count += 1
            yield number, record
    if count == 0 and not allow_empty:
        raise UserError(f"{path}: file has no records")


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
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where(path, exc.lineno)}: invalid JSON ({exc.msg} at column {exc.colno})") from None
