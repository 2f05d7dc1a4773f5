"""The scoring defaults, declared once (standard library only, so that building a parser does
not import numpy): the metrics scored when none is named, and the resampling's.
:mod:`multiref.metrics.significance`, ``multiref score`` (:mod:`multiref.scoring.config`), the
evaluate modules and the benchmarks read them from here. The seed is
:data:`multiref.util.defaults.SEED`, re-exported."""

from multiref.util.defaults import SEED as DEFAULT_SEED  # noqa: E402,F401  (declared there, once)
#: the metrics scored when none is named: against grouped references (LSDSCC's MaxBLEU, MDS and PDS,
#: also the metrics of the ``lsdscc_metrics`` evaluate module), against flat ones
DEFAULT_GROUPED = ("maxbleu", "mds", "pds")
DEFAULT_FLAT = ("bleu",)
#: paired bootstrap resamples (and percentile-interval resamples), sacrebleu's default
DEFAULT_BS = 1000
#: approximate randomization trials, sacrebleu's default
DEFAULT_AR = 10000
#: the paired tests: paired bootstrap, approximate randomization
TESTS = ("bs", "ar")
#: p-value corrections for several systems against one baseline
CORRECTIONS = ("none", "holm")
