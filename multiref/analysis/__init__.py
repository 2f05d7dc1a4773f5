"""Evaluating the evaluators (GitHub issue #6).

How well does a metric agree with people, and does adding references help?

- :mod:`multiref.analysis.stats`: Pearson, Spearman, Kendall with p-values, seeded bootstrap
  confidence intervals, Fisher-z intervals, Williams' test and a paired permutation test for
  two correlations with the same human scores, point-biserial correlation, threshold search
  (docs/algorithms.md sections 5, 8).
- :mod:`multiref.analysis.agreement`: annotator agreement (Fleiss' kappa, Krippendorff's alpha,
  the adjusted Rand index).
- :mod:`multiref.analysis.scoring`: metric specs (``bleu2``, ``rouge_l:beta=1.2``) and
  scoring helpers that work with any object exposing ``tokenized_sentence_score``.
- :mod:`multiref.analysis.correlation`: metric against human ratings, single against
  multiple references, response and system level (docs/algorithms.md#4-multiref-dd).
- :mod:`multiref.analysis.discrimination`: positives against negatives on DailyDialog++
  (docs/algorithms.md#5-dd).
- :mod:`multiref.analysis.refcount`: correlation as the number of references grows.
- :mod:`multiref.analysis.regression`: Sugiyama's AM, WS and SVR evaluators (docs/algorithms.md#7-sugiyama-regression).
- :mod:`multiref.analysis.vectors`: seeded word2vec vectors trained on DailyDialog.
- :mod:`multiref.analysis.reports`: JSON, Markdown and PNG reports.
- :mod:`multiref.analysis.paper_defaults`: each command's defaults, from the paper it follows
  (Gupta et al. 2019, Sai et al. 2020, Sugiyama et al.).

Nothing heavy is imported here: each module imports numpy/scipy/sklearn/matplotlib inside
the functions that use them.
"""

from multiref.analysis.agreement import adjusted_rand_index, fleiss_kappa, krippendorff_alpha
from multiref.analysis.stats import (bootstrap_correlations, fisher_interval, permutation_test,
                                     williams_test)

__all__ = ["adjusted_rand_index", "bootstrap_correlations", "fisher_interval", "fleiss_kappa",
           "krippendorff_alpha", "permutation_test", "williams_test"]
