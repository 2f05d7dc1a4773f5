"""The DailyDialog experiment of docs/augment.md: do retrieved references help a metric agree
with people?

Input: a folder written by ``multiref augment`` for the DailyDialog test contexts (config
``contexts``, ids ``<dialogue>_<turn>``, which are the ``context_id`` of Gupta et al.'s ratings),
Gupta et al.'s ratings (``mturk_rating_processed_output.csv``: 500 rated responses of 100
contexts, with the original reference ``prevgt`` and ``all_references``, 4 distinct human
references, the original among them) and DailyDialog train (word vectors for the embedding metrics). It runs
``multiref analyze correlation`` (paper defaults) three times:

- the ratings file as released: the ``single`` column is (a), the original reference alone; the
  ``multi`` column is (c), Gupta's human multi-references;
- ``all_references`` replaced by the retrieved candidates: ``multi`` is (b), the original
  reference plus the candidates (``test_auto`` without annotation);
- ``all_references`` extended with the candidates: ``multi`` is (d), (c) plus the candidates.

The candidates come from DailyDialog's text (cased, ``’``, contractions split as ``I ’ m``); the
rated responses and Gupta's references are lowercased PTB tokens (``i 'm``, ``do n't``). With
``--normalize`` (default) each candidate is written in that convention first (curly quotes to
ASCII, ``X ' m`` to ``X 'm``, ``do ' n't`` forms to ``do n't``; the metrics lowercase), so that
tokenization differences do not decide the comparison; ``--no-normalize`` uses them as retrieved.

    python benchmarks/augment_experiment.py --augmented out/dd-augmented \\
        --ratings DATA/multiref-dailydialog/mturk_rating_processed_output.csv \\
        --train-vectors-from DATA/dailydialog/train/dialogues_train.txt --output out/augment-experiment

Writes ``<output>/{a_c,b,d}/correlation.json`` and prints Markdown tables (response level,
then system level) of the Spearman and Pearson correlations with their bootstrap intervals and
Williams' p-values of (b) and of (c) against (a) (each run's ``multi_vs_single`` comparison:
(b)'s run has the original reference as its single column), and the number of candidates per
rated context.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

METRICS = ("bleu1", "bleu2", "bleu3", "bleu4", "rouge_l", "embedding_average", "vector_extrema", "greedy_matching")
CONTRACTION = re.compile(r" ' (s|m|re|ve|ll|d)\b")
NEGATION = re.compile(r"n ' t\b")


def normalize(text: str) -> str:
    """A DailyDialog candidate in the references' convention (module docstring)."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = NEGATION.sub(" n't", text)
    text = CONTRACTION.sub(r" '\1", text)
    return " ".join(text.lower().split())


def candidates_by_context(folder: str, normalized: bool) -> dict:
    """``{context id: [candidate text]}`` from the augmented folder's ``test_candidates``."""
    import pyarrow.parquet as pq

    table = pq.read_table(os.path.join(folder, "test_candidates", "test-00000-of-00001.parquet"))
    return {row["id"]: [normalize(c["text"]) if normalized else c["text"] for c in row["candidates"]]
            for row in table.to_pylist()}


def write_ratings(ratings: str, out: str, candidates: dict, keep_human: bool) -> dict:
    """The ratings file with ``all_references`` = (human references +) candidates; returns
    ``{context id: number of candidates}`` of the rated contexts."""
    with open(ratings, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    per_context = {}
    for row in rows:
        found = candidates.get(row["context_id"])
        if found is None:
            raise SystemExit(f"context {row['context_id']} is not in the augmented folder")
        per_context[row["context_id"]] = len(found)
        human = row["all_references"].split("\t") if keep_human and row["all_references"] else []
        row["all_references"] = "\t".join(human + found)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return per_context


def correlate(ratings: str, vectors_from: str, output: str) -> dict:
    """``multiref analyze correlation`` with the paper defaults and the study's metrics."""
    argv = [sys.executable, "-m", "multiref_cli", "analyze", "correlation", "--ratings", ratings,
            "--train-vectors-from", vectors_from, "--output", output, "--format", "json", "--quiet"]
    for metric in METRICS:
        argv += ["--metric", metric]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(output, "correlation.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _cell(entry: dict) -> str:
    value, (low, high) = entry["value"], entry.get("ci") or (None, None)
    star = "*" if entry.get("p") is not None and entry["p"] < 0.05 else ""
    if low is None:
        return f"{value:.3f}{star}"
    return f"{value:.3f}{star} [{low:.3f}, {high:.3f}]"


def _at(report: dict, metric: str, column: str, stat: str, level: str) -> dict:
    entry = report["results"][metric][column]
    return entry["system_level"][stat] if level == "system" else entry[stat]


def _williams(report: dict, metric: str, stat: str, level: str) -> str:
    """Williams' p of the report's multi-reference column against its single one (the
    ``multi_vs_single`` comparison of ``analyze correlation``), or ``-`` without it."""
    found = report["results"][metric].get("multi_vs_single", {}).get(level, {}).get(stat, {}).get("williams_p")
    if found is None:
        return "-"
    return f"{found:.1e}" if found < 0.001 else f"{found:.3f}"


def table(reports: dict, level: str = "response") -> str:
    """Markdown: one row per metric and statistic, one column per condition (``*``: p < 0.05),
    with Williams' p of (b) and of (c) against (a)."""
    lines = ["| metric | statistic | (a) original | (b) original + retrieved | Williams p (b) vs (a) | "
             "(c) Gupta's human | Williams p (c) vs (a) | (d) (c) + retrieved |",
             "|---|---|---|---|---|---|---|---|"]
    for metric in METRICS:
        for stat in ("spearman", "pearson"):
            cells = [_cell(_at(reports["a_c"], metric, "single", stat, level)),
                     _cell(_at(reports["b"], metric, "multi", stat, level)), _williams(reports["b"], metric, stat, level),
                     _cell(_at(reports["a_c"], metric, "multi", stat, level)),
                     _williams(reports["a_c"], metric, stat, level), _cell(_at(reports["d"], metric, "multi", stat, level))]
            lines.append(f"| {metric} | {stat} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--augmented", required=True)
    parser.add_argument("--ratings", required=True)
    parser.add_argument("--train-vectors-from", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--normalize", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    candidates = candidates_by_context(args.augmented, args.normalize)
    b_csv, d_csv = os.path.join(args.output, "ratings_b.csv"), os.path.join(args.output, "ratings_d.csv")
    per_context = write_ratings(args.ratings, b_csv, candidates, keep_human=False)
    write_ratings(args.ratings, d_csv, candidates, keep_human=True)
    reports = {"a_c": correlate(args.ratings, args.train_vectors_from, os.path.join(args.output, "a_c")),
               "b": correlate(b_csv, args.train_vectors_from, os.path.join(args.output, "b")),
               "d": correlate(d_csv, args.train_vectors_from, os.path.join(args.output, "d"))}
    counts = sorted(per_context.values())
    hist = {n: counts.count(n) for n in sorted(set(counts))}
    summary = {"rated_contexts": len(counts), "candidates_per_rated_context": hist,
               "mean_candidates": round(sum(counts) / len(counts), 2),
               "references_per_response": {k: r["data"]["references_per_response"] for k, r in reports.items()}}
    with open(os.path.join(args.output, "summary.json"), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=2, sort_keys=True)
    print(table(reports))
    print(table(reports, level="system"))
    print(json.dumps(summary, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
