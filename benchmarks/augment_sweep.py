"""How augment's candidate rule trades coverage against agreement with people (docs/augment.md).

Input: a folder written by ``multiref augment`` for the DailyDialog test contexts with a low
``--threshold`` and a high ``--max-candidates`` (every candidate the stricter rules could keep:
candidates are ordered by Doc2Vec cosine, so a stricter rule's candidates are a prefix of the
kept ones filtered by cosine), and Gupta et al.'s ratings. For each rule (threshold T, at most
M candidates, and optionally a floor: at least F candidates per context from those with cosine
>= a lower bound L) it reports the share of the test contexts that get candidates, the
candidates per context, and BLEU-2's response-level Spearman with the ratings against the
original reference plus the candidates (``multiref analyze correlation --metric bleu2``, its
Williams p against the original reference alone), with the candidates in the references'
convention (:func:`augment_experiment.normalize`).

    python benchmarks/augment_sweep.py --augmented out/dd-aug-wide \\
        --ratings DATA/multiref-dailydialog/mturk_rating_processed_output.csv --output out/augment-sweep
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from augment_experiment import normalize, write_ratings  # noqa: E402

#: (threshold, max candidates, floor count, floor cosine)
RULES = [(0.9, 15, 0, None), (0.8, 15, 0, None), (0.7, 15, 0, None), (0.6, 15, 0, None), (0.5, 15, 0, None),
         (0.4, 15, 0, None), (0.3, 15, 0, None), (0.5, 5, 0, None), (0.5, 10, 0, None), (0.5, 30, 0, None),
         (0.6, 30, 0, None), (0.9, 15, 5, 0.5), (0.9, 15, 10, 0.5), (0.7, 15, 5, 0.5), (0.9, 15, 3, 0.5),
         (0.9, 15, 5, 0.4), (0.9, 15, 5, 0.6), (0.8, 15, 5, 0.5)]


def kept(candidates: list, threshold: float, most: int, floor: int, floor_cosine) -> list:
    """The candidates a rule keeps (``candidates``: most similar first)."""
    above = [c for c in candidates if c["doc2vec_cosine"] >= threshold]
    if floor and len(above) < floor:
        above = [c for c in candidates if c["doc2vec_cosine"] >= floor_cosine][:floor]
    return above[:most]


def bleu2(ratings: str, output: str) -> dict:
    argv = [sys.executable, "-m", "multiref_cli", "analyze", "correlation", "--ratings", ratings, "--metric",
            "bleu2", "--bootstrap", "0", "--permutations", "0", "--output", output, "--format", "json", "--quiet"]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(output, "correlation.json"), encoding="utf-8") as fh:
        result = json.load(fh)["results"]["bleu2"]
    williams = result.get("multi_vs_single", {}).get("response", {}).get("spearman", {}).get("williams_p")
    return {"single": result["single"]["spearman"]["value"], "multi": result["multi"]["spearman"]["value"],
            "williams_p": williams}


def main(argv=None) -> int:
    import pyarrow.parquet as pq

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--augmented", required=True)
    parser.add_argument("--ratings", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--rules", help="T,M,F,L;... instead of the built-in list (F 0: no floor)")
    args = parser.parse_args(argv)
    rules = RULES if not args.rules else [
        tuple(float(v) if i in (0, 3) else int(v) for i, v in enumerate(rule.split(","))) for rule in args.rules.split(";")]
    rows = pq.read_table(os.path.join(args.augmented, "test_candidates", "test-00000-of-00001.parquet")).to_pylist()
    print("| threshold | at most | floor | contexts with candidates | candidates per context | "
          "rated contexts with candidates | BLEU-2 Spearman (b) | Williams p vs (a) |")
    print("|---|---|---|---|---|---|---|---|")
    results = []
    for threshold, most, floor, floor_cosine in rules:
        chosen = {r["id"]: kept(r["candidates"], threshold, most, floor, floor_cosine) for r in rows}
        covered = sum(1 for c in chosen.values() if c)
        per = sum(len(c) for c in chosen.values()) / len(chosen)
        name = f"t{threshold}-m{most}-f{floor}"
        ratings = os.path.join(args.output, name, "ratings_b.csv")
        per_context = write_ratings(args.ratings, ratings, {k: [normalize(c["text"]) for c in v]
                                                            for k, v in chosen.items()}, keep_human=False)
        found = bleu2(ratings, os.path.join(args.output, name))
        rated = sum(1 for n in per_context.values() if n)
        floor_text = f"{floor} at >= {floor_cosine}" if floor else "-"
        print(f"| {threshold} | {most} | {floor_text} | {covered:,} ({100 * covered / len(chosen):.1f} %) | {per:.2f} | "
              f"{rated} of {len(per_context)} | {found['multi']:.3f} | {found['williams_p']:.3g} |", flush=True)
        results.append({"threshold": threshold, "max_candidates": most, "floor": floor, "floor_cosine": floor_cosine,
                        "contexts_with_candidates": covered, "contexts": len(chosen), "candidates_per_context": per,
                        "rated_with_candidates": rated, **found})
    with open(os.path.join(args.output, "sweep.json"), "w", encoding="utf-8") as fh:
        json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
