"""BLEU under named conventions (``convention=``, ``--bleu-convention``) against the real peers:
sacrebleu's ``corpus_bleu`` / ``BLEU`` and pycocoevalcap's ``Bleu`` (what nlg-eval runs), on
thousands of seeded random cases with short and empty hypotheses, 1 to 5 references per item
and items with fewer references (sacrebleu's streams padded with empty strings)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics import BLEU as SacreBLEU

from multiref.metrics import Item, get_metric
from multiref.metrics.significance import compare_systems, metric_stats
from multiref_cli import main

VOCAB = "the a cat dog sat on mat . , ? it is was not - I ' s don't Hello &quot;".split()


def _sentence(rng: random.Random) -> str:
    n = rng.choice([0, 0, 1, 1, 2, 3, 3, 4, 5, 7, 10, 15])
    text = " ".join(rng.choice(VOCAB) for _ in range(n))
    return text + rng.choice(["", "", " ", "\t", "."])


def _corpus(rng: random.Random, max_refs: int = 5) -> list:
    items = []
    for i in range(rng.randint(1, 7)):
        refs = [_sentence(rng) or "x" for _ in range(rng.randint(1, max_refs))]
        items.append(Item(id=str(i), hypotheses=[_sentence(rng)], references=refs))
    return items


def _streams(items) -> list:
    """sacrebleu's reference streams: items with fewer references padded with empty strings."""
    most = max(len(item.references) for item in items)
    return [[item.references[j] if j < len(item.references) else "" for item in items] for j in range(most)]


SACRE_CASES = [(tok, peer_tok, smoothing)
               for tok, peer_tok in (("13a", "13a"), ("whitespace", "none"))
               for smoothing in ("none", "exp", "floor", "add-k")]


@pytest.mark.parametrize("tokenizer,peer_tokenizer,smoothing", SACRE_CASES)
def test_sacrebleu_convention_equals_sacrebleu_on_random_corpora(tokenizer, peer_tokenizer, smoothing):
    rng = random.Random(f"sacre-{tokenizer}-{smoothing}")
    differ = 0
    for case in range(300):  # 8 settings x 300 corpora = 2,400 cases
        items = _corpus(rng)
        order = rng.choice([1, 2, 3, 4, 4, 4])
        lowercase = rng.random() < 0.3
        metric = get_metric("bleu", convention="sacrebleu", smoothing=smoothing, tokenizer=tokenizer, order=order,
                            lowercase=lowercase)
        ours = metric.score_items(items).score
        peer = SacreBLEU(tokenize=peer_tokenizer, smooth_method=smoothing, max_ngram_order=order, lowercase=lowercase)
        expected = peer.corpus_score([item.hypotheses[0] for item in items], _streams(items)).score / 100
        differ += ours != expected
        if order == 4 and not lowercase:  # the interface: sacrebleu.corpus_bleu itself
            assert ours == sacrebleu.corpus_bleu([item.hypotheses[0] for item in items], _streams(items),
                                                 tokenize=peer_tokenizer, smooth_method=smoothing).score / 100
    assert differ == 0


def test_nlgeval_convention_equals_pycocoevalcap_bleu_on_random_corpora():
    from pycocoevalcap.bleu.bleu import Bleu

    rng = random.Random("nlgeval")
    for case in range(1000):
        items = _corpus(rng)
        gts = {i: [" ".join(r.split()) for r in item.references] for i, item in enumerate(items)}
        res = {i: [" ".join(item.hypotheses[0].split())] for i, item in enumerate(items)}
        corpus, segments = Bleu(4).compute_score(gts, res, verbose=0)
        for order in (1, 2, 3, 4):
            result = get_metric("bleu", convention="nlgeval", order=order).score_items(items)
            assert result.score == corpus[order - 1], (case, order)
            assert result.per_item == segments[order - 1], (case, order)


