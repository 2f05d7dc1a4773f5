"""Multi-reference dialogue metrics as a Hugging Face ``evaluate`` module (computed by multiref)."""

import datasets
import evaluate

from multiref import citations
from multiref.metrics import Item, available_metrics, get_metric
from multiref.metrics.evaluate_modules import DEFAULT_METRIC, texts

_CITATION = citations.GUPTA_2019

_DESCRIPTION = """\
Multi-reference metrics for dialogue responses, computed by the multiref library: BLEU
(clipped multi-reference counts; NLTK's formulas, or sacrebleu's or nlg-eval's with
``convention``), deltaBLEU, ROUGE-L, METEOR (NLTK's, or METEOR 1.5's jar with ``impl="1.5"``),
Embedding Average / Vector Extrema / Greedy Matching (user-supplied word vectors),
Distinct-n, Self-BLEU and recall (coverage) forms. Choose the metric with the config name
(evaluate.load(path, "rouge_l")) or the ``metric`` argument of ``compute``; other keyword
arguments are the metric's options and are recorded in the returned signature.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions: one hypothesis string per item, or one list of hypothesis strings per item
        (for Distinct, Self-BLEU and recall metrics, which use several outputs per context).
    references: one list of reference strings per item (may be empty lists for Distinct).
    metric: metric name (default: the config name, or "bleu"); see `multiref metrics list`.
    weights_per_reference: for delta_bleu, one list of reference weights in [-1, 1] per item.
    **options: the metric's options, e.g. order=2, smoothing="nltk1", brevity_penalty=False,
        convention="sacrebleu" (or "nlgeval"; default "nltk"), impl="1.5" (METEOR),
        aggregate="max", tokenizer="treebank", lowercase=True, vectors="vectors.kv".
Returns:
    <metric name>: the score (a float);
    signature: every option that changed the number.
Examples:
    >>> import evaluate
    >>> from multiref.metrics import evaluate_module_path
    >>> multiref_metrics = evaluate.load(evaluate_module_path("multiref_metrics"))
    >>> predictions = ["the cat sat on a mat", "i am going home now"]
    >>> references = [["the cat is on the mat", "a cat sat on the mat"],
    ...               ["i am going home", "i will go home now"]]
    >>> results = multiref_metrics.compute(predictions=predictions, references=references,
    ...                                    metric="bleu", order=2)
    >>> print(round(results["bleu"], 4))
    0.8819
    >>> print(results["signature"])
    bleu|tok:whitespace|lc:no|agg:standard|order:2|smooth:none|bp:yes|conv:nltk|nrefs:2|version:1-multiref0.1.0
    >>> results = multiref_metrics.compute(predictions=[["i am going home", "i am going out"]],
    ...                                    references=[[]], metric="distinct", order=1)
    >>> print(round(results["distinct"], 4))
    0.625
"""

_ONE = datasets.Features(
    {"predictions": datasets.Value("string"), "references": datasets.Sequence(datasets.Value("string"))}
)
_MANY = datasets.Features(
    {"predictions": datasets.Sequence(datasets.Value("string")), "references": datasets.Sequence(datasets.Value("string"))}
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MultirefMetrics(evaluate.Metric):
    """Multi-reference BLEU, deltaBLEU, ROUGE-L, METEOR, embedding, Distinct and Self-BLEU via multiref."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=[_ONE, _MANY],
            codebase_urls=["https://github.com/Shikib/Multi-Reference-DailyDialog"],
            reference_urls=["https://aclanthology.org/W19-5944/"],
        )

    def _compute(self, predictions, references, metric=None, weights_per_reference=None, **options):
        name = metric or (self.config_name if self.config_name not in (None, "default") else DEFAULT_METRIC)
        if name not in available_metrics() and not name.startswith("recall_"):
            raise ValueError(f"unknown metric {name!r}; choose one of: {', '.join(available_metrics())}")
        if len(predictions) != len(references):
            raise ValueError(f"{len(predictions)} predictions but {len(references)} reference lists")
        if weights_per_reference is not None and len(weights_per_reference) != len(references):
            raise ValueError("weights_per_reference needs one list of weights per item")
        items = []
        for i, (pred, refs) in enumerate(zip(predictions, references)):
            hyps = [pred] if isinstance(pred, str) else texts(pred, f"predictions[{i}]", 1)
            weights = list(weights_per_reference[i]) if weights_per_reference is not None else None
            items.append(Item(id=str(i), hypotheses=hyps, references=texts(refs, f"references[{i}]", 1), weights=weights))
        scorer = get_metric(name, **{k: v for k, v in options.items() if v is not None})
        result = scorer.score_items(items)
        return {result.name: result.score, "signature": result.signature}
