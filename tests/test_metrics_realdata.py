"""Real-data tier: the public LSDSCC test set (299 queries, 927 groups, 2,519 references,
as released). Skipped unless MULTIREF_DATA is set."""

from __future__ import annotations

import json

import pytest

from multiref_cli import main
from multiref.metrics import Item, get_metric
from multiref.metrics.references import load_references
from tests.helpers import real_data


@pytest.fixture(scope="module")
def lsdscc_path():
    return str(real_data("lsdscc", "test.group.json"))


@pytest.fixture(scope="module")
def refset(lsdscc_path):
    return load_references(lsdscc_path)


def test_loads_the_public_test_set(refset):
    assert refset.kind == "lsdscc-json" and refset.grouped
    assert len(refset.records) == 299
    assert sum(len(r.groups) for r in refset.records) == 927
    assert sum(len(r.references) for r in refset.records) == 2519
    # the 8 groups with id "null" are kept, under that id
    assert sum(g == "null" for r in refset.records for g in r.group_ids) == 8


def _unique_first(groups):
    """For each group, its first reference that appears in no other group (else its first)."""
    out = []
    for i, group in enumerate(groups):
        others = {r for j, g in enumerate(groups) if j != i for r in g}
        out.append(next((r for r in group if r not in others), group[0]))
    return out


def test_one_reference_per_group_covers_every_group(refset):
    """A reference of each group as the system's outputs: MDS = PDS = 1, except where a group
    is a subset of an earlier group (query 'but i am you': group 4's two references are both
    in group 1), where the tie goes to the first group."""
    items = [Item(r.id, _unique_first(r.groups), groups=[list(g) for g in r.groups]) for r in refset.records]
    subset_queries = {r.id for r in refset.records
                      if any(set(g) <= {x for j, o in enumerate(r.groups) if j != i for x in o}
                             for i, g in enumerate(r.groups))}
    assert subset_queries == {"but i am you"}
    for options in ({"smoothing": "nltk1", "brevity_penalty": True}, {"smoothing": "add1", "brevity_penalty": True}):
        mds = get_metric("mds", **options).score_items(items)
        pds = get_metric("pds", **options).score_items(items)
        for item, m, p in zip(items, mds.per_item, pds.per_item):
            if item.id in subset_queries:
                assert m < 1
            else:
                assert m == 1.0 and p == 1.0, item.id
        # every output is one of the references: BLEU 1 for those of 4 tokens or more
        # (shorter ones have no 4-gram, so smoothed BLEU-4 stays below 1 even against themselves)
        maxbleu = get_metric("maxbleu", **options)
        long_values = [v for item in items for h, (_, v) in zip(item.hypotheses, maxbleu.alignment(item))
                       if len(h.split()) >= 4]
        assert len(long_values) > 800 and all(v == pytest.approx(1.0) for v in long_values)
        score = maxbleu.score_items(items).score
        if options["smoothing"] == "add1":  # add-one precisions of a copy are all (m+1)/(m+1) = 1
            assert score == 1.0
        else:
            assert 0.9 < score < 1.0


def test_default_lsdscc_scorer_bleu_ties_only_at_one(refset):
    """With the public scorer's BLEU (add1, no brevity penalty) a short reference contained in
    another group's reference also scores 1.0 there; every misalignment must be such a tie."""
    metric = get_metric("mds")
    items = [Item(r.id, _unique_first(r.groups), groups=[list(g) for g in r.groups]) for r in refset.records]
    result = metric.score_items(items)
    assert 0.99 < result.score < 1.0
    bleu = get_metric("bleu", smoothing="add1", brevity_penalty=False)
    for item in items:
        for own, (aligned, value) in enumerate(metric.alignment(item)):
            if aligned != own:
                assert aligned < own and value == 1.0
                assert bleu.sentence_score(item.hypotheses[own], item.groups[own]) == 1.0


def test_query_as_response_baseline_is_low_and_sane(lsdscc_path, tmp_path, capsys):
    """Baseline system: answer each query with the query itself (one output per query)."""
    queries = list(json.load(open(lsdscc_path, encoding="utf-8")))
    hyps = tmp_path / "echo.jsonl"
    hyps.write_text("".join(json.dumps({"query": q, "hypothesis": q}) + "\n" for q in queries), encoding="utf-8")
    code = main(["score", "-r", lsdscc_path, "-H", str(hyps), "--format", "json", "-q",
                 "-m", "maxbleu", "-m", "mds", "-m", "pds", "-m", "bleu"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    # one output aligns to exactly one group per query: MDS = mean of 1/K over queries
    groups = json.load(open(lsdscc_path, encoding="utf-8"))
    expected_mds = sum(1 / len(g) for g in groups.values()) / len(groups)
    assert result["mds"]["score"] == pytest.approx(expected_mds)
    assert expected_mds < result["pds"]["score"] + 0.2 and 0 < result["pds"]["score"] < 1
    assert 0 < result["maxbleu"]["score"] < 0.5
    assert 0 < result["bleu"]["score"] < 0.3  # corpus BLEU-4 of echoing the query: 0.147


def _google_add1_bleu_without_bp(hypothesis, references, max_order=4):
    """Independent re-statement of the public LSDSCC scorer's aligner BLEU: Google's
    compute_bleu(smooth=True) precisions (matches+1)/(possible+1), geometric mean, no BP."""
    from collections import Counter
    import math

    def grams(tokens):
        return Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1) for i in range(len(tokens) - n + 1))

    merged = Counter()
    for ref in references:
        merged |= grams(ref)
    overlap = grams(hypothesis) & merged
    matches = [0] * max_order
    for gram, c in overlap.items():
        matches[len(gram) - 1] += c
    possible = [max(0, len(hypothesis) - n) for n in range(max_order)]
    precisions = [(m + 1.0) / (p + 1.0) for m, p in zip(matches, possible)]
    return math.exp(sum((1.0 / max_order) * math.log(p) for p in precisions))


