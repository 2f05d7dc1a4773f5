"""What ``multiref lsdscc annotate browse`` shows: a test set as one JSON document for the page.

Sources (docs/algorithms.md#2-lsdscc-test-set):

- a dataset folder's ``test_grouped`` config (default when present) or any config with
  ``groups``/``references`` (read by :func:`multiref.metrics.references.load_references`);
- its ``test_candidates`` config: each query's candidates with provenance and the groups
  ``annotate export`` proposes (:func:`lsdscc.annotation.roundtrip.propose_groups`);
- the public LSDSCC JSON file ``{query: {group_id: [references]}}``.

With hypotheses (the JSON lines of ``multiref score``, matched by id or query), each query
shows its hypotheses, the group each one aligns to and that group's BLEU, and the query's
MaxBLEU (section 3: mean over hypotheses of the best group's BLEU); the test set's MaxBLEU
and the metric signature head the page. Queries without hypotheses show none.
"""

from __future__ import annotations

import os

from lsdscc.annotation.config import OVERLAP_THRESHOLD
from multiref.util.errors import UserError


def _candidates_items(dataset: str, overlap_threshold: float) -> list:
    from lsdscc.annotation.roundtrip import propose_groups
    from lsdscc.testset.assemble import read_candidates

    items = []
    for row in read_candidates(dataset):
        cands = row["candidates"]
        proposed = propose_groups([c["text"] for c in cands], overlap_threshold)
        items.append({"id": row["id"], "query": row["query"], "stratum": row["stratum"], "candidates": [
            {"text": c["text"], "own": bool(c["own"]), "source_query": c["source_query"],
             "lucene_score": c["lucene_score"], "doc2vec_cosine": c["doc2vec_cosine"], "proposed_group": g}
            for c, g in zip(cands, proposed)]})
    return items


def _refset_items(refset) -> list:
    items = []
    for r in refset.records:
        if r.groups is not None:
            groups = [{"id": gid, "references": list(g)} for gid, g in zip(r.group_ids, r.groups)]
        else:
            groups = [{"id": "", "references": list(r.references)}]
        items.append({"id": r.id, "query": r.query if r.query is not None else r.id, "groups": groups})
    return items


def _add_hypotheses(items: list, refset, path: str) -> dict:
    """Attach hypotheses and MaxBLEU to ``items`` (in place); return the test-set score."""
    from multiref.metrics import get_metric
    from multiref.metrics.references import load_hypotheses, match_items, to_items

    if not refset.grouped:
        raise UserError(f"{refset.source}: MaxBLEU needs grouped references (test_grouped or the public JSON)")
    pairs = match_items(refset, load_hypotheses(path), path, partial=True)
    scored = to_items(pairs)
    metric = get_metric("maxbleu")
    by_id = {item["id"]: item for item in items}
    for scored_item in scored:
        item = by_id[scored_item.id]
        alignment = metric.alignment(scored_item)
        item["hypotheses"] = [{"text": h, "group": item["groups"][g]["id"], "bleu": bleu}
                              for h, (g, bleu) in zip(scored_item.hypotheses, alignment)]
        item["maxbleu"] = metric.item_score(scored_item)
    score = metric.score_items(scored)
    return {"score": score.score, "signature": score.signature, "queries": len(scored)}


def browse_document(dataset: str | None = None, references: str | None = None, config: str | None = None,
                    hypotheses: str | None = None, overlap_threshold: float = OVERLAP_THRESHOLD) -> dict:
    """The page's document: ``{"mode": "browse", "source", "kind", "items": [...], "maxbleu"}``.

    Give exactly one of ``dataset`` (a folder; ``config`` default ``test_grouped`` when
    present, else ``test_candidates``) or ``references`` (the public JSON or JSON lines).
    Each item has ``id``, ``query`` and either ``groups`` ([{id, references}]) or
    ``candidates``; with ``hypotheses``, ``hypotheses`` ([{text, group, bleu}]) and ``maxbleu``.
    """
    from multiref.metrics.references import load_references

    if (dataset is None) == (references is None):
        raise UserError("give exactly one of --dataset FOLDER or --references FILE")
    if references is not None:
        if config is not None:
            raise UserError("--config applies to --dataset, not to --references")
        if os.path.isdir(references):
            raise UserError(f"--references {references} is a folder; use --dataset for a dataset folder")
        refset, source, kind = load_references(references), references, "references"
    else:
        if not os.path.isdir(dataset):
            raise UserError(f"--dataset {dataset}: no such folder")
        if config is None:
            config = "test_grouped" if os.path.isdir(os.path.join(dataset, "test_grouped")) else "test_candidates"
        source, kind = f"{dataset} ({config})", config
        if config == "test_candidates":
            if hypotheses is not None:
                raise UserError("--hypotheses needs reference groups: browse test_grouped or the public JSON, "
                                "not test_candidates")
            items = _candidates_items(dataset, overlap_threshold)
            return {"mode": "browse", "source": source, "kind": kind, "items": items, "maxbleu": None}
        refset = load_references(dataset, config, "test")
    items = _refset_items(refset)
    score = _add_hypotheses(items, refset, hypotheses) if hypotheses is not None else None
    return {"mode": "browse", "source": source, "kind": kind, "items": items, "maxbleu": score}
