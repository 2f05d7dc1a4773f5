"""Tables as researchers hold them: one row per item in a ``.jsonl``, ``.json``, ``.csv``,
``.tsv`` or ``.parquet`` file, read into plain rows, and the column names a command is told to
use (:class:`ColumnNames`: ``--context-column``, ``--response-column``, ``--id-column``,
``--references-column``, declared once for ``multiref augment`` and ``multiref score``).

- ``.jsonl``: one JSON object a line; ``.json``: a list of objects (or JSON lines);
- ``.csv``/``.tsv``: a header row, then one row per item; a cell that holds a JSON list
  (``["a", "b"]``) is that list (a context's turns, a references list), any other cell its text;
- ``.parquet``: read with pyarrow.

A missing column is one line naming the file and the columns it has (:func:`pick`). Standard
library at module level (pyarrow only for parquet).
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from typing import Sequence

from multiref.util.errors import UserError, where
from multiref.util.options import option

SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")


@dataclass(frozen=True)
class ColumnNames:
    """The columns to read (None: the command's usual names, tried in order)."""

    context: str | None = option(None, flag="--context-column", metavar="NAME", title="columns of a file or folder",
                                 help="the context: a list of turns or a string (default: context, else query)")
    response: str | None = option(None, flag="--response-column", metavar="NAME",
                                  help="the single response or reference string (default: response)")
    id: str | None = option(None, flag="--id-column", metavar="NAME",  # noqa: A003
                            help="the item id (default: id when present, else the row number from 1)")
    references: tuple = option((), flag="--references-column", metavar="NAME", repeat=True,
                               help="the references: one list column, or repeat the flag for one column per "
                                    "reference (default: references, else columns named reference*/ref*)")

    def options(self) -> dict:
        """The non-default names (recorded in a card)."""
        out = {"context_column": self.context, "response_column": self.response, "id_column": self.id,
               "references_columns": list(self.references)}
        return {k: v for k, v in out.items() if v}


@dataclass
class Rows:
    """A file's rows (dicts) and its column names, in the file's order."""

    path: str
    columns: list
    rows: list

    def pick(self, given: str | None, usual: Sequence[str], flag: str, what: str) -> str | None:
        """See :func:`pick`."""
        return pick(self.path, self.columns, given, usual, flag, what)

    def values(self, name: str) -> list:
        return [row.get(name) for row in self.rows]


def is_table_file(path: str) -> bool:
    return path.lower().endswith(SUFFIXES) and not os.path.isdir(path)


def shown(columns: Sequence[str], most: int = 20) -> str:
    """Column names for a one-line message: ``repr`` for one that is not printable, at most ``most``."""
    names = [c if isinstance(c, str) and c.isprintable() else repr(c) for c in list(columns)[:most]]
    more = f", ... ({len(columns)} in all)" if len(columns) > most else ""
    return (", ".join(names) or "no columns") + more


def pick(where_: str, columns: Sequence[str], given: str | None, usual: Sequence[str], flag: str,
         what: str) -> str | None:
    """The column to use: ``given`` (UserError when absent), else the first of ``usual``
    present (None when none is; the caller decides whether that is an error)."""
    if given is not None:
        if given not in columns:
            raise UserError(f"{where_}: no column {given!r} ({flag}, {what}); it has {shown(columns)}")
        return given
    return next((c for c in usual if c in columns), None)


def missing(where_: str, columns: Sequence[str], what: str, flag: str) -> UserError:
    """The one-line error of a column the file lacks."""
    return UserError(f"{where_}: needs {what} (or name it with {flag}); it has {shown(columns)}")


def read_rows(path: str, what: str = "input file") -> Rows:
    """The rows of a table file (module docstring); UserError for an unknown suffix, an
    unreadable file or no rows."""
    from multiref.util.files import require_file

    require_file(path, what)
    suffix = os.path.splitext(path)[1].lower()
    if suffix == ".parquet":
        rows = _parquet_rows(path)
    elif suffix in (".csv", ".tsv"):
        rows = _csv_rows(path, "\t" if suffix == ".tsv" else ",")
    elif suffix in (".jsonl", ".json"):
        rows = _json_rows(path, what)
    else:
        raise UserError(f"{path}: not a table file (use one of {', '.join(SUFFIXES)}, or a dataset folder)")
    if not rows:
        raise UserError(f"{path}: file has no rows")
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return Rows(path, columns, rows)


def _parquet_rows(path: str) -> list:
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # ArrowIOError / ArrowInvalid: not parquet
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"{path}: cannot read as parquet ({first})") from None


