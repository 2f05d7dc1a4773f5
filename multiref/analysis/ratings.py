"""Reading responses with human ratings, and their references (docs/algorithms.md#4-multiref-dd).

The default columns fit the multi-reference DailyDialog ratings file
(``mturk_rating_processed_output.csv``: ``model, context_id, human_average_rating, response,
prevgt, all_references, context``, with ``all_references`` TAB-joined). Any CSV/TSV or JSON
lines file with the same kind of columns works; names are options.

References of a row:
- *single*: the one original reference (``--reference-column``, default ``prevgt``).
- *all*: the union, without duplicates and in first-seen order, of the original reference,
  the split ``--references-column`` (in the MTurk file it already contains ``prevgt`` plus 3
  of the 4 new references) and, when a multi-reference test set is joined by context id, the
  5 references of that context (``multireftest.json`` or a dataset folder's ``multiref``
  config), which adds the held-out 4th new reference. Empty strings are dropped and counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

from multiref.util.errors import UserError, where


@dataclass(frozen=True)
class RatedResponse:
    """One rated response: who made it, the text, the human rating and its references."""

    id: str
    system: str
    response: str
    rating: float
    reference: str
    references: tuple  # all references (the single one first), deduplicated
    line: int = 0


@dataclass(frozen=True)
class RatingColumns:
    """Column names of a ratings file (defaults: the multi-reference DailyDialog MTurk CSV)."""

    response: str = "response"
    rating: str = "human_average_rating"
    system: str = "model"
    reference: str = "prevgt"
    references: str | None = "all_references"
    references_separator: str = "\t"
    id: str = "context_id"


@dataclass
class LoadStats:
    rows: int = 0
    empty_references_dropped: int = 0
    duplicate_references_merged: int = 0
    joined_rows: int = 0
    blank_ratings_dropped: int = 0
    first_blank_rating: str | None = None  # path:line of the first row left out for a blank rating

    def to_dict(self) -> dict:
        return {"rows": self.rows, "empty_references_dropped": self.empty_references_dropped,
                "duplicate_references_merged": self.duplicate_references_merged, "joined_rows": self.joined_rows,
                "blank_ratings_dropped": self.blank_ratings_dropped}


def _records(path: str):
    """Yield ``(line, dict)`` from a CSV/TSV (by extension) or JSON lines file."""
    from multiref.util.files import read_csv, read_jsonl, require_file

    require_file(path, "ratings file")
    if path.lower().endswith((".jsonl", ".json", ".ndjson")):
        yield from read_jsonl(path, "ratings file")
        return
    yield from read_csv(path, "ratings file")


def _field(record: dict, column: str, path: str, line: int, what: str):
    if column not in record or record[column] is None:
        raise UserError(f"{where(path, line)}: no {what} column {column!r} (columns: {', '.join(map(str, record))})")
    return record[column]


def _union(values: Sequence[str], stats: LoadStats) -> tuple:
    out: list = []
    for value in values:
        text = value if isinstance(value, str) else str(value)
        if not text.strip():
            stats.empty_references_dropped += 1
            continue
        if text in out:
            stats.duplicate_references_merged += 1
            continue
        out.append(text)
    return tuple(out)


def load_multiref_test(path: str) -> dict:
    """Context id ``"<dialogue>_<turn>"`` -> its references, from multireftest.json or a folder.

    ``path`` is the public ``multireftest.json`` (JSON lines: ``index`` and ``dialogue``, each
    utterance but the last with 5 ``responses``) or a dataset folder with the ``multiref``
    config (columns ``id``, ``references``; all its parquet files are read).
    """
    if os.path.isdir(path):
        import glob

        import pyarrow.parquet as pq

        files = sorted(glob.glob(os.path.join(path, "multiref", "*.parquet")))
        if not files:
            raise UserError(f"{path}: no multiref/*.parquet files (expected a dataset folder with the multiref config)")
        table = {}
        for name in files:
            data = pq.read_table(name, columns=["id", "references"]).to_pydict()
            table.update(zip(data["id"], (list(r) for r in data["references"])))
        return table
    from multiref.util.files import read_jsonl

    table = {}
    for line, record in read_jsonl(path, "multi-reference test file"):
        dialogue = record.get("dialogue")
        index = record.get("index")
        if not isinstance(dialogue, list) or index is None:
            raise UserError(f"{where(path, line)}: expected fields 'index' and 'dialogue' (multireftest.json format)")
        for turn, utterance in enumerate(dialogue):
            responses = utterance.get("responses") if isinstance(utterance, dict) else None
            if responses:
                table[f"{index}_{turn}"] = list(responses)
    return table


def load_ratings(path: str, columns: RatingColumns = RatingColumns(), join: dict | None = None,
                 exclude_systems: Sequence[str] = ()) -> tuple:
    """Read rated responses; returns ``(list[RatedResponse], LoadStats)``.

    ``join`` maps a context id (``columns.id``) to extra references (see
    :func:`load_multiref_test`); a row whose id is missing from it is a UserError.
    """
    from multiref.util.files import finite_number

    stats = LoadStats()
    rows = []
    excluded = set(exclude_systems)
    for line, record in _records(path):
        system = str(_field(record, columns.system, path, line, "system"))
        if system in excluded:
            continue
        response = str(_field(record, columns.response, path, line, "response"))
        raw_rating = record.get(columns.rating, "") if columns.rating in record else \
            _field(record, columns.rating, path, line, "rating")
        if raw_rating is None or (isinstance(raw_rating, str) and not raw_rating.strip()):
            stats.blank_ratings_dropped += 1  # a response nobody rated: left out, and said so
            stats.first_blank_rating = stats.first_blank_rating or where(path, line)
            continue
        rating = finite_number(raw_rating, path, line, "rating")  # NaN/inf refused, never averaged
        reference = str(_field(record, columns.reference, path, line, "reference"))
        extra: list = []
        if columns.references:
            value = _field(record, columns.references, path, line, "references")
            if isinstance(value, str):
                extra = value.split(columns.references_separator) if value else []
            elif isinstance(value, list):
                extra = [str(v) for v in value]
            else:
                raise UserError(f"{where(path, line)}: references column {columns.references!r} must be text or a list")
        row_id = str(record.get(columns.id, line))
        if join is not None:
            if row_id not in join:
                raise UserError(f"{where(path, line)}: context id {row_id!r} not found in the joined multi-reference test set")
            extra = extra + list(join[row_id])
            stats.joined_rows += 1
        if not reference.strip():
            raise UserError(f"{where(path, line)}: empty reference in column {columns.reference!r}")
        references = _union([reference] + extra, stats)
        rows.append(RatedResponse(row_id, system, response, rating, reference, references, line))
    if not rows:
        raise UserError(f"{path}: no rated responses (after excluding systems {sorted(excluded)})" if excluded
                        else f"{path}: no rated responses")
    stats.rows = len(rows)
    return rows, stats


def ratings_summary(rows: Sequence[RatedResponse]) -> dict:
    """Per system: number of responses and mean rating (sorted by system name)."""
    out: dict = {}
    for row in rows:
        entry = out.setdefault(row.system, {"responses": 0, "mean_rating": 0.0})
        entry["responses"] += 1
        entry["mean_rating"] += row.rating
    for entry in out.values():
        entry["mean_rating"] = entry["mean_rating"] / entry["responses"]
    refs = [len(r.references) for r in rows]
    return {"systems": dict(sorted(out.items())), "references_per_response": {
        "min": min(refs), "max": max(refs), "mean": sum(refs) / len(refs)}}

