"""The corpus folder describes what it publishes: after the test set's leak removal
(docs/algorithms.md#test-set-step-5-no-leakage) ``stats.json``, the plots and the card's
Statistics section are redrawn from the published ``single_turn`` parquet files.

The corpus build draws them from its own counts, which are the published splits when the
test-set stage is skipped. The test-set stage then removes the test set's pairs from
``single_turn`` (more than half the pairs of the bundled sample), so :func:`describe_published`
counts the published files again: the queries by their number of published pairs, the pairs
per split (``multi_turn``'s too), and a last survival step, :data:`LEAK_STAGE`. The corpus as
built keeps its histogram and splits under ``responses_per_query_as_built`` and
``splits_as_built`` (the ``response_number`` column still counts the corpus as built,
docs/corpus.md#output-folder-and-columns).
"""

from __future__ import annotations

import glob
import json
import os
from collections import Counter
from typing import Mapping

from lsdscc.corpus.outputs import responses_per_query

LEAK_STAGE = "not used by the test set (leak removal)"
STATS = "stats.json"


def published_single_turn(folder: str) -> dict:
    """Counts of the published ``single_turn`` parquet files: ``{"splits": {split: pairs},
    "pairs", "queries", "histogram": {pairs of a query: queries}, "multi_turn": {split: rows}}``."""
    import pyarrow.parquet as pq

    multi = {}
    for path in sorted(glob.glob(os.path.join(folder, "multi_turn", "*.parquet"))):
        split = os.path.basename(path).split("-", 1)[0]
        multi[split] = multi.get(split, 0) + pq.read_metadata(path).num_rows
    splits, per_query = {}, Counter()
    for path in sorted(glob.glob(os.path.join(folder, "single_turn", "*.parquet"))):
        split = os.path.basename(path).split("-", 1)[0]
        ids = pq.read_table(path, columns=["query_id"]).column("query_id").to_pylist()
        splits[split] = splits.get(split, 0) + len(ids)
        per_query.update(ids)
    histogram = Counter(per_query.values())
    return {"splits": splits, "pairs": sum(splits.values()), "queries": len(per_query),
            "histogram": {str(k): histogram[k] for k in sorted(histogram)}, "multi_turn": multi}


def after_leak_removal(stats: Mapping, published: Mapping, removed: Mapping[str, int]) -> dict:
    """``stats`` of the corpus as built, made to describe the ``published`` single_turn
    (:func:`published_single_turn`) after the leak removal that dropped ``removed`` pairs
    (``{"removed_<reason>": n}``). Pure; a rerun of the stage gives the same result."""
    from lsdscc.corpus.outputs import survival

    out = json.loads(json.dumps(stats))
    out.setdefault("responses_per_query_as_built", out["responses_per_query"])
    out.setdefault("splits_as_built", out["splits"])
    out["responses_per_query"] = responses_per_query(published["histogram"])
    out["splits"] = {config: {**{s: 0 for s in out["splits_as_built"][config]}, **counts}
                     for config, counts in (("single_turn", published["splits"]), ("multi_turn", published["multi_turn"]))}
    out["test_set_leak_removal"] = dict(sorted(removed.items()))
    out["survival"] = [{"stage": s, "remaining": n} for s, n in survival(out["counts"])]
    out["survival"].append({"stage": LEAK_STAGE, "remaining": published["pairs"]})
    return out


def describe_published(folder: str, removed: Mapping[str, int]) -> dict | None:
    """Rewrite ``stats.json``, the plots and the card's Statistics section of the corpus
    folder from its published ``single_turn`` files; returns the new stats (None, and nothing
    written, for a folder without ``stats.json``: not written by the corpus build)."""
    from lsdscc.corpus import outputs
    from multiref.output import hfdata

    path = os.path.join(folder, STATS)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        stats = after_leak_removal(json.load(fh), published_single_turn(folder), removed)
    outputs.write_bytes(path, outputs.stats_json(stats))
    outputs.plot_all(folder, stats)
    meta = hfdata.load_meta(folder)
    if "Statistics" in meta.get("sections", {}):
        meta["sections"]["Statistics"] = outputs.statistics_section(stats)
        with open(os.path.join(folder, hfdata.META_FILE), "w", encoding="utf-8") as fh:
            fh.write(hfdata.meta_text(meta))
        hfdata.write_card(folder, meta)
    return stats