def _cell(text: str):
    """A CSV cell: a JSON list when it holds one, else its text."""
    if text.startswith("[") and text.endswith("]"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, list):
            return value
    return text


def _csv_rows(path: str, delimiter: str) -> list:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh, delimiter=delimiter)
            rows = []
            for row in reader:
                if None in row:
                    raise UserError(f"{where(path, reader.line_num)}: more cells than the header has columns")
                rows.append({k: _cell(v) if v is not None else None for k, v in row.items()})
            return rows
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    except csv.Error as exc:
        raise UserError(f"{path}: not a valid {'TSV' if delimiter == chr(9) else 'CSV'} file ({exc})") from None


def _json_rows(path: str, what: str) -> list:
    from multiref.util.files import parse_json, read_jsonl, read_text

    if path.lower().endswith(".json"):
        text = read_text(path, what)
        try:
            document = parse_json(text, path)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise UserError(f"{where(path, exc.lineno)}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        else:
            if isinstance(document, dict):
                return [document]
            if not isinstance(document, list) or not all(isinstance(r, dict) for r in document):
                raise UserError(f"{path}: expected a list of JSON objects (one per row) or JSON lines")
            return document
    return [record for _line, record in read_jsonl(path, what)]


# -- dataset folders --------------------------------------------------------------------------


def folder_choices(folder: str) -> dict:
    """``{config: {split: sorted files}}`` of a dataset folder: the configs of its
    ``dataset_meta.json`` (every folder this project writes); else ``<config>/<split>-*.parquet``
    (a Hugging Face parquet folder: ``data/`` is the ``default`` config); else table files at its
    top, ``<split>.<suffix>`` (config ``default``)."""
    import glob

    from multiref.util.files import parse_json

    meta_path = os.path.join(folder, "dataset_meta.json")
    choices: dict = {}
    if os.path.exists(meta_path):
        try:
            with open(meta_path, encoding="utf-8") as fh:
                meta = parse_json(fh.read(), meta_path)
            for name, info in meta.get("configs", {}).items():
                for split, pattern in (info.get("data_files") or {}).items():
                    files = sorted(glob.glob(os.path.join(folder, pattern)))
                    if files:
                        choices.setdefault(name, {})[split] = files
        except (OSError, ValueError, AttributeError):
            choices = {}
    if not choices:
        for path in sorted(glob.glob(os.path.join(folder, "*", "*.parquet"))):
            config = os.path.basename(os.path.dirname(path))
            split = os.path.basename(path).split("-")[0].split(".")[0]
            choices.setdefault("default" if config == "data" else config, {}).setdefault(split, []).append(path)
    if not choices and not os.path.exists(meta_path):  # a folder holding table files
        for path in sorted(glob.glob(os.path.join(folder, "*"))):
            if is_table_file(path):
                split = os.path.splitext(os.path.basename(path))[0]
                choices.setdefault("default", {}).setdefault(split, []).append(path)
    return choices


def choose(folder: str, choices: dict, config: str | None, split: str | None, flags: tuple = ("--config", "--split"),
           preferred: tuple = ()) -> tuple:
    """``(config, split)`` of a folder: as given (UserError naming the choices when absent), else
    the only one (a config among ``preferred`` first; the split ``test`` among several)."""
    if not choices:
        raise UserError(f"{folder}: not a dataset folder (no dataset_meta.json, <config>/<split>-*.parquet "
                        f"or <split>{'/'.join(SUFFIXES)} files)")
    if config is None:
        usable = [c for c in choices if c in preferred] or list(choices)
        if len(usable) != 1:
            raise UserError(f"{folder}: choose a config with {flags[0]} (one of: {', '.join(sorted(choices))})")
        config = usable[0]
    if config not in choices:
        raise UserError(f"{folder}: no config {config!r} (choose one of: {', '.join(sorted(choices))})")
    splits = choices[config]
    if split is None:
        split = next(iter(splits)) if len(splits) == 1 else ("test" if "test" in splits else None)
        if split is None:
            raise UserError(f"{folder}/{config}: choose a split with {flags[1]} (one of: {', '.join(sorted(splits))})")
    if split not in splits:
        raise UserError(f"{folder}/{config}: no split {split!r} (choose one of: {', '.join(sorted(splits))})")
    return config, split


def read_files(paths: Sequence[str], where_: str, what: str = "input file") -> Rows:
    """The rows of one split's files, concatenated (a :class:`Rows` named ``where_``)."""
    rows: list = []
    for path in paths:
        rows += read_rows(path, what).rows
    columns = list(dict.fromkeys(k for row in rows for k in row))
    return Rows(where_, columns, rows)