def test_nltk_stays_the_default_and_every_signature_names_its_convention():
    assert "|conv:nltk|" in get_metric("bleu").signature
    assert "|conv:nltk|" in get_metric("self_bleu").signature
    assert "|conv:sacrebleu|" in get_metric("delta_bleu", convention="sacrebleu").signature
    assert "|conv:nlgeval|" in get_metric("recall_bleu", convention="nlgeval").signature
    assert "|smooth:exp|bp:yes|conv:sacrebleu|" in get_metric("bleu", convention="sacrebleu", smoothing="exp").signature


@pytest.mark.parametrize("options,message", [
    ({"convention": "sacrebleu", "smoothing": "nltk1"}, "unknown smoothing 'nltk1' under convention sacrebleu"),
    ({"smoothing": "exp"}, "unknown smoothing 'exp' under convention nltk"),
    ({"convention": "nlgeval", "smoothing": "add-k"}, "under convention nlgeval"),
    ({"convention": "sacrebleu", "weights": (0.5, 0.5)}, "takes uniform weights"),
    ({"convention": "nlgeval", "brevity_penalty": False}, "always applies the brevity penalty"),
    ({"convention": "mteval"}, "unknown convention 'mteval'"),
])
def test_options_a_convention_cannot_honour_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        get_metric("bleu", **options)


def test_the_conventions_differ_where_the_issue_says():
    """A 2-token hypothesis: NLTK divides by max(1, 0) trigrams, sacrebleu stops (0), pycocoevalcap guards."""
    items = [Item(id="a", hypotheses=["the cat"], references=["the cat sat"]),
             Item(id="b", hypotheses=["a dog sat on the mat"], references=["a dog sat on the mat"])]
    scores = {c: get_metric("bleu", convention=c).score_items(items).score for c in ("nltk", "sacrebleu", "nlgeval")}
    assert scores["sacrebleu"] == sacrebleu.corpus_bleu(["the cat", "a dog sat on the mat"],
                                                        [["the cat sat", "a dog sat on the mat"]],
                                                        smooth_method="none", tokenize="none").score / 100
    assert len(set(scores.values())) == 3


@pytest.mark.parametrize("convention,smoothing", [("sacrebleu", "none"), ("sacrebleu", "exp"), ("nlgeval", "none")])
def test_resampling_statistics_give_back_the_corpus_score(convention, smoothing):
    rng = random.Random(convention + smoothing)
    items = [Item(id=str(i), hypotheses=[_sentence(rng), _sentence(rng)], references=[_sentence(rng) or "x"] * 2)
             for i in range(40)]
    other = [Item(id=it.id, hypotheses=[h + " the" for h in it.hypotheses], references=it.references) for it in items]
    for name in ("bleu", "delta_bleu"):
        metric = get_metric(name, convention=convention, smoothing=smoothing)
        score = metric.score_items(items)
        stats = metric_stats(metric, score, items)
        assert stats.finish(stats.table.sum(axis=0, keepdims=True))[0] == pytest.approx(score.score, abs=1e-12)
        found = compare_systems(metric, [items, other], test="ar", n=200)
        assert 0 <= found[1]["p_value"] <= 1 and np.isfinite(found[1]["score"])


def test_delta_bleu_with_unit_weights_equals_bleu_under_each_convention():
    rng = random.Random("delta")
    items = [Item(id=str(i), hypotheses=[_sentence(rng)], references=[_sentence(rng) or "x" for _ in range(3)])
             for i in range(30)]
    for convention, smoothing in (("sacrebleu", "floor"), ("nlgeval", "none")):
        bleu = get_metric("bleu", convention=convention, smoothing=smoothing).score_items(items)
        delta = get_metric("delta_bleu", convention=convention, smoothing=smoothing).score_items(items)
        assert delta.score == bleu.score and delta.per_item == bleu.per_item


