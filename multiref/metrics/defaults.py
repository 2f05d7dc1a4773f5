"""The resampling defaults, declared once (standard library only, so that building a parser does
not import numpy): :mod:`multiref.metrics.significance`, ``multiref score`` and the benchmarks read
them from here. The seed is :data:`multiref.util.defaults.SEED`, re-exported."""

from multiref.util.defaults import SEED as DEFAULT_SEED  # noqa: E402,F401  (declared there, once)
#: paired bootstrap resamples (and percentile-interval resamples), sacrebleu's default
DEFAULT_BS = 1000
#: approximate randomization trials, sacrebleu's default
DEFAULT_AR = 10000
#: the paired tests: paired bootstrap, approximate randomization
TESTS = ("bs", "ar")
#: p-value corrections for several systems against one baseline
CORRECTIONS = ("none", "holm")
