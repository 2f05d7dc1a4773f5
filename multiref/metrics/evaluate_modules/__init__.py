"""Hugging Face ``evaluate`` modules shipped with multiref (one folder each, with a card).

``evaluate.load(multiref.metrics.evaluate_module_path("lsdscc_metrics"))`` loads
MaxBLEU/MDS/PDS; ``evaluate_module_path("multiref_metrics")`` the other multi-reference metrics. Both work
offline: the module scripts only import ``multiref`` (installed) and ``evaluate``.
"""

from __future__ import annotations

import os

from multiref.metrics.defaults import DEFAULT_FLAT, DEFAULT_GROUPED

MODULES = ("lsdscc_metrics", "multiref_metrics")
LSDSCC_METRICS = DEFAULT_GROUPED  # the metrics of lsdscc_metrics (multiref score's default for grouped references)
#: multiref_metrics' metric when none is named (multiref score's default for flat references)
DEFAULT_METRIC = DEFAULT_FLAT[0]


def module_folder(module: str) -> str:
    """The folder of evaluate module ``module`` (one of :data:`MODULES`). Metric names are
    resolved by :func:`multiref.metrics.evaluate_module_path`."""
    if module not in MODULES:
        raise ValueError(f"unknown evaluate module {module!r}; modules: {', '.join(MODULES)}")
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), module)


def texts(value, where: str, depth: int = 0):
    """``value`` checked as a string (``depth`` 0) or a list of ``depth`` nested lists of
    strings, as the modules' features declare them; a ValueError naming the position
    (``references[3][1] is None; expected a string``) for None or another type, which
    ``evaluate`` passes through as a null."""
    if depth == 0:
        if not isinstance(value, str):
            raise ValueError(f"{where} is {_shown(value)}; expected a string")
        return value
    if value is None or isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{where} is {_shown(value)}; expected a list of {'strings' if depth == 1 else 'lists'}")
    return [texts(v, f"{where}[{j}]", depth - 1) for j, v in enumerate(value)]


def _shown(value) -> str:
    return "None" if value is None else f"a {type(value).__name__} ({str(value)[:30]!r})"
