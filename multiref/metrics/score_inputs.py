"""System outputs as researchers have them, for ``multiref score -H`` (alias ``-i``).

A system is a file path, or ``-`` for standard input. Its bytes are UTF-8, with or without a
byte-order mark. Two forms, told apart by the content:

- **JSON lines** (a ``.jsonl``/``.json`` name, or a first non-blank line that is a JSON
  object): ``id`` or ``query``, and ``hypotheses`` (list) or ``hypothesis`` (string), as
  :func:`multiref.metrics.references.load_hypotheses`;
- **plain text**, anything else: one line per reference item, in the references' order (the
  key order of the public LSDSCC JSON, the row order of a dataset folder or of a JSON lines
  file). With ``eos`` (the public LSDSCC scorer's ``--eos``, e.g. ``</s>``) a line holds
  several outputs separated by it; each output is stripped of surrounding spaces, and an
  empty part after a final separator is dropped (``a </s> b </s>`` is two outputs). A line
  count different from the number of reference items is one error naming both counts.

The result is the same list of :class:`multiref.metrics.references.HypRecord` as for JSON lines, so
matching (:func:`multiref.metrics.references.match_items`) and scoring do not depend on the form.
"""

from __future__ import annotations

import json
import os
import sys

from multiref.util.errors import UserError, where
from multiref.util.files import parse_json
from multiref.metrics.references import HypRecord, ReferenceSet, hypothesis_records

STDIN = "-"
JSON_SUFFIXES = (".jsonl", ".json")


def read_system_text(path: str, stdin=None) -> str:
    """The text of system ``path`` (``-``: ``stdin``, default ``sys.stdin``), BOM removed."""
    if path == STDIN:
        stream = stdin if stdin is not None else sys.stdin
        data = stream.buffer.read() if hasattr(stream, "buffer") and not hasattr(stream, "getvalue") else stream.read()
        name = "standard input"
    else:
        if not os.path.exists(path):
            raise UserError(f"hypotheses file not found: {path}")
        if os.path.isdir(path):
            raise UserError(f"hypotheses file is a directory, expected a file: {path}")
        with open(path, "rb") as fh:
            data = fh.read()
        name = path
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise UserError(f"{where(name, line)}: not valid UTF-8 ({exc.reason})") from None
    if not text.strip():
        raise UserError(f"{name}: file has no records" if path != STDIN else f"{name}: no outputs (the input is empty)")
    return text


def looks_like_jsonl(path: str, text: str) -> bool:
    """True for a ``.jsonl``/``.json`` name or a first non-blank line that is a JSON object."""
    if path.endswith(JSON_SUFFIXES):
        return True
    first = next((line for line in text.splitlines() if line.strip()), "")
    if not first.lstrip().startswith("{"):
        return False
    try:
        return isinstance(parse_json(first, "first line"), dict)
    except UserError:  # nested too deep or a huge number: JSON lines, whose reading names the line
        return True
    except json.JSONDecodeError:
        return False


def _json_lines(text: str, name: str):
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, name, number)  # bounded nesting, long numbers: path:line errors
        except json.JSONDecodeError as exc:
            raise UserError(f"{where(name, number)}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise UserError(f"{where(name, number)}: expected a JSON object, got {type(record).__name__}")
        yield number, record


def split_outputs(line: str, eos: str | None) -> tuple:
    """The outputs of one plain-text line: the line itself, or its ``eos``-separated parts."""
    if not eos:
        return (line.strip(),)
    parts = [part.strip() for part in line.split(eos)]
    if len(parts) > 1 and not parts[-1]:
        parts.pop()
    return tuple(parts)


def plain_text_records(text: str, name: str, refset: ReferenceSet, eos: str | None = None) -> list:
    """One :class:`HypRecord` per line, keyed by the id of the reference item in the same position."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline after the last line
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if len(lines) != len(refset.records):
        raise UserError(f"{name}: {len(lines)} lines but {len(refset.records)} reference items in {refset.source} "
                        "(plain text is one line per reference item, in the references' order)")
    return [HypRecord("id", ref.id, split_outputs(line, eos), number)
            for number, (line, ref) in enumerate(zip(lines, refset.records), start=1)]


def load_system(path: str, refset: ReferenceSet, eos: str | None = None, stdin=None) -> list:
    """System ``path`` (a file or ``-``) as :class:`HypRecord` objects, whatever its form."""
    text = read_system_text(path, stdin)
    name = "standard input" if path == STDIN else path
    if looks_like_jsonl(path, text):
        records = hypothesis_records(_json_lines(text, name), name)
        if not records:
            raise UserError(f"{name}: file has no records")
        return records
    return plain_text_records(text, name, refset, eos)


def system_names(paths) -> list:
    """Display names of the systems: their paths (``-``: ``stdin``); duplicates are an error."""
    names = ["stdin" if p == STDIN else p for p in paths]
    if names.count("stdin") > 1:
        raise UserError("--hypotheses: standard input ('-') can be given only once")
    seen = set()
    for n in names:
        if n in seen:
            raise UserError(f"--hypotheses: {n} is given twice")
        seen.add(n)
    return names
