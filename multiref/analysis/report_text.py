"""Markdown reports and terminal tables of the ``analyze`` commands (from their JSON reports)."""

from __future__ import annotations

from multiref.analysis.reports import fmt, fmt_corr, fmt_p, markdown_table, text_table

KINDS = ("pearson", "spearman", "kendall")
LEVELS = (("response", None), ("system", "system_level"))


def _corr_rows(results: dict, level_key, with_ci: bool) -> list:
    rows = []
    for label, entry in results.items():
        row = [label]
        for kind in KINDS:
            for setting in ("single", "multi"):
                stat = entry[setting] if level_key is None else entry[setting][level_key]
                row.append(fmt_corr(stat[kind]) if with_ci else f"{fmt(stat[kind]['value'])} ({fmt_p(stat[kind]['p'])})")
        rows.append(row)
    return rows


def _corr_headers() -> list:
    return ["metric"] + [f"{kind} {setting}" for kind in KINDS for setting in ("1 ref", "all refs")]


def fmt_comparison(entry: dict) -> str:
    """``+0.180 (W p=1.2e-05, perm p=0.001)`` from a :func:`compare_scores` entry."""
    diff = entry.get("difference")
    text = "n/a" if diff is None else f"{diff:+.3f}"
    tests = []
    if entry.get("williams_p") is not None:
        tests.append(f"W p={fmt_p(entry['williams_p'])}")
    if entry.get("permutation_p") is not None:
        tests.append(f"perm p={fmt_p(entry['permutation_p'])}")
    return text + (f" ({', '.join(tests)})" if tests else "")


COMPARISON_HEADERS = ["metric", "level"] + [f"{kind} difference" for kind in KINDS]
VERSUS_HEADERS = ["metric A", "metric B", "references", "level"] + [f"{kind} A - B" for kind in KINDS]


def _gain_rows(results: dict, levels=("response", "system")) -> list:
    return [[label, level] + [fmt_comparison(entry["multi_vs_single"][level][kind]) for kind in KINDS]
            for label, entry in results.items() if "multi_vs_single" in entry for level in levels]


def _versus_rows(results: dict, levels=("response", "system")) -> list:
    rows = []
    for a, entry in results.items():
        for b, settings in entry.get("versus", {}).items():
            for setting, levels_ in settings.items():
                for level in levels:
                    rows.append([a, b, "1 ref" if setting == "single" else "all refs", level]
                                + [fmt_comparison(levels_[level][kind]) for kind in KINDS])
    return rows


def _fisher_rows(results: dict) -> list:
    rows = []
    for label, entry in results.items():
        for setting in ("single", "multi"):
            ci = entry.get("fisher_z", {}).get(setting, {})
            rows.append([label, "1 ref" if setting == "single" else "all refs"]
                        + [f"[{fmt(c[0])}, {fmt(c[1])}]" if c else "n/a" for c in (ci.get("response"), ci.get("system"))])
    return rows


def scatter_title(setting: str, result: dict) -> str:
    """A scatter panel's title: the setting, then Pearson and Spearman with their intervals
    (``single reference\nr 0.180 [0.094, 0.256], rho 0.025 [-0.071, 0.116]``)."""
    parts = []
    for kind, symbol in (("pearson", "r"), ("spearman", "rho")):
        value = result[kind].get("value")
        parts.append(f"{symbol} {fmt(value)}" + _band(result[kind].get("ci")))
    return f"{setting}\n{', '.join(parts)}"


def correlation_tables(report: dict) -> str:
    """Terminal tables: response level and system level, single against all references, then
    the tests of all references against one (W: Williams, perm: permutation test) and of each
    pair of metrics at the response level (the Markdown report has the system level too)."""
    out = []
    for level, key in LEVELS:
        out.append(f"{level}-level correlation with human ratings (value (p-value)); "
                   f"n = {report['data']['rows'] if key is None else len(report['data']['systems'])}\n")
        out.append(text_table(_corr_headers(), _corr_rows(report["results"], key, False)))
        out.append("\n")
    gains = _gain_rows(report["results"])
    if gains:
        out.append("all references minus one reference: difference of correlations (Williams p, permutation p)\n")
        out.append(text_table(COMPARISON_HEADERS, gains) + "\n")
    versus = _versus_rows(report["results"], ("response",))
    if versus:
        out.append("metric A minus metric B, response level (Williams p, permutation p)\n")
        out.append(text_table(VERSUS_HEADERS, versus) + "\n")
    return "".join(out)  # the warnings go to stderr (the CLI)


