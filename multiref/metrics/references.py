"""Loading references and system outputs for scoring (``multiref score``).

References come in four forms (:func:`load_references` tells them apart):

- the public LSDSCC grouped JSON: ``{query: {group_id: [reference, ...], ...}, ...}``; group
  ids are kept as strings, including the ``"null"`` id the public file uses for 8 groups;
  the query string is both the item's ``id`` and its ``query``;
- JSON lines, one item a line: ``id`` (string or integer), optional ``query``, and either
  ``references`` (list of strings; optional ``weights``, one number per reference, for
  deltaBLEU) or ``groups`` (a list of lists of strings, or an object group_id -> list);
- a dataset folder written by our pipelines (``<folder>/<config>/<split>-*.parquet``, see
  docs/scoring.md#scoring-a-dataset-folder): rows with ``groups`` (and ``group_ids``) are
  grouped, rows with ``references`` flat (``positive_responses`` is read as flat references
  for the ``dailydialog_pp`` config); without a ``query`` column, the last turn of a
  ``context`` list (the DailyDialog configs) is the query; a ``response`` string is one
  reference (the DailyDialog ``contexts`` config: the single-reference form); also any
  Hugging Face parquet folder (:func:`multiref.util.tables.folder_choices`);
- a table file (``.csv``, ``.tsv``, ``.parquet``, or ``.jsonl``/``.json`` rows without
  ``references``/``groups``): a ``references`` list, one column per reference (``reference1``,
  ``ref_2``, ... or ``--references-column`` repeated) or a ``response``; ``id`` (else the row
  number), ``query`` or ``context`` (:class:`multiref.util.tables.ColumnNames` renames them).

:func:`limit_references` keeps each item's first N references (``--max-references``).

System outputs are JSON lines: ``id`` or ``query`` (matched against the references' ids or
queries), and ``hypotheses`` (a list of strings) or ``hypothesis`` (a string).

Every user mistake raises :class:`multiref.util.errors.UserError` with ``file:line``.
"""

from __future__ import annotations

import json
import os
import re
from itertools import repeat
from dataclasses import dataclass, field
from typing import Sequence

from multiref.util.errors import UserError, where
from multiref.util.files import parse_json, read_jsonl, read_text


@dataclass(frozen=True)
class RefRecord:
    """One item's references. ``groups``/``group_ids`` are None for flat references."""

    id: str
    query: str | None
    references: tuple
    groups: tuple | None = None
    group_ids: tuple | None = None
    weights: tuple | None = None
    location: str = ""  # "file:line" (or "folder/config/split row N") for error messages


@dataclass
class ReferenceSet:
    """All references of a test set, indexed by ``id`` and by ``query``."""

    source: str
    kind: str  # "lsdscc-json" | "jsonl" | "dataset"
    records: list
    by_id: dict = field(default_factory=dict)
    by_query: dict = field(default_factory=dict)  # query -> record, or None when ambiguous
    max_references: int | None = None  # each item's first N references only (limit_references)

    @property
    def grouped(self) -> bool:
        """True when the references come in groups (LSDSCC)."""
        return any(r.groups is not None for r in self.records)

    def add(self, record: RefRecord) -> None:
        if record.id in self.by_id:
            raise UserError(f"{record.location}: duplicate id {record.id!r} (first at {self.by_id[record.id].location})")
        self.by_id[record.id] = record
        if record.query is not None:
            self.by_query[record.query] = None if record.query in self.by_query else record
        self.records.append(record)


@dataclass(frozen=True)
class HypRecord:
    """One line of a system-output file."""

    key_field: str  # "id" or "query"
    key: str
    hypotheses: tuple
    line: int


# -- references ----------------------------------------------------------------------------


