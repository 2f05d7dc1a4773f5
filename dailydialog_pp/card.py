"""The dataset card of the DailyDialog job's folder, made from its ``stats.json`` alone.

:func:`card_configs` turns the job's stats (options, counts, rows per split) into one
:class:`multiref.output.hfdata.ConfigInfo` per config that has rows, and a warning per empty split
(``datasets`` cannot load an empty split, so the card leaves it out). :func:`merged_meta`
puts them into the folder's metadata (``dataset_meta.json``, from which the README card is
rendered), replacing whatever an earlier run of this job recorded. Writing is the caller's.
"""

from __future__ import annotations

import json

from dailydialog_pp.schema import CONTEXTS, CORRUPTED, DDPP, MULTIREF, schema
from dailydialog_pp.steps import NS_CONTEXTS, NS_DDPP, NS_MULTIREF, NS_PARSE
from multiref import citations

#: Every config this job can write (a rerun replaces or removes each of them in the card).
CONFIGS = (MULTIREF, DDPP, CORRUPTED, CONTEXTS)

TITLE = "Multi-reference DailyDialog and DailyDialog++"
SUMMARY = ("Multi-reference DailyDialog and DailyDialog++ rebuilt from the DailyDialog release "
           "(docs/algorithms.md §4 and §5). Data licence: DailyDialog is CC BY-NC-SA 4.0; the derived "
           "releases inherit non-commercial share-alike terms.")

#: The Hub fields of the card's YAML (``size_categories`` comes from the rows:
#: :func:`multiref.output.hfdata.card_front`). DailyDialog is CC BY-NC-SA 4.0, and so is what is built on it.
CARD_DATA = {
    "pretty_name": TITLE,
    "license": "cc-by-nc-sa-4.0",
    "language": ["en"],
    "multilinguality": ["monolingual"],
    "annotations_creators": ["crowdsourced", "expert-generated"],
    "language_creators": ["expert-generated"],
    "source_datasets": ["extended|daily_dialog"],
    "task_categories": ["text-generation"],
    "task_ids": ["dialogue-modeling", "dialogue-generation"],
    "tags": ["multi-reference", "dialogue-evaluation"],
}

#: BibTeX of the three papers: DailyDialog, its multi-reference test set, DailyDialog++.
CITATIONS = (citations.LI_2017, citations.GUPTA_2019, citations.SAI_2020)

DESCRIPTIONS = {
    "multiref": ("Multi-reference DailyDialog (Gupta et al. 2019): every test dialogue cut after each turn "
                 "but the last; `references[0]` is the original next turn, followed by the released human "
                 "references (lowercased, PTB-tokenized as released). `id` is `<dialogue index>_<turn>` as "
                 "in multirefeval's test_duid_mapping.json."),
    "dailydialog_pp": ("DailyDialog++ (Sai et al. 2020) contexts rebuilt from DailyDialog: duplicates removed, "
                       "dialogues under 8 turns give one context, longer ones one per chunk; positive and "
                       "adversarial responses joined from the released files where the context matches "
                       "(`source` names the file; `dailydialog` means no released context matched and "
                       "`positive_responses` holds only the original answer); random negatives drawn from "
                       "other dialogues; splits by a hash of `dialogue_id`."),
    "dailydialog_pp_corrupted": ("Synthetic corruptions of the dailydialog_pp positives (reverse, shuffle, "
                                 "drop_punctuation, drop_stopwords, nouns, synonyms), one row per context and "
                                 "corruption, for probing metrics."),
    "contexts": ("Context-response pairs of every DailyDialog split (the release's own train/validation/test): "
                 "each dialogue cut after each turn but the last; `context` is turns 0..t, `response` turn t+1; "
                 "`id` is `<dialogue index>_<turn>` (for test, multirefeval's test_duid_mapping key). A corpus "
                 "for `multiref augment`."),
}


def config_options(card: dict, config: str) -> dict:
    """The options (``BuildOptions.card()``) that change ``config``'s data."""
    if config == MULTIREF:
        return {"text": card["text"], "multiref_splits": card["multiref_splits"],
                "first_reference": card["multiref_first_reference"]}
    if config == CONTEXTS:
        return {"text": card["text"]}
    out = {k: v for k, v in card.items() if not k.startswith("multiref_")}
    if config == DDPP:
        out.pop("corruptions")
    return out


def card_configs(stats: dict) -> tuple[list, list]:
    """``stats`` (as in stats.json) -> (ConfigInfo of every config with rows, in the job's
    order; warnings, one per empty split left out of the card)."""
    from multiref.output.hfdata import ConfigInfo

    infos, warnings = [], []
    counts = stats["counters"]
    for config in [c for c in CONFIGS if c in stats["configs"]]:
        splits = stats["configs"][config]
        listed = {s: n for s, n in splits.items() if n}
        for split in sorted(set(splits) - set(listed)):
            warnings.append(f"warning: {config}/{split} has no rows; it is left out of the dataset card")
        if not listed:
            continue
        namespaces = {MULTIREF: (NS_PARSE, NS_MULTIREF), CONTEXTS: (NS_PARSE, NS_CONTEXTS)}.get(config, (NS_PARSE, NS_DDPP))
        infos.append(ConfigInfo(
            name=config, description=DESCRIPTIONS[config], splits=listed, features=schema(config),
            options={"inputs": stats["inputs"], **config_options(stats["options"], config)},
            counts={k: v for k, v in counts.items() if k.split("/")[0] in namespaces}))
    return infos, warnings


def merged_meta(previous: dict | None, configs, infos, split_bytes: dict) -> dict | None:
    """The folder's metadata after a run that wrote ``configs``: ``previous`` (an earlier
    ``dataset_meta.json``, or None) with this job's configs replaced by ``infos`` (the
    configs with rows; ``split_bytes``: config -> {split: bytes}) and the others removed.
    None when there is nothing to write (no earlier card, no config with rows).

    Byte compatibility: the card was first written by one :func:`multiref.output.hfdata.add_config`
    per config, each reading back the JSON the previous one wrote. So every entry but the
    last added went through JSON (its feature keys sorted); the same happens here, so the
    card's bytes are those of earlier builds."""
    from multiref.output import hfdata

    meta = previous if previous is not None else {"title": None, "summary": None, "configs": {}, "sections": {}}
    by_name = {info.name: info for info in infos}
    changed = False
    for config in [c for c in CONFIGS if c not in configs] + [c for c in CONFIGS if c in configs]:
        if config not in by_name and config not in meta.get("configs", {}):
            continue
        meta, changed = json.loads(hfdata.meta_text(meta)), True  # as the earlier entry was read back
        if config not in by_name:
            meta["configs"].pop(config)
            continue
        meta["title"], meta["summary"] = TITLE, SUMMARY
        meta["card_data"], meta["citations"] = dict(CARD_DATA), list(CITATIONS)
        meta.setdefault("sections", {})
        meta["configs"][config] = hfdata.config_entry(by_name[config], split_bytes[config])
    return meta if changed else None
