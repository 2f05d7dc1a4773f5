"""``multiref score`` with several systems or statistics: the results table and its formats.

A run's results are one :class:`multiref.scoring.run.SystemResult` per system (the first is
the baseline; :func:`multiref.scoring.score` makes them), each with
``{metric: {"score", "ci", "p_value", "signature"[, "details"]}}``. Formats: ``json``
(``{"systems": [{"name", "metrics"}], "signature": {metric: signature}}``), ``table``,
``csv``, ``markdown``/``latex`` for a paper, where a mark follows each score whose
p-value against the baseline is below :data:`ALPHA`, and ``html``: a self-contained page with
the table, the signatures and each item's outputs and per-item scores.
"""

from __future__ import annotations

import csv
import io
import json
import re

ALPHA = 0.05
MARK = "*"


def _num(value, digits: int = 4) -> str:
    return "null" if value is None else f"{value:.{digits}f}"


def _ci(ci) -> str:
    return "-" if ci is None else f"[{ci[0]:.4f}, {ci[1]:.4f}]"


def _p(p) -> str:
    return "-" if p is None else f"{p:.4f}" + (f" {MARK}" if p < ALPHA else "")


def format_results(systems, fmt: str, legend: str = "") -> str:
    """The results of a multi-system or statistics run in format ``fmt``."""
    metrics = list(systems[0].metrics)
    if fmt == "json":
        return json.dumps({"systems": [{"name": s.name, "metrics": {
            m: {k: v for k, v in r.items() if k != "signature"} for m, r in s.metrics.items()}} for s in systems],
            "signature": {m: systems[0].metrics[m]["signature"] for m in metrics}}, indent=2) + "\n"
    rows = [(s.name, m, s.metrics[m]) for s in systems for m in metrics]
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["system", "metric", "score", "ci_low", "ci_high", "p_value", "signature"])
        for name, m, r in rows:
            ci = r["ci"] or (None, None)
            writer.writerow([name, m, *("" if v is None else repr(v) for v in (r["score"], *ci, r["p_value"])),
                             r["signature"]])
        return buf.getvalue()
    if fmt in ("markdown", "latex"):
        return _paper_table(systems, metrics, fmt, legend)
    sw = max(len("system"), *(len(s.name) for s in systems))
    mw = max(len("metric"), *(len(m) for m in metrics))
    lines = [f"{'system':<{sw}}  {'metric':<{mw}}  {'score':>8}  {'95% CI':<18}  p-value"]
    for name, m, r in rows:
        lines.append(f"{name:<{sw}}  {m:<{mw}}  {_num(r['score']):>8}  {_ci(r['ci']):<18}  {_p(r['p_value'])}")
        if r.get("details"):
            d = r["details"]
            lines.append(f"{'':<{sw}}  {'':<{mw}}  precisions {'/'.join(f'{p:.4f}' for p in d['precisions'])} "
                         f"bp {d['bp']:.4f} ratio {d['ratio']} hyp_len {d['hyp_len']} ref_len {d['ref_len']}")
    lines += ["", "signatures:"] + [systems[0].metrics[m]["signature"] for m in metrics]
    if legend:
        lines.append(legend)
    return "\n".join(lines) + "\n"


def _page_items(systems, scores, refset) -> list:
    """The results page's items: every reference item some system was scored on, in the test
    set's order, with each system's outputs and per-item scores (None where it has no output)."""
    where = [{ref.id: i for i, (_hyp, ref) in enumerate(pairs)} for _name, pairs, _items in systems]
    items = []
    for ref in refset.records:
        if not any(ref.id in w for w in where):
            continue
        outputs, rows = [], []
        for (_name, pairs, _items), w, row in zip(systems, where, scores):
            i = w.get(ref.id)
            outputs.append(list(pairs[i][0].hypotheses) if i is not None else [])
            rows.append([r.per_item[i] if i is not None and i < len(r.per_item) else None for r in row])
        items.append({"id": ref.id, "context": [ref.query] if ref.query else [], "references": list(ref.references),
                      "groups": [list(g) for g in ref.groups] if ref.groups else None,
                      "group_ids": list(ref.group_ids) if ref.group_ids else None, "outputs": outputs, "scores": rows})
    return items


def html_page(results, systems, scores, legend_text: str, refset) -> str:
    """``--format html``: the self-contained results page (:mod:`multiref.output.results_page`)."""
    import os

    from multiref.output.results_page import page_data, render

    data = page_data([(r.name, r.metrics) for r in results], _page_items(systems, scores, refset),
                     legend=legend_text, alpha=ALPHA, mark=MARK)
    subtitle = f"{len(data['items'])} items; references: {os.path.basename(refset.source.rstrip('/'))}"
    return render(data, subtitle=subtitle)


def _cell(r: dict, fmt: str) -> str:
    text = _num(r["score"])
    if r["ci"] is not None:
        text += f" ({r['ci'][0]:.4f}-{r['ci'][1]:.4f})" if fmt == "markdown" else f" ({r['ci'][0]:.4f}--{r['ci'][1]:.4f})"
    if r["p_value"] is not None and r["p_value"] < ALPHA:
        text += MARK if fmt == "markdown" else f"$^{{{MARK}}}$"
    return text


def _latex_escape(text: str) -> str:
    return re.sub(r"([&%$#_{}])", r"\\\1", text)


def _paper_table(systems, metrics, fmt: str, legend: str) -> str:
    if fmt == "markdown":
        lines = ["| system | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
        lines += ["| " + s.name.replace("|", "\\|") + " | " + " | ".join(_cell(s.metrics[m], fmt) for m in metrics)
                  + " |" for s in systems]
        tail = [""] + ([legend] if legend else [])
        return "\n".join(lines + tail) + "\n"
    lines = [r"\begin{tabular}{l" + "r" * len(metrics) + "}", r"\hline",
             "system & " + " & ".join(_latex_escape(m) for m in metrics) + r" \\", r"\hline"]
    lines += [_latex_escape(s.name) + " & " + " & ".join(_cell(s.metrics[m], fmt) for m in metrics) + r" \\"
              for s in systems]
    lines += [r"\hline", r"\end{tabular}"]
    if legend:
        lines.append("% " + legend)
    return "\n".join(lines) + "\n"


def legend(config, baseline: str, jackknifed: tuple = ()) -> str:
    """The line that says what a mark means and how the p-values and intervals were computed
    (``config``: the run's :class:`multiref.metrics.significance.Resampling`; ``jackknifed``: the
    metrics whose interval is the delete-one jackknife)."""
    intervals = ""
    if config.confidence:
        intervals = "intervals: 95% bootstrap percentile intervals"
        if jackknifed:
            intervals += f" ({', '.join(jackknifed)}: delete-one jackknife, score +- 1.96 SE)"
    if config.test == "bs":
        how = f"paired bootstrap, {config.resamples} resamples of the items"
    elif config.test == "ar":
        how = f"approximate randomization, {config.resamples} trials"
    else:
        return intervals
    if config.correction == "holm":
        how += ", Holm-adjusted over the systems"
    marks = f"{MARK} p < {ALPHA} against the baseline {baseline} ({how}, seed {config.seed})"
    return f"{marks}; {intervals}" if intervals and jackknifed else marks
