"""Hugging Face ``evaluate`` modules shipped with multiref (one folder each, with a card).

``evaluate.load(multiref.metrics.evaluate_module_path("lsdscc_metrics"))`` loads
MaxBLEU/MDS/PDS; ``evaluate_module_path("multiref_metrics")`` the other multi-reference metrics. Both work
offline: the module scripts only import ``multiref`` (installed) and ``evaluate``.
"""

from __future__ import annotations

import os

MODULES = ("lsdscc_metrics", "multiref_metrics")
LSDSCC_METRICS = ("maxbleu", "mds", "pds")  # the metrics of lsdscc_metrics; every other one is in multiref_metrics


def module_folder(module: str) -> str:
    """The folder of evaluate module ``module`` (one of :data:`MODULES`). Metric names are
    resolved by :func:`multiref.metrics.evaluate_module_path`."""
    if module not in MODULES:
        raise ValueError(f"unknown evaluate module {module!r}; modules: {', '.join(MODULES)}")
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), module)
