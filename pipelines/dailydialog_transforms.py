"""The DailyDialog job's steps (ALGORITHMS.md sections 4 and 5): thin wrappers over the pure
functions of ``dailydialog_pp``, used by :func:`pipelines.dailydialog.build_pipeline`. Every
drop is counted with a Beam counter named after its reason and sent to a dead-letter output.
"""

from __future__ import annotations

import json
import os
import re

NS_PARSE = "dailydialog"
NS_MULTIREF = "multiref"
NS_DDPP = "dailydialog_pp"


# --- pure helpers used by the transforms ---------------------------------------------------

def natural_key(text: str) -> tuple:
    """Sort key that orders '2_10' after '2_9' (numbers compared as numbers)."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))


def row_sort_key(row) -> tuple:
    """The order of rows within a parquet file: by id, numbers compared as numbers."""
    return natural_key(row["id"])


def dead_letter(reason: str, detail: str, file=None, line=None, text=None) -> dict:
    return {"reason": reason, "detail": detail, "file": file, "line": line, "text": text}


def _rel(path):
    return os.path.basename(path) if path else path


def _rejected(rej):
    """A RejectedRecord as a dead letter on the ``rejected`` output (file named by basename)."""
    from apache_beam import pvalue

    letter = rej.dead_letter()
    letter["file"] = _rel(letter["file"])
    return pvalue.TaggedOutput("rejected", letter)


# --- transforms ---------------------------------------------------------------------------

_COUNTERS: dict = {}


def _counter(namespace: str, name: str, n: int = 1):
    """Increment Beam counter ``namespace/name`` (counter objects cached per process)."""
    if not n:
        return
    counter = _COUNTERS.get((namespace, name))
    if counter is None:
        from apache_beam.metrics import Metrics

        counter = _COUNTERS[(namespace, name)] = Metrics.counter(namespace, name)
    counter.inc(n)


def _parse_dialogue(raw):
    from dailydialog_pp.readers import RejectedRecord, parse_dialogue

    try:
        dialogue = parse_dialogue(raw)
    except RejectedRecord as rej:
        _counter(NS_PARSE, rej.reason)
        yield _rejected(rej)
        return
    _counter(NS_PARSE, f"dialogues-{dialogue.split}")
    yield dialogue


def _parse_multiref(item):
    from dailydialog_pp.readers import RejectedRecord, parse_multiref

    position, raw = item
    try:
        record = parse_multiref(raw, position)
    except RejectedRecord as rej:
        _counter(NS_MULTIREF, rej.reason)
        yield _rejected(rej)
        return
    _counter(NS_MULTIREF, "released-dialogues")
    yield ("test", record.index), record


def _parse_ddpp(raw):
    from dailydialog_pp.normalize import dialogue_key
    from dailydialog_pp.readers import RejectedRecord, parse_ddpp

    try:
        record = parse_ddpp(raw)
    except RejectedRecord as rej:
        _counter(NS_DDPP, f"{raw.kind}-{rej.reason}")
        yield _rejected(rej)
        return
    _counter(NS_DDPP, f"released-{record.source}")
    yield dialogue_key(record.context), record


def _join_multiref(item, text_options, have_release, released_first=False):
    """(key, {dialogue: [...], released: [...]}) -> multiref rows and dead letters."""
    from apache_beam import pvalue

    from dailydialog_pp.contexts import empty_references, multiref_contexts, multiref_matches

    _, grouped = item
    dialogues = list(grouped["dialogue"])
    released = sorted(grouped["released"], key=lambda r: r.line)
    for extra in released[1:]:
        _counter(NS_MULTIREF, "duplicate-index")
        yield pvalue.TaggedOutput("rejected", dead_letter(
            "duplicate-index", f"a second line with index {extra.index}", _rel(extra.path), extra.line))
    chosen = released[0] if released else None
    if not dialogues:
        if chosen is not None:
            _counter(NS_MULTIREF, "released-without-dialogue")
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "released-without-dialogue", f"no test dialogue with index {chosen.index}",
                _rel(chosen.path), chosen.line))
        return
    dialogue = dialogues[0]
    if chosen is not None and not multiref_matches(dialogue, chosen):
        _counter(NS_MULTIREF, "text-mismatch")
        yield pvalue.TaggedOutput("rejected", dead_letter(
            "text-mismatch", f"utterances differ from {dialogue.dialogue_id}; kept the original reference only",
            _rel(chosen.path), chosen.line))
        chosen = None
    if chosen is not None:
        _counter(NS_MULTIREF, "joined-dialogues")
        empty = empty_references(chosen)
        if empty:
            _counter(NS_MULTIREF, "empty-reference", empty)
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "empty-reference", f"{empty} empty reference(s) dropped from {dialogue.dialogue_id}",
                _rel(chosen.path), chosen.line))
    elif have_release and dialogue.split == "test":
        _counter(NS_MULTIREF, "dialogues-without-references")
    for row in multiref_contexts(dialogue, chosen, text_options, released_first):
        _counter(NS_MULTIREF, f"contexts-{dialogue.split}")
        row["split"] = dialogue.split
        yield row


def _dedup(item, dedup: bool, near_ratio=None):
    from apache_beam import pvalue

    from dailydialog_pp.contexts import cluster_duplicates

    _, dialogues = item
    dialogues = list(dialogues)
    if not dedup:
        for d in dialogues:
            _counter(NS_DDPP, "dialogues-kept")
            yield d
        return
    for kept, removed in cluster_duplicates(dialogues, near_ratio):
        _counter(NS_DDPP, "dialogues-kept")
        yield kept
        for d in removed:
            _counter(NS_DDPP, "duplicate-dialogue")
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "duplicate-dialogue", f"{d.dialogue_id} duplicates {kept.dialogue_id}", None, None, d.dialogue_id))


def _duplicate_block(dialogue, near_ratio):
    """Group key for duplicate removal: the duplicate key, or a blocking key for near duplicates."""
    from dailydialog_pp.contexts import near_duplicate_block
    from dailydialog_pp.normalize import dialogue_key

    if near_ratio is None:
        return dialogue_key(dialogue.turns), dialogue
    return near_duplicate_block(dialogue), dialogue


def _contexts(dialogue, chunk_options, text_options):
    from apache_beam import pvalue

    from dailydialog_pp.contexts import ddpp_contexts
    from dailydialog_pp.normalize import dialogue_key

    rows = ddpp_contexts(dialogue, chunk_options, text_options)
    if not rows:
        _counter(NS_DDPP, "too-short-dialogue")
        yield pvalue.TaggedOutput("rejected", dead_letter(
            "too-short-dialogue", f"{dialogue.dialogue_id} has {len(dialogue.turns)} turn(s)", None, None,
            dialogue.dialogue_id))
        return
    for row in rows:
        _counter(NS_DDPP, "contexts")
        yield dialogue_key(row.pop("raw_context")), row


def _join_ddpp(item):
    """(context key, {context: [...], released: [...]}) -> rows with released responses."""
    from apache_beam import pvalue

    from dailydialog_pp.contexts import pick_released
    from dailydialog_pp.normalize import collapse_spaces

    _, grouped = item
    contexts = sorted(grouped["context"], key=lambda r: natural_key(r["id"]))
    released = list(grouped["released"])
    chosen = pick_released(released) if released else None
    if released and not contexts:
        for rel in released:
            _counter(NS_DDPP, f"unmatched-{rel.source}")
            yield pvalue.TaggedOutput("rejected", dead_letter(
                "released-context-unmatched", f"{rel.source} id {rel.release_id}: no generated context has this text",
                _rel(rel.path), rel.line, " | ".join(rel.context)))
        return
    if chosen is not None:
        for rel in released:
            _counter(NS_DDPP, f"matched-{rel.source}")
        if len(released) > 1:
            _counter(NS_DDPP, "released-duplicate-context", len(released) - 1)
    for row in contexts:
        if chosen is not None:
            row["positive_responses"] = [s for s in (collapse_spaces(x) for x in chosen.positive_responses) if s]
            row["adversarial_negative_responses"] = [
                s for s in (collapse_spaces(x) for x in chosen.adversarial_negative_responses) if s]
            row["source"] = chosen.source
            row["released_random"] = [s for s in (collapse_spaces(x) for x in chosen.random_negative_responses) if s]
            _counter(NS_DDPP, "contexts-with-released-responses")
        else:
            row["positive_responses"] = [row["response"]]
            row["adversarial_negative_responses"] = []
            row["source"] = "dailydialog"
            _counter(NS_DDPP, "contexts-without-released-responses")
        yield row


def _add_split(row, split_options):
    from dailydialog_pp.splits import assign_split

    row = dict(row)
    row["split"] = assign_split(row["dialogue_id"], split_options)
    _counter(NS_DDPP, f"contexts-{row['split']}")
    return row


def _add_negatives(row, pool, negative_options):
    from dailydialog_pp.negatives import sample_negatives

    row = dict(row)
    released = row.pop("released_random", None)
    if negative_options.keep_released and released:
        _counter(NS_DDPP, "released-random-negatives-kept")
        row["random_negative_responses"] = released
        return row
    row["random_negative_responses"] = sample_negatives(
        row["id"], row["dialogue_id"], row["positive_responses"], pool, negative_options)
    if len(row["random_negative_responses"]) < negative_options.count:
        _counter(NS_DDPP, "too-few-random-negatives")
    return row


def _corrupt(row, names, seed):
    from dailydialog_pp.corruptions import corrupt

    for name in names:
        yield {
            "id": f"{row['id']}:{name}",
            "dialogue_id": row["dialogue_id"],
            "context": row["context"],
            "corruption": name,
            "positive_responses": row["positive_responses"],
            "corrupted_responses": [corrupt(p, name, key=f"{row['id']}:{i}", seed=seed)
                                    for i, p in enumerate(row["positive_responses"])],
            "split": row["split"],
        }


def rejected_jsonl(letters) -> bytes:
    """One reason's dead letters as JSON lines, sorted."""
    letters = sorted(json.dumps(d, sort_keys=True, ensure_ascii=False) for d in letters)
    return "".join(line + "\n" for line in letters).encode("utf-8")
