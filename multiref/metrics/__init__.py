"""Multi-reference dialogue metrics (docs/algorithms.md sections 3, 4, 6 and 8).

Use::

    from multiref.metrics import get_metric, Item
    bleu = get_metric("bleu", order=4, smoothing="nltk1", tokenizer="whitespace")
    bleu.sentence_score("the cat sat", ["the cat sat down", "a cat sat"])  # one hypothesis
    result = bleu.score_items([Item(id="q1", hypotheses=["..."], references=["...", "..."])])
    result.score, result.signature, result.per_item

Metric classes are looked up by name in ``METRICS`` (``"module:Class"`` strings, imported on
first use, so ``import multiref.metrics`` stays cheap). See :mod:`multiref.metrics.base` for
the interface every metric implements.
"""

from __future__ import annotations

import importlib

from multiref.metrics.base import Item, Metric, Score  # noqa: F401  (re-exported)

# name -> "module:Class". Each class documents its options; get_metric passes them through.
METRICS = {
    "bleu": "multiref.metrics.bleu:BLEU",
    "maxbleu": "multiref.metrics.lsdscc:MaxBLEU",
    "mds": "multiref.metrics.lsdscc:MDS",
    "pds": "multiref.metrics.lsdscc:PDS",
    "delta_bleu": "multiref.metrics.delta_bleu:DeltaBLEU",
    "rouge_l": "multiref.metrics.rouge:RougeL",
    "meteor": "multiref.metrics.meteor:Meteor",
    "embedding_average": "multiref.metrics.embedding:EmbeddingAverage",
    "vector_extrema": "multiref.metrics.embedding:VectorExtrema",
    "greedy_matching": "multiref.metrics.embedding:GreedyMatching",
    "distinct": "multiref.metrics.diversity:Distinct",
    "distinct_per_utterance": "multiref.metrics.diversity:DistinctPerUtterance",
    "ead": "multiref.metrics.diversity:EAD",
    "self_bleu": "multiref.metrics.diversity:SelfBLEU",
    "recall_bleu": "multiref.metrics.diversity:RecallBLEU",
}
# ``recall_<name>`` for any pairwise metric name is also accepted (see get_metric).
RECALL_PREFIX = "recall_"


def available_metrics() -> list:
    """Names accepted by :func:`get_metric`, sorted."""
    return sorted(METRICS)


def metric_class(name: str) -> type:
    """The class registered under ``name``; ``ValueError`` naming the choices if unknown."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; choose one of: {', '.join(available_metrics())}")
    module_name, class_name = METRICS[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def accepted_options(name: str) -> set:
    """Keyword options ``get_metric(name, ...)`` accepts; ValueError for an unknown name.

    A ``recall_<pairwise>`` wrapper accepts its own options plus its base metric's, except
    ``aggregate`` (the recall form fixes its aggregation: max over outputs).
    """
    import inspect

    base = None
    if name not in METRICS and name.startswith(RECALL_PREFIX) and name[len(RECALL_PREFIX):] in METRICS:
        base, cls = name[len(RECALL_PREFIX):], metric_class("recall_bleu")
    else:
        cls = metric_class(name)
    params = inspect.signature(cls.__init__).parameters.values()
    names = {p.name for p in params if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    if any(p.kind is p.VAR_KEYWORD for p in params):  # a wrapper: also what its base metric takes
        names |= accepted_options(base or "bleu")
        names.discard("aggregate")
    return names


def get_metric(name: str, **options) -> Metric:
    """Build metric ``name`` with ``options`` (each class documents the ones it takes).

    ``recall_<pairwise>`` (e.g. ``recall_rouge_l``) wraps a pairwise metric in the recall
    (coverage) form of docs/algorithms.md#4-multiref-dd when no class is registered under that name.
    Raises ``ValueError`` for an unknown name or option.
    """
    if name not in METRICS and name.startswith(RECALL_PREFIX) and name[len(RECALL_PREFIX):] in METRICS:
        recall_cls = metric_class("recall_bleu")
        return recall_cls(base=name[len(RECALL_PREFIX):], **options)
    cls = metric_class(name)
    try:
        return cls(**options)
    except TypeError as exc:
        raise ValueError(f"metric {name!r}: {exc}") from None


def evaluate_module_path(name: str) -> str:
    """The folder of the Hugging Face ``evaluate`` module for ``name``, for ``evaluate.load``:
    a module name (``lsdscc_metrics``, ``multiref_metrics``) or a metric name (``maxbleu``/``mds``/
    ``pds`` -> ``lsdscc_metrics``, any other registered metric -> ``multiref_metrics``; see
    :mod:`multiref.metrics.evaluate_modules`). ValueError for an unknown name."""
    from multiref.metrics.evaluate_modules import LSDSCC_METRICS, MODULES, module_folder

    if name in MODULES:
        return module_folder(name)
    if name in LSDSCC_METRICS:
        return module_folder("lsdscc_metrics")
    if name in METRICS or (name.startswith(RECALL_PREFIX) and name[len(RECALL_PREFIX):] in METRICS):
        return module_folder("multiref_metrics")
    raise ValueError(f"unknown evaluate module or metric {name!r}; modules: {', '.join(MODULES)}")
