"""``multiref metrics``: list the metrics, and print the path of their evaluate modules.

    multiref metrics list
    multiref metrics path maxbleu     # -> .../multiref/metrics/evaluate_modules/lsdscc_metrics
"""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    from multiref_cli.common import group

    sub = group(parser)
    p = sub.add_parser("list", help="list metric names with a one-line description",
                       description="List metric names with a one-line description.")
    p.set_defaults(func=handle_list)
    p = sub.add_parser("path", help="print the folder of a metric's Hugging Face evaluate module",
                       description="Print the folder of a metric's Hugging Face evaluate module, for evaluate.load(PATH).")
    p.add_argument("name", help="a metric name (e.g. maxbleu, bleu) or a module name (lsdscc_metrics, multiref_metrics)")
    p.set_defaults(func=handle_path)


DESCRIPTIONS = {
    "bleu": "multi-reference BLEU (clipped counts; corpus BLEU = NLTK corpus_bleu, or sacrebleu/nlg-eval with --bleu-convention)",
    "maxbleu": "LSDSCC MaxBLEU: each output's best multi-reference BLEU over reference groups, averaged",
    "mds": "LSDSCC MDS: share of reference groups covered by a query's outputs",
    "pds": "LSDSCC PDS: share of references in the groups covered by a query's outputs",
    "delta_bleu": "deltaBLEU: BLEU with reference weights in [-1, 1] (Galley et al. 2015)",
    "rouge_l": "ROUGE-L F (max over references, or the nlg-eval multi-reference form)",
    "meteor": "METEOR: NLTK (needs WordNet) or METEOR 1.5 (--meteor-impl 1.5, the jar nlg-eval runs)",
    "embedding_average": "Embedding Average cosine (needs --vectors)",
    "vector_extrema": "Vector Extrema cosine (needs --vectors)",
    "greedy_matching": "Greedy Matching (needs --vectors)",
    "distinct": "Distinct-n over all outputs of a system (Li et al. 2016)",
    "distinct_per_utterance": "Distinct-n of each output, averaged (another number than distinct)",
    "self_bleu": "Self-BLEU: each output against the other outputs of its context (lower = more diverse)",
    "recall_bleu": "recall/coverage: each reference's best BLEU over a context's outputs, averaged",
}


def _summary(name: str) -> str:
    from multiref.metrics import metric_class

    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name]

    try:
        cls = metric_class(name)
    except ImportError as exc:  # a metric whose module is missing in this installation
        return f"(not available: {exc})"
    doc = (cls.__doc__ or "").strip().splitlines()
    return doc[0].strip() if doc else ""


def handle_list(args) -> int:
    from multiref.metrics import available_metrics

    names = available_metrics()
    width = max(len(n) for n in names)
    for name in names:
        print(f"{name:<{width}}  {_summary(name)}")
    print(f"{'recall_<metric>':<{width}}  recall (coverage) form of any pairwise metric, e.g. recall_rouge_l")
    return 0


def handle_path(args) -> int:
    from multiref.util.errors import UserError
    from multiref.metrics import evaluate_module_path

    try:
        print(evaluate_module_path(args.name))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    sys.stdout.flush()
    return 0