def _write(tmp_path, rows, name):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_cli_interface_equals_sacrebleu_corpus_bleu(tmp_path, capsys):
    rng = random.Random("cli")
    items = _corpus(random.Random("cli-items"), max_refs=4) + _corpus(rng, max_refs=4)
    items = [Item(id=str(i), hypotheses=it.hypotheses, references=it.references) for i, it in enumerate(items)]
    refs = _write(tmp_path, [{"id": it.id, "references": it.references} for it in items], "refs.jsonl")
    hyps = _write(tmp_path, [{"id": it.id, "hypothesis": it.hypotheses[0]} for it in items], "hyps.jsonl")
    code = main(["score", "-r", refs, "-H", hyps, "-m", "bleu", "--bleu-convention", "sacrebleu", "--tokenizer", "13a",
                 "--bleu-smoothing", "none", "--format", "json", "-q"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    expected = sacrebleu.corpus_bleu([it.hypotheses[0] for it in items], _streams(items), tokenize="13a",
                                     smooth_method="none").score / 100
    assert out["bleu"]["score"] == expected
    assert "|conv:sacrebleu|" in out["bleu"]["signature"]
    main(["score", "-r", refs, "-H", hyps, "-m", "bleu", "--format", "json", "-q"])
    assert "|conv:nltk|" in json.loads(capsys.readouterr().out)["bleu"]["signature"]


def test_cli_says_maxbleu_keeps_the_public_scorer_rule(tmp_path, capsys):
    refs = _write(tmp_path, [{"id": "q", "groups": [["the cat sat"], ["a dog ran"]]}], "refs.jsonl")
    hyps = _write(tmp_path, [{"id": "q", "hypothesis": "the cat sat"}], "hyps.jsonl")
    code = main(["score", "-r", refs, "-H", hyps, "-m", "maxbleu", "--bleu-convention", "sacrebleu", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0
    assert "maxbleu keeps the public LSDSCC scorer's BLEU" in captured.err


def test_evaluate_module_takes_the_convention():
    import os

    os.environ["HF_EVALUATE_OFFLINE"] = "1"
    import evaluate

    from multiref.metrics import evaluate_module_path

    items = _corpus(random.Random("evaluate"), max_refs=1) * 3
    predictions = [it.hypotheses[0] for it in items]
    references = [it.references for it in items]
    module = evaluate.load(evaluate_module_path("multiref_metrics"))
    found = module.compute(predictions=predictions, references=references, metric="bleu", convention="sacrebleu",
                           smoothing="exp")
    assert found["bleu"] == sacrebleu.corpus_bleu(predictions, [[r[0] for r in references]], tokenize="none").score / 100
    assert "|smooth:exp|bp:yes|conv:sacrebleu|" in found["signature"]


def _hred_items(folder, n_refs: int) -> list:
    """HRED's outputs on multi-reference DailyDialog (hredf.txt, by test_duid_mapping.json) with the
    context's first ``n_refs`` references."""
    line_of = json.loads((folder / "test_duid_mapping.json").read_text(encoding="utf-8"))
    outputs = (folder / "hredf.txt").read_text(encoding="utf-8").split("\n")
    items = []
    for line in (folder / "multireftest.json").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for turn, utterance in enumerate(record["dialogue"]):
            key = f"{record['index']}_{turn}"
            if utterance.get("responses") and key in line_of:
                items.append(Item(id=key, hypotheses=[outputs[line_of[key] - 1]],
                                  references=[" ".join(r.split()) for r in utterance["responses"][:n_refs]]))
    return items


def test_real_dailydialog_hred_equals_both_peers():
    """The issue's case (HRED on DailyDialog, 13a: ours 0.014828 against sacrebleu's 1.4941) under each convention."""
    from pycocoevalcap.bleu.bleu import Bleu
    from tests.helpers import real_data

    folder = real_data("multiref-dailydialog")
    for n_refs in (1, 5):
        items = _hred_items(folder, n_refs)
        hyps = [it.hypotheses[0] for it in items]
        ours = get_metric("bleu", convention="sacrebleu", tokenizer="13a").score_items(items).score
        assert ours == sacrebleu.corpus_bleu(hyps, _streams(items), tokenize="13a", smooth_method="none").score / 100
        coco = Bleu(4).compute_score({i: it.references for i, it in enumerate(items)},
                                     {i: [" ".join(h.split())] for i, h in enumerate(hyps)}, verbose=0)[0][3]
        assert get_metric("bleu", convention="nlgeval").score_items(items).score == coco
    assert len(items) == 6740