def load_references(path: str, config: str | None = None, split: str | None = None, names=None) -> ReferenceSet:
    """Load references from an LSDSCC JSON file, a JSON lines file, a table file (``.csv``,
    ``.tsv``, ``.parquet``, or ``.json``/``.jsonl`` rows without ``references``/``groups``) or a
    dataset folder; ``names`` (:class:`multiref.util.tables.ColumnNames`) renames the columns."""
    from multiref.util import tables

    if not os.path.exists(path):
        raise UserError(f"references not found: {path}")
    if os.path.isdir(path):
        return load_dataset_folder(path, config, split, names)
    if config is not None or split is not None:
        raise UserError(f"{path}: --config/--split only apply to a dataset folder, not to a file")
    renamed = names is not None and names != tables.ColumnNames()
    if path.lower().endswith((".csv", ".tsv", ".parquet")) or (renamed and tables.is_table_file(path)):
        return references_from_rows(tables.read_rows(path, "references file"), path, "jsonl", names)
    if path.endswith(".jsonl"):
        if not _has_reference_fields(path):
            return references_from_rows(tables.read_rows(path, "references file"), path, "jsonl", names)
        return load_references_jsonl(path)
    text = read_text(path, "references file")
    try:
        document = parse_json(text, path, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        raise UserError(f"{where(path, _line_of(text, json.dumps(exc.key, ensure_ascii=False), second=True))}: "
                        f"duplicate key {exc.key!r}") from None
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several JSON documents: JSON lines
            return load_references_jsonl(path)
        raise UserError(f"{where(path, exc.lineno)}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    if isinstance(document, dict) and document and all(isinstance(v, (dict, list)) for v in document.values()):
        return parse_lsdscc_json(document, path, text)
    if isinstance(document, dict):  # a JSON lines file with a single record
        return load_references_jsonl(path)
    if isinstance(document, list) and document and all(isinstance(r, dict) and not {"references", "groups"} & set(r)
                                                       for r in document):
        return references_from_rows(tables.Rows(path, list(dict.fromkeys(k for r in document for k in r)), document),
                                    path, "jsonl", names)
    if isinstance(document, list):
        refset = ReferenceSet(path, "jsonl", [])
        for i, record in enumerate(document):
            refset.add(_parse_ref_record(record, f"{path} record {i + 1}"))
        if not refset.records:
            raise UserError(f"{path}: file has no records")
        return refset
    raise UserError(f"{path}: expected LSDSCC grouped JSON {{query: {{group_id: [refs]}}}} or JSON lines")


def _has_reference_fields(path: str) -> bool:
    """Whether the first record of a JSON lines file has ``references`` or ``groups`` (the
    records :func:`load_references_jsonl` reads); else its rows are a table."""
    for _line, record in read_jsonl(path, "references file"):
        return "references" in record or "groups" in record
    return True


class _DuplicateKey(Exception):
    def __init__(self, key):
        self.key = key


def _no_duplicate_keys(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _line_of(text: str, needle: str, second: bool = False) -> int | None:
    """1-based line of the first (or second) occurrence of ``needle`` in ``text``."""
    pos = text.find(needle)
    if second and pos >= 0:
        pos2 = text.find(needle, pos + 1)
        pos = pos2 if pos2 >= 0 else pos
    return text.count("\n", 0, pos) + 1 if pos >= 0 else None


def _strings(value, what: str, location: str, allow_empty: bool = False) -> tuple:
    if not isinstance(value, list) or not all(map(isinstance, value, repeat(str))):  # checked in C
        raise UserError(f"{location}: {what} must be a list of strings")
    if not value and not allow_empty:
        raise UserError(f"{location}: {what} is empty")
    return tuple(value)


def _groups(value, location: str) -> tuple:
    """``(groups, group_ids)`` from a list of lists or an object group_id -> list."""
    if isinstance(value, dict):
        ids = tuple(str(k) for k in value)
        groups = tuple(_strings(v, f"group {k!r}", location) for k, v in value.items())
    elif isinstance(value, list):
        groups = tuple(_strings(v, f"group {i + 1}", location) for i, v in enumerate(value))
        ids = tuple(str(i + 1) for i in range(len(groups)))
    else:
        raise UserError(f"{location}: 'groups' must be a list of lists of strings or an object group_id -> list")
    if not groups:
        raise UserError(f"{location}: 'groups' is empty")
    return groups, ids


class _KeyLines:
    """Line numbers of a document's keys, found in document order (one pass over the text)."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 1

    def of(self, needle: str) -> int | None:
        pos = self.text.find(needle, self.pos)
        if pos < 0:  # not after the previous key: search from the start
            return _line_of(self.text, needle)
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def parse_lsdscc_json(document: dict, path: str = "<json>", text: str = "") -> ReferenceSet:
    """The public LSDSCC test set ``{query: {group_id: [refs]}}`` as a grouped ReferenceSet."""
    refset = ReferenceSet(path, "lsdscc-json", [])
    lines = _KeyLines(text)
    for query, value in document.items():
        location = where(path, lines.of(json.dumps(query, ensure_ascii=False)) if text else None)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = [value]  # a flat list of references: one group
        groups, ids = _groups(value, location)
        refs = tuple(r for g in groups for r in g)
        refset.add(RefRecord(query, query, refs, groups, ids, None, location))
    return refset


def _parse_ref_record(record, location: str) -> RefRecord:
    if not isinstance(record, dict):
        raise UserError(f"{location}: expected a JSON object, got {type(record).__name__}")
    rid = record.get("id", record.get("query"))
    if isinstance(rid, bool) or not isinstance(rid, (str, int)):
        raise UserError(f"{location}: each record needs an 'id' (string or integer) or a 'query' string")
    query = record.get("query")
    if query is not None and not isinstance(query, str):
        raise UserError(f"{location}: 'query' must be a string")
    has_refs, has_groups = "references" in record, "groups" in record
    if has_refs == has_groups:
        raise UserError(f"{location}: each record needs exactly one of 'references' or 'groups'")
    weights = None
    if has_groups:
        groups, ids = _groups(record["groups"], location)
        if "group_ids" in record:
            ids = tuple(str(g) for g in _strings(record["group_ids"], "'group_ids'", location))
            if len(ids) != len(groups):
                raise UserError(f"{location}: {len(ids)} group_ids for {len(groups)} groups")
        refs = tuple(r for g in groups for r in g)
    else:
        groups = ids = None
        refs = _strings(record["references"], "'references'", location)
    if "weights" in record:
        w = record["weights"]
        if (not isinstance(w, list) or len(w) != len(refs)
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in w)):
            raise UserError(f"{location}: 'weights' must be a list of {len(refs)} numbers (one per reference)")
        weights = tuple(float(x) for x in w)
    return RefRecord(str(rid), query, refs, groups, ids, weights, location)


def load_references_jsonl(path: str) -> ReferenceSet:
    """References as JSON lines (see the module docstring)."""
    refset = ReferenceSet(path, "jsonl", [])
    for line, record in read_jsonl(path, "references file"):
        refset.add(_parse_ref_record(record, where(path, line)))
    return refset


REFERENCE_COLUMNS = ("groups", "references", "positive_responses")
NUMBERED = re.compile(r"^(references?|refs?|responses?)[ _-]?\d+$", re.IGNORECASE)


@dataclass(frozen=True)
class _Layout:
    """Which columns of a table hold an item's id, query and references."""

    id: str | None
    query: str | None
    references: tuple  # one list (or string) column, or one column per reference
    grouped: bool = False


def _layout(where_: str, columns: list, names) -> _Layout:
    """The :class:`_Layout` of a table's ``columns`` under the ``names`` the user gave
    (:class:`multiref.util.tables.ColumnNames`); UserError (one line) naming what is missing."""
    from multiref.util import tables

    rid = tables.pick(where_, columns, names.id, ("id",), "--id-column", "the item id")
    query = tables.pick(where_, columns, names.context, ("query", "context"), "--context-column", "the query")
    if rid is None and query == "query":  # as in JSON lines: the query is the id
        rid = "query"
    for name in names.references:
        tables.pick(where_, columns, name, (), "--references-column", "references")
    if names.references:
        return _Layout(rid, query, tuple(names.references))
    single = tables.pick(where_, columns, names.response, (), "--response-column", "a single reference")
    if single is not None:
        return _Layout(rid, query, (single,))
    found = next((c for c in REFERENCE_COLUMNS if c in columns), None)
    if found is not None:
        return _Layout(rid, query, (found,), grouped=found == "groups")
    numbered = tuple(c for c in columns if NUMBERED.match(c))
    if numbered or "response" in columns:
        return _Layout(rid, query, numbered or ("response",))
    raise tables.missing(where_, columns, "a 'references' list, a 'groups' list, one column per reference "
                         "(reference1, reference2, ...) or a 'response'", "--references-column")


def _row_record(row: dict, layout: _Layout, number: int) -> dict:
    """A table row as the record :func:`_parse_ref_record` checks: values of the wrong type are
    passed on as they are (its UserError names the row), never converted into something else."""
    record = {"id": row.get(layout.id) if layout.id else number}
    query = row.get(layout.query) if layout.query else None
    if isinstance(query, list) and query and isinstance(query[-1], str):
        query = query[-1]  # a context (DailyDialog configs): its last turn is the query
    if isinstance(query, str):
        record["query"] = query
    if layout.grouped:
        record["groups"] = [] if row.get("groups") is None else row["groups"]
        ids = row.get("group_ids")
        if isinstance(ids, list) and all(isinstance(g, (str, int)) and not isinstance(g, bool) for g in ids):
            ids = [str(g) for g in ids]  # a dataset may store numeric group ids
        if ids is not None:
            record["group_ids"] = ids
    elif len(layout.references) == 1:
        value = row.get(layout.references[0])
        record["references"] = [] if value is None else ([value] if isinstance(value, str) else value)
    else:  # one column per reference: the cells that hold one
        record["references"] = [row[c] for c in layout.references if isinstance(row.get(c), str) and row[c].strip()]
    return record


def references_from_rows(rows, source: str, kind: str, names=None) -> ReferenceSet:
    """A :class:`ReferenceSet` of a table's rows (:class:`multiref.util.tables.Rows`)."""
    from multiref.util.tables import ColumnNames

    layout = _layout(rows.path, rows.columns, names or ColumnNames())
    refset = ReferenceSet(source, kind, [])
    for number, row in enumerate(rows.rows, start=1):
        refset.add(_parse_ref_record(_row_record(row, layout, number), f"{rows.path} row {number}"))
    if not refset.records:
        raise UserError(f"{source}: no rows")
    return refset


def load_dataset_folder(folder: str, config: str | None = None, split: str | None = None, names=None) -> ReferenceSet:
    """References from a dataset folder: ``config`` (needed when it holds several) and ``split``
    (default: the only split, else ``test``)."""
    from multiref.util import tables

    choices = tables.folder_choices(folder)
    config, split = tables.choose(folder, choices, config, split, preferred=("test_grouped", "multiref"))
    rows = tables.read_files(choices[config][split], f"{folder}/{config}/{split}", "references file")
    return references_from_rows(rows, rows.path, "dataset", names)


def limit_references(refset: ReferenceSet, most: int | None) -> ReferenceSet:
    """Each item's first ``most`` references in their stored order (None: all). Grouped
    references keep the groups of those references (a group's share of the first ``most``)."""
    if most is None:
        return refset
    out = ReferenceSet(refset.source, refset.kind, [], max_references=most)
    for r in refset.records:
        refs = r.references[:most]
        groups = ids = None
        if r.groups is not None:
            kept, left = [], most
            for gid, group in zip(r.group_ids, r.groups):
                if left > 0:
                    kept.append((gid, tuple(group[:left])))
                    left -= len(group)
            ids, groups = tuple(g for g, _ in kept), tuple(g for _, g in kept)
        weights = r.weights[:most] if r.weights is not None else None
        out.add(RefRecord(r.id, r.query, refs, groups, ids, weights, r.location))
    return out


# -- hypotheses ----------------------------------------------------------------------------


def load_hypotheses(path: str) -> list:
    """System outputs: one :class:`HypRecord` per JSON line (``id`` or ``query``; ``hypotheses``
    or ``hypothesis``). Duplicate keys, empty lists and wrong types are errors. Other input
    forms (plain text, standard input): :mod:`multiref.metrics.score_inputs`."""
    return hypothesis_records(read_jsonl(path, "hypotheses file"), path)


def hypothesis_records(numbered, path: str) -> list:
    """:class:`HypRecord` objects from ``(line number, JSON object)`` pairs read from ``path``."""
    out, seen = [], {}
    for line, record in numbered:
        loc = where(path, line)
        if "id" in record:
            key_field, key = "id", record["id"]
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise UserError(f"{loc}: 'id' must be a string or an integer")
            key = str(key)
        elif "query" in record:
            key_field, key = "query", record["query"]
            if not isinstance(key, str):
                raise UserError(f"{loc}: 'query' must be a string")
        else:
            raise UserError(f"{loc}: each line needs an 'id' or a 'query'")
        if ("hypotheses" in record) == ("hypothesis" in record):
            raise UserError(f"{loc}: each line needs exactly one of 'hypotheses' (list) or 'hypothesis' (string)")
        if "hypothesis" in record:
            if not isinstance(record["hypothesis"], str):
                raise UserError(f"{loc}: 'hypothesis' must be a string")
            hyps = (record["hypothesis"],)
        else:
            hyps = _strings(record["hypotheses"], "'hypotheses'", loc)
        if (key_field, key) in seen:
            raise UserError(f"{loc}: duplicate {key_field} {key!r} (first on line {seen[(key_field, key)]})")
        seen[(key_field, key)] = line
        out.append(HypRecord(key_field, key, hyps, line))
    return out


def match_items(refset: ReferenceSet, hypotheses: Sequence[HypRecord], hyp_path: str, partial: bool = False) -> list:
    """Pair each system output with its references: a list of ``(HypRecord, RefRecord)``.

    Raises UserError (``file:line``) for an output whose id/query has no references, or,
    unless ``partial``, when some reference items have no output.
    """
    pairs, used = [], set()
    for hyp in hypotheses:
        loc = where(hyp_path, hyp.line)
        if hyp.key_field == "id":
            ref = refset.by_id.get(hyp.key)
        else:
            if not refset.by_query:
                raise UserError(f"{loc}: the references have no queries; match by 'id' instead")
            ref = refset.by_query.get(hyp.key, False)
            if ref is None:
                raise UserError(f"{loc}: query {_short(hyp.key)} matches several reference items; match by 'id'")
            ref = ref or None
        if ref is None:
            raise UserError(f"{loc}: no references for {hyp.key_field} {_short(hyp.key)} in {refset.source}")
        if ref.id in used:
            raise UserError(f"{loc}: a second output for reference item {_short(ref.id)}")
        used.add(ref.id)
        pairs.append((hyp, ref))
    missing = len(refset.records) - len(used)
    if missing and not partial:
        first = next(r for r in refset.records if r.id not in used)
        raise UserError(f"{hyp_path}: no outputs for {missing} of {len(refset.records)} reference items "
                        f"(first: {_short(first.id)}); pass --partial to score only the covered ones")
    return pairs


def _short(text: str, limit: int = 60) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")


def to_items(pairs, shared: dict | None = None) -> list:
    """:class:`multiref.metrics.Item` objects from :func:`match_items` pairs.

    ``shared``: a dict kept by the caller across the systems of one run; the reference side of
    a record (its references, groups, weights, group ids as lists) is then built once and the
    items of every system hold the same lists (items are frozen; nothing changes them).
    """
    from multiref.metrics.base import Item

    shared = {} if shared is None else shared
    out = []
    for hyp, ref in pairs:
        fields = shared.get(id(ref))
        if fields is None or fields[0] is not ref:  # the record itself is kept: its id stays its own
            fields = shared[id(ref)] = (ref, list(ref.references),
                                        [list(g) for g in ref.groups] if ref.groups is not None else None,
                                        list(ref.weights) if ref.weights is not None else None,
                                        list(ref.group_ids) if ref.group_ids is not None else None)
        out.append(Item(id=ref.id, hypotheses=list(hyp.hypotheses), references=fields[1], groups=fields[2],
                        weights=fields[3], group_ids=fields[4]))
    return out