def test_echo_baseline_matches_an_independent_lsdscc_scorer(refset):
    """The query itself as the only output: MaxBLEU/MDS/PDS with the default (public scorer)
    BLEU equal an independent implementation of that scorer's formula."""
    items = [Item(r.id, [r.query], groups=[list(g) for g in r.groups]) for r in refset.records]
    maxbleu, mds, pds = [], [], []
    for item in items:
        values = [_google_add1_bleu_without_bp(item.hypotheses[0].split(), [x.split() for x in g]) for g in item.groups]
        k = values.index(max(values))
        maxbleu.append(values[k])
        mds.append(1 / len(item.groups))
        pds.append(len(item.groups[k]) / sum(len(g) for g in item.groups))
    n = len(items)
    assert get_metric("maxbleu").score_items(items).score == pytest.approx(sum(maxbleu) / n, abs=1e-12)
    assert get_metric("mds").score_items(items).score == pytest.approx(sum(mds) / n, abs=1e-12)
    assert get_metric("pds").score_items(items).score == pytest.approx(sum(pds) / n, abs=1e-12)
    # the figures quoted in the README
    assert round(sum(maxbleu) / n, 4) == 0.2612
    assert round(sum(mds) / n, 4) == 0.3659
    assert round(sum(pds) / n, 4) == 0.4499


def _public_scorer_restated(items):
    """The public LSDSCC scorer's behaviour restated independently (docs/algorithms.md#3-lsdscc-metrics and
    the README's "Ties"): groups sorted by int(id), other ids numbered after the others; BLEU of
    add-one precisions summed left to right; first maximum (numpy.argmax); numpy.mean per query;
    per-query (MDS, PDS, MaxBLEU) rows averaged with numpy.mean(axis=0)."""
    import math

    import numpy as np

    rows = []
    for item in items:
        extra = iter(range(len(item.group_ids), 2 * len(item.group_ids)))
        keys = [int(g) if g.lstrip("-").isdigit() else next(extra) for g in item.group_ids]
        groups = [item.groups[i] for i in sorted(range(len(keys)), key=lambda i: keys[i])]
        aligned, best = set(), []
        for hyp in item.hypotheses:
            values = []
            for group in groups:
                matches = _google_add1_bleu_matches(hyp.split(), [r.split() for r in group])
                total = 0
                for n, m in enumerate(matches):
                    total += 0.25 * math.log((m + 1.0) / (max(0, len(hyp.split()) - n) + 1.0))
                values.append(math.exp(total))
            aligned.add(int(np.argmax(values)))
            best.append(max(values))
        rows.append((len(aligned) / len(groups), sum(len(groups[k]) for k in aligned) / sum(len(g) for g in groups),
                     np.mean(best)))
    return np.mean(rows, axis=0)


def _google_add1_bleu_matches(hypothesis, references, max_order=4):
    from collections import Counter

    def grams(tokens):
        return Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1) for i in range(len(tokens) - n + 1))

    merged = Counter()
    for ref in references:
        merged |= grams(ref)
    matches = [0] * max_order
    for gram, c in (grams(hypothesis) & merged).items():
        matches[len(gram) - 1] += c
    return matches


@pytest.mark.parametrize("system", ["every reference", "empty"])
def test_ties_lsdscc_equals_the_public_scorer_to_the_last_digit(refset, system):
    """Systems full of ties: every reference of a query as its outputs (a reference held by two
    groups, or contained in another group's, ties at 1.0), and the empty output (1.0 against
    every group, so the group order alone decides). --ties lsdscc gives the public scorer's
    numbers exactly (==), including the 8 "null" groups."""
    items = [Item(r.id, list(r.references) if system == "every reference" else [""],
                  groups=[list(g) for g in r.groups], group_ids=list(r.group_ids)) for r in refset.records]
    assert sum(g == "null" for item in items for g in item.group_ids) == 8
    mds, pds, maxbleu = _public_scorer_restated(items)
    assert get_metric("mds", ties="lsdscc").score_items(items).score == mds
    assert get_metric("pds", ties="lsdscc").score_items(items).score == pds
    assert get_metric("maxbleu", ties="lsdscc").score_items(items).score == maxbleu


@pytest.mark.parametrize("output, maxbleu, short", [("", 1.0, 0), ("i", 0.9819, 299)])
def test_degenerate_outputs_score_high_and_are_warned_about(lsdscc_path, tmp_path, capsys, output, maxbleu, short):
    """The README's figures: with the public scorer's BLEU (add1, no brevity penalty) the empty
    output scores MaxBLEU 1.0 and "i" 0.9819 (echoing the query: 0.2612); score warns."""
    queries = list(json.load(open(lsdscc_path, encoding="utf-8")))
    hyps = tmp_path / "degenerate.jsonl"
    hyps.write_text("".join(json.dumps({"query": q, "hypothesis": output}) + "\n" for q in queries), encoding="utf-8")
    assert main(["score", "-r", lsdscc_path, "-H", str(hyps), "--format", "json", "-m", "maxbleu"]) == 0
    captured = capsys.readouterr()
    assert round(json.loads(captured.out)["maxbleu"]["score"], 4) == maxbleu
    empty = 299 - short
    assert f"warning: {empty} of 299 hypotheses are empty and {short} have 1-2 tokens" in captured.err
    assert main(["score", "-r", lsdscc_path, "-H", str(hyps), "--format", "json", "-q", "-m", "maxbleu",
                 "--bleu-smoothing", "nltk1", "--brevity-penalty"]) == 0
    assert json.loads(capsys.readouterr().out)["maxbleu"]["score"] < 0.02
