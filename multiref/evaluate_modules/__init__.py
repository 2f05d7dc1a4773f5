"""Hugging Face ``evaluate`` modules shipped with multiref (one folder each, with a card).

``evaluate.load(evaluate_module_path("lsdscc_metrics"))`` loads MaxBLEU/MDS/PDS;
``evaluate_module_path("multiref_metrics")`` the other multi-reference metrics. Both work
offline: the module scripts only import ``multiref`` (installed) and ``evaluate``.
"""

from __future__ import annotations

import os

MODULES = ("lsdscc_metrics", "multiref_metrics")
_LSDSCC_METRICS = ("maxbleu", "mds", "pds")


def evaluate_module_path(name: str) -> str:
    """The folder of the evaluate module for ``name``: a module name (``lsdscc_metrics``,
    ``multiref_metrics``) or a metric name (``maxbleu``/``mds``/``pds`` -> ``lsdscc_metrics``,
    any other registered metric -> ``multiref_metrics``). ValueError for an unknown name."""
    if name not in MODULES:
        from multiref.metrics import METRICS, RECALL_PREFIX

        if name in _LSDSCC_METRICS:
            name = "lsdscc_metrics"
        elif name in METRICS or (name.startswith(RECALL_PREFIX) and name[len(RECALL_PREFIX):] in METRICS):
            name = "multiref_metrics"
        else:
            raise ValueError(f"unknown evaluate module or metric {name!r}; modules: {', '.join(MODULES)}")
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