def _comparison_markdown(report: dict) -> list:
    opts = report["options"]
    lines = ["\n## Does it differ significantly?\n\n",
             "Difference of the correlations with the human ratings, with the two-sided p-values of Williams' test "
             "for dependent correlations sharing the human scores (Steiger 1980's form, n - 3 degrees of freedom; "
             "Pearson and Spearman, not Kendall) and of a paired permutation test (each row's two standardized "
             f"scores swapped at random, {opts.get('permutations', 0)} rounds, seed {opts['seed']}). System level: "
             "on the means per system (Williams), whole systems swapped (permutation: with k systems no p below 2/2^k).\n\n",
             "### All references against one reference\n\n",
             markdown_table(COMPARISON_HEADERS, _gain_rows(report["results"]))]
    versus = _versus_rows(report["results"])
    if versus:
        lines += ["\n### Metric against metric\n\n", markdown_table(VERSUS_HEADERS, versus)]
    lines += ["\n### Fisher-z intervals of Pearson's r\n\n",
              markdown_table(["metric", "references", "response level", "system level"], _fisher_rows(report["results"]))]
    return lines


def correlation_markdown(report: dict, plots: dict) -> str:
    data, opts = report["data"], report["options"]
    lines = ["# Metric correlation with human ratings\n\n",
             f"Ratings: `{opts['ratings']}`; {data['rows']} responses from {len(data['systems'])} systems; "
             f"{data['references_per_response']['min']}-{data['references_per_response']['max']} references per "
             f"response (mean {data['references_per_response']['mean']:.2f}); "
             f"{data['empty_references_dropped']} empty references dropped and {data['duplicate_references_merged']} "
             "duplicates merged.\n\n",
             "\"1 ref\" scores each response against the original reference only; \"all refs\" against the union of "
             "all its references (the metric's standard multi-reference form where it has one, else the max over "
             "references). Values are Pearson r, Spearman rho and Kendall tau-b with p-values"
             + (f" and {int(opts['confidence'] * 100)}% bootstrap intervals ({opts['bootstrap']} resamples, seed "
                f"{opts['seed']})" if opts.get("bootstrap") else "") + ".\n"]
    for warning in report.get("warnings", ()):
        lines.append(f"\n**Warning:** {warning}.\n")
    for level, key in LEVELS:
        lines.append(f"\n## {level.capitalize()} level\n\n")
        lines.append(markdown_table(_corr_headers(), _corr_rows(report["results"], key, True)))
    if any("multi_vs_single" in e for e in report["results"].values()):
        lines += _comparison_markdown(report)
    lines.append("\n## Systems\n\n")
    lines.append(markdown_table(["system", "responses", "mean human rating"],
                                [[s, v["responses"], fmt(v["mean_rating"])] for s, v in data["systems"].items()]))
    lines.append("\n## Metric signatures\n\n")
    for label, entry in report["results"].items():
        multi = entry.get("multi_signature") or f"{entry['multi_aggregation']} over references"
        lines.append(f"- `{label}`: 1 ref `{entry['signature']}`; all refs `{multi}`\n")
    if plots:
        lines.append("\n## Plots\n\n")
        for label, path in plots.items():
            lines.append(f"![{label}]({path})\n")
    return "".join(lines)


def _refcount_rows(report: dict) -> list:
    rows = []
    for label, points in report["curves"].items():
        for p in points:
            rows.append([label, p["references"], p["responses_with_k"]]
                        + [f"{fmt(p[k])} ± {fmt(p[k + '_std'])}" + _band(p.get(k + "_ci")) for k in KINDS])
    return rows


def _band(ci) -> str:
    return f" [{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""


REFCOUNT_HEADERS = ["metric", "refs", "responses with >= refs"] + list(KINDS)


def refcount_table(report: dict) -> str:
    return ("Correlation with human ratings against the number of references (mean ± sd over "
            f"{report['options']['orders']} orders{_band_note(report['options'])})\n"
            + text_table(REFCOUNT_HEADERS, _refcount_rows(report)))


def _band_note(opts: dict) -> str:
    if not opts.get("bootstrap"):
        return ""
    return (f" [{int(round(opts['confidence'] * 100))}% bootstrap band of the mean: {opts['bootstrap']} resamples of "
            "the responses]")


