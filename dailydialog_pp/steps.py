"""The DailyDialog job's per-element steps as pure functions (docs/algorithms.md sections 4 and 5).

Each step takes one element (a raw line, a dialogue, a group of joined records, a row) and
returns an explicit :class:`Outcome`: the rows it keeps, the dead letters of what it drops or
rejects (each with its reason), and its counts by name. Count names are
``<namespace>/<name>`` (``dailydialog/...`` for parsing, ``multiref/...`` for section 4,
``dailydialog_pp/...`` for section 5): the names ``stats.json`` and the card list.
``pipelines/dailydialog/transforms.py`` wraps each step in a labelled composite; nothing here
imports Beam, so every rule is tested on plain values.
"""

from __future__ import annotations

import json
import os
import re
from typing import NamedTuple

from dailydialog_pp.contexts import (cluster_duplicates, context_pairs, ddpp_contexts, empty_references,
                                     multiref_contexts, multiref_matches, near_duplicate_block, pick_released)
from dailydialog_pp.normalize import collapse_spaces, dialogue_key
from dailydialog_pp.readers import RejectedRecord, parse_ddpp, parse_dialogue, parse_multiref

NS_PARSE = "dailydialog"
NS_MULTIREF = "multiref"
NS_DDPP = "dailydialog_pp"
NS_CONTEXTS = "contexts"


class Outcome(NamedTuple):
    """What one step made of one element: rows kept, dead letters (dicts with a ``reason``),
    counts ``{"<namespace>/<name>": n}`` (no zero counts)."""

    rows: list
    rejected: list
    counts: dict


class _Step:
    """Builds an :class:`Outcome`; counts are named in ``namespace``."""

    def __init__(self, namespace: str):
        self.namespace = namespace
        self.rows, self.rejected, self.counts = [], [], {}

    def count(self, name: str, n: int = 1) -> None:
        if n:
            key = f"{self.namespace}/{name}"
            self.counts[key] = self.counts.get(key, 0) + n

    def keep(self, row, counted: str | None = None) -> None:
        self.rows.append(row)
        if counted:
            self.count(counted)

    def reject(self, counted: str, letter: dict, n: int = 1) -> None:
        self.count(counted, n)
        self.rejected.append(letter)

    def outcome(self) -> Outcome:
        return Outcome(self.rows, self.rejected, self.counts)


# --- small pure helpers ------------------------------------------------------------------

