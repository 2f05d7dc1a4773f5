"""BLEU under the three conventions (docs/scoring.md#bleu-conventions) against the peers themselves.

Part 1, real data: the HRED outputs of multi-reference DailyDialog (``hredf.txt``, 6,740
contexts) against the original reference and against all 5 (``multireftest.json``), scored by
``get_metric("bleu", convention=...)`` and by ``sacrebleu.corpus_bleu`` (references padded with
empty strings where a context has fewer) and pycocoevalcap's ``Bleu`` (nlg-eval's): every pair
must be equal to the float. Part 2, seeded random test sets with some outputs of 0 to 3 tokens:
how often NLTK's convention differs from sacrebleu's, and by how much.

    MULTIREF_DATA=../shared/data python benchmarks/bleu_conventions.py [--sets 500]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from multiref.metrics import Item, get_metric  # noqa: E402


def load_items(root: str, n_refs: int) -> list:
    """HRED's output per context and the context's first ``n_refs`` references (the original first)."""
    folder = os.path.join(root, "multiref-dailydialog")
    with open(os.path.join(folder, "test_duid_mapping.json"), encoding="utf-8") as fh:
        line_of = json.load(fh)
    with open(os.path.join(folder, "hredf.txt"), encoding="utf-8") as fh:
        outputs = [line.rstrip("\n") for line in fh]
    items = []
    with open(os.path.join(folder, "multireftest.json"), encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            for turn, utterance in enumerate(record["dialogue"]):
                key = f"{record['index']}_{turn}"
                if utterance.get("responses") and key in line_of:
                    refs = [" ".join(r.split()) for r in utterance["responses"][:n_refs]]
                    items.append(Item(id=key, hypotheses=[outputs[line_of[key] - 1]], references=refs))
    return items


def peers(items: list, tokenize: str) -> dict:
    import sacrebleu
    from pycocoevalcap.bleu.bleu import Bleu

    most = max(len(it.references) for it in items)
    streams = [[it.references[j] if j < len(it.references) else "" for it in items] for j in range(most)]
    hyps = [it.hypotheses[0] for it in items]
    out = {"sacrebleu": sacrebleu.corpus_bleu(hyps, streams, tokenize=tokenize, smooth_method="none").score / 100}
    if tokenize == "none":
        gts = {i: [" ".join(r.split()) for r in it.references] for i, it in enumerate(items)}
        res = {i: [" ".join(it.hypotheses[0].split())] for i, it in enumerate(items)}
        out["nlgeval"] = Bleu(4).compute_score(gts, res, verbose=0)[0][3]
    return out


def real_data(root: str) -> bool:
    ok = True
    for n_refs in (1, 5):
        items = load_items(root, n_refs)
        for tokenizer, peer_tok in (("13a", "13a"), ("whitespace", "none")):
            found = peers(items, peer_tok)
            row = {c: get_metric("bleu", convention=c, tokenizer=tokenizer).score_items(items).score
                   for c in ("nltk", "sacrebleu", "nlgeval")}
            same = all(row[c] == found[c] for c in found)
            ok &= same
            print(f"{n_refs} ref(s), {len(items)} contexts, tokenizer {tokenizer}: "
                  + ", ".join(f"{c} {100 * v:.4f}" for c, v in row.items())
                  + "; peers " + ", ".join(f"{c} {100 * v:.4f}" for c, v in found.items())
                  + ("; equal" if same else "; DIFFERENT"))
    return ok


def random_sets(n_sets: int) -> None:
    rng = random.Random(2026)
    words = "the a cat dog sat on mat . i do n't know what you mean ? yes no".split()

    def sentence() -> list:
        return [rng.choice(words) for _ in range(rng.randint(4, 15))]

    def output(refs: list) -> str:  # a noisy slice of a reference: 0-3 tokens for one output in five
        ref = rng.choice(refs)
        n = rng.randint(0, 3) if rng.random() < 0.2 else rng.randint(4, len(ref))
        return " ".join(rng.choice(words) if rng.random() < 0.2 else t for t in ref[:n])

    for variable in (False, True):
        differ, largest = 0, 0.0
        for _ in range(n_sets):
            items, n_refs = [], rng.randint(1, 5)
            for i in range(30):
                refs = [sentence() for _ in range(rng.randint(1, 5) if variable else n_refs)]
                items.append(Item(id=str(i), hypotheses=[output(refs)], references=[" ".join(r) for r in refs]))
            nltk = get_metric("bleu").score_items(items).score
            sacre = get_metric("bleu", convention="sacrebleu").score_items(items).score
            differ += nltk != sacre
            largest = max(largest, abs(nltk - sacre))
        refs = "1-5 references per item (sacrebleu: padded streams)" if variable else "the same 1-5 references per item"
        print(f"{n_sets} random sets of 30 items, {refs}, outputs noisy slices of a reference, one in five of 0-3 tokens: NLTK's convention differs from "
              f"sacrebleu's in {differ}, by at most {largest:.4f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=500, help="random test sets (default 500)")
    args = parser.parse_args(argv)
    import logging

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)  # its "tokenized period" hint, not a result
    root = os.environ.get("MULTIREF_DATA")
    ok = True
    if root and os.path.isfile(os.path.join(root, "multiref-dailydialog", "hredf.txt")):
        ok = real_data(root)
    else:
        print("MULTIREF_DATA unset or without multiref-dailydialog/hredf.txt: real-data part skipped")
    random_sets(args.sets)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