def refcount_markdown(report: dict) -> str:
    opts = report["options"]
    return ("# Correlation against the number of references\n\n"
            f"Each response is scored against the first k references of a random order of its references; "
            f"mean (± standard deviation) over {opts['orders']} seeded orders (seed {opts['seed']})"
            f"{_band_note(opts)}.\n\n"
            + markdown_table(REFCOUNT_HEADERS, _refcount_rows(report))
            + "\n![pearson](plots/refcount_pearson.png)\n![spearman](plots/refcount_spearman.png)\n"
            + "![kendall](plots/refcount_kendall.png)\n")


def _disc_rows(report: dict) -> list:
    rows = []
    for label, kinds in report["results"].items():
        for kind, aggs in kinds.items():
            for how, e in aggs.items():
                pb = e["point_biserial"]
                rows.append([label, kind, how, f"{fmt(pb['value'])} ({fmt_p(pb['p'])})" + _band(e.get("point_biserial_ci")),
                             fmt(e["threshold"], 2), fmt(e["accuracy"]) + _band(e.get("accuracy_ci")),
                             fmt(e["mean_positive"]), fmt(e["mean_negative"])])
    return rows


DISC_HEADERS = ["metric", "negatives", "aggregation", "point-biserial (p)", "threshold", "accuracy",
                "mean positive", "mean negative"]


def discrimination_tables(report: dict) -> str:
    data = report["data"]
    head = "; ".join(f"{k}: {v['contexts']} contexts" for k, v in data.items())
    return f"DailyDialog++ discrimination ({head}; threshold chosen on " \
           f"{'validation' if 'validation' in data else 'test'})\n" + text_table(DISC_HEADERS, _disc_rows(report))


def discrimination_markdown(report: dict, plots: dict) -> str:
    data = report["data"]
    lines = ["# Telling positives from negatives (DailyDialog++)\n\n"]
    for name, d in data.items():
        lines.append(f"- {name}: `{d['path']}`, {d['contexts']} contexts, {d['empty_responses_dropped']} empty "
                     f"responses dropped, {d['contexts_skipped_fewer_than_2_positives']} contexts skipped\n")
    lines.append("\nEach positive is scored against the other positives; negative j against all positives but "
                 "positive j. The threshold (score >= t is positive) is the most accurate on "
                 f"{'the validation split' if 'validation' in data else 'the test split (no validation given)'}; "
                 "point-biserial correlation and accuracy are on the test split, with "
                 f"{int(round(report['options'].get('confidence', 0.95) * 100))}% intervals in brackets (Fisher-z for "
                 "the correlation, Wilson for the accuracy; both take the candidates as independent).\n\n")
    lines.append(markdown_table(DISC_HEADERS, _disc_rows(report)))
    lines.append("\n## Metric signatures\n\n")
    for label, sig in report["signatures"].items():
        lines.append(f"- `{label}`: `{sig}`\n")
    if plots:
        lines.append("\n## Score distributions (test split)\n\n")
        for label, path in plots.items():
            lines.append(f"![{label}]({path})\n")
    return "".join(lines)


REG_HEADERS = ["similarity", "estimator", "sentence-wise pearson (p)", "system-wise pearson (p)"]


def _reg_rows(report: dict) -> list:
    rows = []
    for sim, estimators in report["results"].items():
        for est, e in estimators.items():
            rows.append([sim, est, f"{fmt(e['sentence']['value'])} ({fmt_p(e['sentence']['p'])})",
                         f"{fmt(e['system']['value'])} ({fmt_p(e['system']['p'])})"])
    return rows


def regression_table(report: dict) -> str:
    d = report["data"]
    return (f"Leave-one-out evaluation: {d['inputs']} input sentences, {d['references']} scored references, "
            f"{d['methods']} methods\n" + text_table(REG_HEADERS, _reg_rows(report)))


def regression_markdown(report: dict) -> str:
    d, o = report["data"], report["options"]
    return ("# Regression evaluator (Sugiyama et al.)\n\n"
            f"Data: `{o['data']}`: {d['inputs']} input sentences, {d['references']} scored references, "
            f"{d['methods']} methods. AM and WS use the M = {o['top_m']} most similar references; the SVR has an "
            f"RBF kernel and C = {o['svr_c']}. Every reference is scored by estimators built from the other "
            "references of its input sentence (leave-one-out); the table gives the Pearson correlation with the "
            "human scores over all references (sentence-wise) and over the means per method (system-wise).\n\n"
            + markdown_table(REG_HEADERS, _reg_rows(report)))