def natural_key(text: str) -> tuple:
    """Sort key that orders '2_10' after '2_9' (numbers compared as numbers)."""
    return tuple(_number_key(p) if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


def _number_key(digits: str) -> tuple:
    """A digit run ordered as its number, without ``int()`` (a 5,000-digit id is text, not a crash)."""
    significant = digits.lstrip("0")
    return (0, len(significant), significant)


def row_sort_key(row) -> tuple:
    """The order of rows within a parquet file: by id, numbers compared as numbers."""
    return natural_key(row["id"])


def dead_letter(reason: str, detail: str, file=None, line=None, text=None) -> dict:
    """The record written to ``rejected/<reason>.jsonl``."""
    return {"reason": reason, "detail": detail, "file": file, "line": line, "text": text}


def _rel(path):
    return os.path.basename(path) if path else path


def _letter(rej: RejectedRecord) -> dict:
    """A rejected input line as a dead letter (its file named by basename)."""
    letter = rej.dead_letter()
    letter["file"] = _rel(letter["file"])
    return letter


def rejected_jsonl(letters) -> bytes:
    """One reason's dead letters as JSON lines, sorted."""
    letters = sorted(json.dumps(d, sort_keys=True, ensure_ascii=False) for d in letters)
    return "".join(line + "\n" for line in letters).encode("utf-8")


def for_writer(row: dict, config: str) -> tuple:
    """``(config, split, shard key, row)``, the element the dataset writer takes."""
    return config, row["split"], row["id"], row


# --- reading -----------------------------------------------------------------------------

def parse_dialogue_line(raw) -> Outcome:
    """A DailyDialog line (RawLine) -> a Dialogue, or a dead letter (bad label counts, ...)."""
    step = _Step(NS_PARSE)
    try:
        dialogue = parse_dialogue(raw)
    except RejectedRecord as rej:
        step.reject(rej.reason, _letter(rej))
        return step.outcome()
    step.keep(dialogue, f"dialogues-{dialogue.split}")
    return step.outcome()


def parse_multiref_line(item) -> Outcome:
    """``(position, RawLine)`` of multireftest.json -> ``(("test", index), MultirefDialogue)``."""
    step = _Step(NS_MULTIREF)
    position, raw = item
    try:
        record = parse_multiref(raw, position)
    except RejectedRecord as rej:
        step.reject(rej.reason, _letter(rej))
        return step.outcome()
    step.keep((("test", record.index), record), "released-dialogues")
    return step.outcome()


def parse_ddpp_line(raw) -> Outcome:
    """A DD++ line -> ``(context key, ReleasedContext)``; a bad line is counted as ``<file kind>-<reason>``."""
    step = _Step(NS_DDPP)
    try:
        record = parse_ddpp(raw)
    except RejectedRecord as rej:
        step.reject(f"{raw.kind}-{rej.reason}", _letter(rej))
        return step.outcome()
    step.keep((dialogue_key(record.context), record), f"released-{record.source}")
    return step.outcome()


# --- MultiRef-DD (section 4) -------------------------------------------------------------

def in_splits(dialogue, splits) -> bool:
    return dialogue.split in splits


def index_key(dialogue) -> tuple:
    """``((split, index), dialogue)``: the key multireftest.json's lines are joined on."""
    return (dialogue.split, dialogue.index), dialogue


def join_references(item, text_options, have_release: bool, released_first: bool = False) -> Outcome:
    """``(key, {"dialogue": [...], "released": [...]})`` -> multiref rows (section 4): the
    dialogue cut after each turn, with the released references when their text matches."""
    step = _Step(NS_MULTIREF)
    _, grouped = item
    dialogues = list(grouped["dialogue"])
    released = sorted(grouped["released"], key=lambda r: r.line)
    for extra in released[1:]:
        step.reject("duplicate-index", dead_letter(
            "duplicate-index", f"a second line with index {extra.index}", _rel(extra.path), extra.line))
    chosen = released[0] if released else None
    if not dialogues:
        if chosen is not None:
            step.reject("released-without-dialogue", dead_letter(
                "released-without-dialogue", f"no test dialogue with index {chosen.index}",
                _rel(chosen.path), chosen.line))
        return step.outcome()
    dialogue = dialogues[0]
    if chosen is not None and not multiref_matches(dialogue, chosen):
        step.reject("text-mismatch", dead_letter(
            "text-mismatch", f"utterances differ from {dialogue.dialogue_id}; kept the original reference only",
            _rel(chosen.path), chosen.line))
        chosen = None
    if chosen is not None:
        step.count("joined-dialogues")
        empty = empty_references(chosen)
        if empty:
            step.reject("empty-reference", dead_letter(
                "empty-reference", f"{empty} empty reference(s) dropped from {dialogue.dialogue_id}",
                _rel(chosen.path), chosen.line), n=empty)
    elif have_release and dialogue.split == "test":
        step.count("dialogues-without-references")
    for row in multiref_contexts(dialogue, chosen, text_options, released_first):
        row["split"] = dialogue.split
        step.keep(row, f"contexts-{dialogue.split}")
    return step.outcome()


# --- context-response pairs --------------------------------------------------------------

def dialogue_pairs(dialogue, text_options) -> Outcome:
    """A dialogue of any split -> its ``contexts`` rows (:func:`dailydialog_pp.contexts.context_pairs`),
    each with its split; counted as ``contexts/pairs-<split>``."""
    step = _Step(NS_CONTEXTS)
    for row in context_pairs(dialogue, text_options):
        row["split"] = dialogue.split
        step.keep(row, f"pairs-{dialogue.split}")
    return step.outcome()


# --- DD++ (section 5) --------------------------------------------------------------------

def duplicate_block(dialogue, near_ratio) -> tuple:
    """``(group key, dialogue)`` for duplicate removal: the duplicate key, or a blocking key
    for near duplicates."""
    if near_ratio is None:
        return dialogue_key(dialogue.turns), dialogue
    return near_duplicate_block(dialogue), dialogue


def dedup_group(item, dedup: bool, near_ratio=None) -> Outcome:
    """``(group key, dialogues)`` -> the dialogues kept; each duplicate a dead letter."""
    step = _Step(NS_DDPP)
    _, dialogues = item
    dialogues = list(dialogues)
    if not dedup:
        for d in dialogues:
            step.keep(d, "dialogues-kept")
        return step.outcome()
    for kept, removed in cluster_duplicates(dialogues, near_ratio):
        step.keep(kept, "dialogues-kept")
        for d in removed:
            step.reject("duplicate-dialogue", dead_letter(
                "duplicate-dialogue", f"{d.dialogue_id} duplicates {kept.dialogue_id}", None, None, d.dialogue_id))
    return step.outcome()


def dialogue_contexts(dialogue, chunk_options, text_options) -> Outcome:
    """A dialogue -> ``(context key, row)`` per chunk; a dialogue too short for any is a dead letter."""
    step = _Step(NS_DDPP)
    rows = ddpp_contexts(dialogue, chunk_options, text_options)
    if not rows:
        step.reject("too-short-dialogue", dead_letter(
            "too-short-dialogue", f"{dialogue.dialogue_id} has {len(dialogue.turns)} turn(s)", None, None,
            dialogue.dialogue_id))
    for row in rows:
        step.keep((dialogue_key(row.pop("raw_context")), row), "contexts")
    return step.outcome()


def _attach(row: dict, chosen) -> dict:
    """``row`` with the released responses of ``chosen`` (or, with none, its own answer)."""
    if chosen is None:
        row["positive_responses"] = [row["response"]]
        row["adversarial_negative_responses"] = []
        row["source"] = "dailydialog"
        return row
    row["positive_responses"] = [s for s in (collapse_spaces(x) for x in chosen.positive_responses) if s]
    row["adversarial_negative_responses"] = [
        s for s in (collapse_spaces(x) for x in chosen.adversarial_negative_responses) if s]
    row["source"] = chosen.source
    row["released_random"] = [s for s in (collapse_spaces(x) for x in chosen.random_negative_responses) if s]
    return row


def join_responses(item) -> Outcome:
    """``(context key, {"context": [...], "released": [...]})`` -> rows with the released
    responses; a released context no generated context matches is a dead letter."""
    step = _Step(NS_DDPP)
    _, grouped = item
    contexts = sorted(grouped["context"], key=lambda r: natural_key(r["id"]))
    released = list(grouped["released"])
    if released and not contexts:
        for rel in released:
            step.reject(f"unmatched-{rel.source}", dead_letter(
                "released-context-unmatched", f"{rel.source} id {rel.release_id}: no generated context has this text",
                _rel(rel.path), rel.line, " | ".join(rel.context)))
        return step.outcome()
    chosen = pick_released(released) if released else None
    if chosen is not None:
        for rel in released:
            step.count(f"matched-{rel.source}")
        step.count("released-duplicate-context", len(released) - 1)
    for row in contexts:
        step.keep(_attach(row, chosen), "contexts-with-released-responses" if chosen is not None
                  else "contexts-without-released-responses")
    return step.outcome()


def add_split(row, split_options) -> Outcome:
    """The row with its split, a hash of its dialogue id (a dialogue never spans two splits)."""
    from dailydialog_pp.splits import assign_split

    step = _Step(NS_DDPP)
    row = dict(row)
    row["split"] = assign_split(row["dialogue_id"], split_options)
    step.keep(row, f"contexts-{row['split']}")
    return step.outcome()


def add_negatives(row, pool, negative_options) -> Outcome:
    """The row with its random negatives: the released ones (``keep_released``) or drawn from ``pool``."""
    from dailydialog_pp.negatives import sample_negatives

    step = _Step(NS_DDPP)
    row = dict(row)
    released = row.pop("released_random", None)
    if negative_options.keep_released and released:
        row["random_negative_responses"] = released
        step.keep(row, "released-random-negatives-kept")
        return step.outcome()
    row["random_negative_responses"] = sample_negatives(
        row["id"], row["dialogue_id"], row["positive_responses"], pool, negative_options)
    if len(row["random_negative_responses"]) < negative_options.count:
        step.count("too-few-random-negatives")
    step.keep(row)
    return step.outcome()


def corrupt_row(row, names, seed) -> Outcome:
    """One ``dailydialog_pp_corrupted`` row per corruption in ``names`` of a row's positives."""
    from dailydialog_pp.corruptions import corrupt

    step = _Step(NS_DDPP)
    for name in names:
        step.keep({
            "id": f"{row['id']}:{name}",
            "dialogue_id": row["dialogue_id"],
            "context": row["context"],
            "corruption": name,
            "positive_responses": row["positive_responses"],
            "corrupted_responses": [corrupt(p, name, key=f"{row['id']}:{i}", seed=seed)
                                    for i, p in enumerate(row["positive_responses"])],
            "split": row["split"],
        })
    return step.outcome()
