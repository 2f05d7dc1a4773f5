"""LSDSCC's MaxBLEU, MDS and PDS as a Hugging Face ``evaluate`` module (computed by multiref)."""

import datasets
import evaluate

from multiref import citations
from multiref.metrics import Item, get_metric
from multiref.metrics.evaluate_modules import LSDSCC_METRICS, texts

_CITATION = citations.XU_2018

_DESCRIPTION = """\
Diversity-oriented metrics of the LSDSCC paper. Each query has several system outputs
(hypotheses) and reference groups (references judged similar by annotators). Every hypothesis
aligns to the group that maximizes its multi-reference BLEU against that group (ties: the
first group). MaxBLEU is the mean of those maxima (over a query's hypotheses, then over
queries); MDS is the share of a query's groups that some hypothesis aligns to; PDS the
share of its references in the aligned groups. Defaults follow the public LSDSCC scorer:
BLEU-4 with add-one smoothing and no brevity penalty.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one list of hypothesis strings per query.
    references: one list of reference groups per query; a group is a list of reference strings.
    order: BLEU n-gram order (default 4).
    weights: custom n-gram weights (override ``order``).
    smoothing: "add1" (default), "none", or "nltk0".."nltk7" (NLTK's SmoothingFunction methods).
    brevity_penalty: whether the alignment BLEU uses the brevity penalty (default False).
    tokenizer: "whitespace" (default), "treebank", "nltk", "tweet", "13a" or "char".
    lowercase: lowercase before tokenizing (default False).
    ties: when an output ties between groups: "lsdscc" (the public scorer's group order and sums), "first"
        (the first group in the given order); "auto" (default, as `get_metric` and `multiref score`) =
        lsdscc with the public scorer's BLEU (add1, no brevity penalty, uniform weights), else first.
    group_ids: optional, one list of group ids per query (the public file's keys, e.g. "1", "2", "null"):
        with ties "lsdscc" the groups are ordered as the public scorer orders them.
Returns:
    maxbleu, mds, pds: floats in [0, 1];
    signatures: {"maxbleu": ..., "mds": ..., "pds": ...}: how each number was computed (the BLEU options,
        tie rule, tokenizer, references per query, version);
    signature: maxbleu's signature (kept for older callers).
Examples:
    >>> import evaluate
    >>> from multiref.metrics import evaluate_module_path
    >>> lsdscc = evaluate.load(evaluate_module_path("lsdscc_metrics"))
    >>> predictions = [["the cat sat on a red mat", "a dog barked twice", "the cat sat"]]
    >>> references = [[["the cat sat on the mat", "a cat sat on a mat"],
    ...                ["the dog barked loudly", "a dog barked at me"],
    ...                ["i like turtles"]]]
    >>> results = lsdscc.compute(predictions=predictions, references=references)
    >>> print(round(results["maxbleu"], 4), round(results["mds"], 4), round(results["pds"], 4))
    0.7919 0.6667 0.8
    >>> for name, signature in results["signatures"].items():
    ...     print(signature)
    maxbleu|tok:whitespace|lc:no|order:4|smooth:add1|bp:no|conv:lsdscc|ties:lsdscc|nrefs:5|version:1-multiref0.1.0
    mds|tok:whitespace|lc:no|order:4|smooth:add1|bp:no|conv:lsdscc|ties:lsdscc|nrefs:5|version:1-multiref0.1.0
    pds|tok:whitespace|lc:no|order:4|smooth:add1|bp:no|conv:lsdscc|ties:lsdscc|nrefs:5|version:1-multiref0.1.0
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LsdsccMetrics(evaluate.Metric):
    """MaxBLEU, MDS and PDS (LSDSCC, Xu et al. 2018) via the multiref library."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Sequence(datasets.Sequence(datasets.Value("string"))),
                }
            ),
            codebase_urls=["https://github.com/neural-dialogue-metrics/LSDSCC"],
            reference_urls=["https://aclanthology.org/N18-1188/"],
        )

    def _compute(self, predictions, references, order=None, weights=None, smoothing=None, brevity_penalty=None,
                 tokenizer=None, lowercase=None, ties=None, group_ids=None):
        """Options not given (None) take the metrics' own defaults (``get_metric``'s, which
        ``multiref score`` uses too): one default per option."""
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} prediction lists but {len(references)} reference group lists")
        if group_ids is not None and len(group_ids) != len(references):
            raise ValueError(f"{len(group_ids)} group id lists but {len(references)} reference group lists")
        items = [Item(id=str(i), hypotheses=texts(hyps, f"predictions[{i}]", 1),
                      groups=texts(groups, f"references[{i}]", 2),
                      group_ids=[str(g) for g in group_ids[i]] if group_ids is not None else None)
                 for i, (hyps, groups) in enumerate(zip(predictions, references))]
        options = {k: v for k, v in dict(order=order, weights=weights, smoothing=smoothing,
                                         brevity_penalty=brevity_penalty, tokenizer=tokenizer, lowercase=lowercase,
                                         ties=ties).items() if v is not None}
        results = {name: get_metric(name, **options).score_items(items) for name in LSDSCC_METRICS}
        out = {name: r.score for name, r in results.items()}
        out["signatures"] = {name: r.signature for name, r in results.items()}
        out["signature"] = results["maxbleu"].signature  # kept for old callers: maxbleu's
        return out
