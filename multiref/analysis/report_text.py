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


def correlation_tables(report: dict) -> str:
    """Terminal tables: response level and system level, single against all references."""
    out = []
    for level, key in LEVELS:
        out.append(f"{level}-level correlation with human ratings (value (p-value)); "
                   f"n = {report['data']['rows'] if key is None else len(report['data']['systems'])}\n")
        out.append(text_table(_corr_headers(), _corr_rows(report["results"], key, False)))
        out.append("\n")
    return "".join(out)


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
    for level, key in LEVELS:
        lines.append(f"\n## {level.capitalize()} level\n\n")
        lines.append(markdown_table(_corr_headers(), _corr_rows(report["results"], key, True)))
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
                        + [f"{fmt(p[k])} ± {fmt(p[k + '_std'])}" for k in KINDS])
    return rows


REFCOUNT_HEADERS = ["metric", "refs", "responses with >= refs"] + list(KINDS)


def refcount_table(report: dict) -> str:
    return ("Correlation with human ratings against the number of references (mean ± sd over "
            f"{report['options']['orders']} orders)\n" + text_table(REFCOUNT_HEADERS, _refcount_rows(report)))


def refcount_markdown(report: dict) -> str:
    opts = report["options"]
    return ("# Correlation against the number of references\n\n"
            f"Each response is scored against the first k references of a random order of its references; "
            f"mean (± standard deviation) over {opts['orders']} seeded orders (seed {opts['seed']}).\n\n"
            + markdown_table(REFCOUNT_HEADERS, _refcount_rows(report))
            + "\n![pearson](plots/refcount_pearson.png)\n![spearman](plots/refcount_spearman.png)\n"
            + "![kendall](plots/refcount_kendall.png)\n")


def _disc_rows(report: dict) -> list:
    rows = []
    for label, kinds in report["results"].items():
        for kind, aggs in kinds.items():
            for how, e in aggs.items():
                pb = e["point_biserial"]
                rows.append([label, kind, how, f"{fmt(pb['value'])} ({fmt_p(pb['p'])})", fmt(e["threshold"], 2),
                             fmt(e["accuracy"]), fmt(e["mean_positive"]), fmt(e["mean_negative"])])
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
                 "point-biserial correlation and accuracy are on the test split.\n\n")
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
