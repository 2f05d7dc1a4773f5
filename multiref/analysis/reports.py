"""Reports of the ``analyze`` commands: JSON, Markdown, terminal tables and PNG plots.

Everything written is deterministic: JSON with a fixed key order and NaN written as null,
PNGs from matplotlib's Agg backend with no software or date metadata
(``savefig(..., metadata={"Software": None})``), fixed figure sizes and DPI.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Sequence

DPI = 100


def clean(obj):
    """``obj`` with NaN/inf floats replaced by None and tuples by lists (valid strict JSON)."""
    if isinstance(obj, float):
        return None if (math.isnan(obj) or math.isinf(obj)) else obj
    if isinstance(obj, dict):
        return {str(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return clean(obj.item())
    return obj


def dumps(obj) -> str:
    return json.dumps(clean(obj), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_text(path: str, text: str) -> str:
    from multiref.output.file_output import write_atomically

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_atomically(path, text)  # a temporary name, then renamed
    return path


def write_json(path: str, obj) -> str:
    return write_text(path, dumps(obj))


def fmt(value, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_p(p) -> str:
    if p is None:
        return "n/a"
    if p == 0:
        return "<1e-300"  # below the smallest double scipy can return
    return f"{p:.1e}" if p < 0.001 else f"{p:.3f}"


def fmt_corr(entry: dict) -> str:
    """``0.312 (p=2.1e-05) [0.22, 0.40]`` from ``{"value", "p"[, "ci"]}``."""
    text = f"{fmt(entry.get('value'))} (p={fmt_p(entry.get('p'))})"
    ci = entry.get("ci")
    if ci:
        text += f" [{fmt(ci[0])}, {fmt(ci[1])}]"
    return text


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def text_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    cells = [list(map(str, headers))] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def safe_name(label: str) -> str:
    """A file-name-safe version of a metric label (``bleu4:smoothing=nltk1`` -> ``bleu4_smoothing_nltk1``)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label).strip("_") or "metric"


# -- plots ------------------------------------------------------------------------------

def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": DPI, "savefig.dpi": DPI, "font.size": 9})
    return plt


def _save(fig, path: str) -> str:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def scatter_plot(path: str, label: str, ratings: Sequence[float], systems: Sequence[str],
                 panels: dict) -> str:
    """Metric score against human rating, one colour per system; one panel per setting."""
    plt = _pyplot()
    names = sorted(set(systems))
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for ax, (title, scores) in zip(axes[0], panels.items()):
        for i, system in enumerate(names):
            xs = [r for r, s in zip(ratings, systems) if s == system]
            ys = [v for v, s in zip(scores, systems) if s == system]
            ax.scatter(xs, ys, s=10, alpha=0.6, label=system, color=f"C{i % 10}")
        ax.set_xlabel("human rating")
        ax.set_ylabel(label)
        ax.set_title(f"{label}: {title}")
    axes[0][0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    return _save(fig, path)


def box_plot(path: str, label: str, groups: dict) -> str:
    """The scores' distributions; ``groups`` is ``{panel title: {group name: [scores]}}``.

    Every score is a point (jittered sideways, the same jitter on every run) over its group's
    box (quartiles, whiskers to 1.5 IQR): with mostly-zero scores (BLEU-3/4) a box alone is a
    flat line at 0, and the points show the rest. The metric names the figure; a panel's title
    is its aggregation; a long metric name wraps instead of running off the figure."""
    import textwrap

    import numpy as np

    plt = _pyplot()
    fig, axes = plt.subplots(1, len(groups), figsize=(3.2 * len(groups), 3.9), squeeze=False, sharey=True)
    rng = np.random.default_rng(0)
    for ax, (title, boxes) in zip(axes[0], groups.items()):
        values = [np.asarray(list(v), dtype=float) for v in boxes.values()]
        ax.boxplot(values, showfliers=False, widths=0.55, medianprops={"color": "black"})
        for i, v in enumerate(values, start=1):
            ax.scatter(i + rng.uniform(-0.18, 0.18, len(v)), v, s=6, alpha=0.35, color=f"C{i - 1}", linewidths=0)
        ax.set_xticks(range(1, len(boxes) + 1))
        ax.set_xticklabels(list(boxes), rotation=20, fontsize=7)
        ax.set_title(title, fontsize=8)
        ax.set_xlabel("candidates", fontsize=8)
    axes[0][0].set_ylabel("score", fontsize=8)
    fig.suptitle("\n".join(textwrap.wrap(label, width=int(12 * len(groups)) or 12)), fontsize=9)
    fig.tight_layout()
    return _save(fig, path)


def curve_plot(path: str, curves: dict, kind: str = "pearson") -> str:
    """Correlation (``kind``) against the number of references, one line per metric (error
    bars: sd over orders; shaded: the bootstrap band ``{kind}_ci`` when the points have it)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for i, (label, points) in enumerate(curves.items()):
        xs = [p["references"] for p in points]
        ys = [p[kind] if p[kind] is not None else float("nan") for p in points]
        err = [p.get(f"{kind}_std") or 0.0 for p in points]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=label, color=f"C{i % 10}")
        bands = [p.get(f"{kind}_ci") for p in points]
        if all(bands):
            ax.fill_between(xs, [b[0] for b in bands], [b[1] for b in bands], color=f"C{i % 10}", alpha=0.15,
                            linewidth=0)
    ax.set_xlabel("number of references")
    ax.set_ylabel(f"{kind} correlation with human rating")
    ax.set_xticks(sorted({p["references"] for pts in curves.values() for p in pts}))
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return _save(fig, path)
