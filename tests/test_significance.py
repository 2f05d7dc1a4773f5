"""Confidence intervals and paired tests (multiref.metrics.significance, ``multiref score
--confidence/--paired-bs/--paired-ar``): agreement with sacrebleu 2.x on BLEU, every metric's
resampling (a copy of the baseline is never significant, a clearly better system is), and the
sufficient statistics reproducing each observed score."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from multiref_cli import main
from multiref.metrics import Item, get_metric
from multiref.metrics import significance as S
from tests.test_meteor import nltk_data  # noqa: F401  (fixture: a mini WordNet for METEOR)

VOCAB = [f"w{i}" for i in range(40)]


def _sentence(rng, lo=5, hi=12):
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(lo, hi)))


def _noisy(rng, text, p):
    return " ".join(t if rng.random() > p else rng.choice(VOCAB) for t in text.split())


def _flat_data(n=150, seed=1, p_base=0.5, p_sys=0.45):
    rng = random.Random(seed)
    refs = [[_sentence(rng) for _ in range(2)] for _ in range(n)]
    base = [_noisy(rng, r[0], p_base) for r in refs]
    system = [_noisy(rng, r[0], p_sys) for r in refs]
    return refs, base, system


def _sacrebleu(refs, base, system, test, n, seed=12345):
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import _paired_ar_test, _paired_bs_test

    bleu = BLEU(tokenize="none", smooth_method="none")
    streams = [[r[i] for r in refs] for i in range(len(refs[0]))]
    stats = bleu._extract_corpus_statistics(base, streams)
    result = bleu._aggregate_and_compute(stats)
    if test == "bs":
        _, found = _paired_bs_test({"BLEU": (stats, result)}, "s", system, streams, {"BLEU": bleu}, n, seed=seed)
    else:
        _, found = _paired_ar_test({"BLEU": (np.array(stats), result)}, "s", system, streams, {"BLEU": bleu}, n,
                                   seed=seed)
    sys_score = bleu._aggregate_and_compute(bleu._extract_corpus_statistics(system, streams)).score
    return result.score, sys_score, found["BLEU"].p_value


def _ours(refs, base, system, test, n, seed=12345):
    items = [[Item(str(i), [h], list(r)) for i, (h, r) in enumerate(zip(hyps, refs))] for hyps in (base, system)]
    found = S.compare_systems(get_metric("bleu"), items, test=test, n=n, seed=seed)
    return found[0]["score"], found[1]["score"], found[1]["p_value"]


def _mc_error(p, n):
    return 3 * math.sqrt(max(p * (1 - p), 1.0 / n) / n) + 1.0 / n


@pytest.mark.parametrize("test,n", [("bs", 1000), ("ar", 2000)])
@pytest.mark.parametrize("p_sys", [0.45, 0.49, 0.3])  # a small, a tiny and a large difference
def test_p_values_agree_with_sacrebleu(test, n, p_sys):
    refs, base, system = _flat_data(p_sys=p_sys)
    ours = _ours(refs, base, system, test, n)
    theirs = _sacrebleu(refs, base, system, test, n)
    assert ours[0] * 100 == pytest.approx(theirs[0], abs=1e-9) and ours[1] * 100 == pytest.approx(theirs[1], abs=1e-9)
    assert ours[0] != ours[1]
    assert abs(ours[2] - theirs[2]) <= _mc_error(theirs[2], n), (ours[2], theirs[2])


def test_identical_system_is_p_one_where_sacrebleu_says_one_over_n_plus_one():
    refs, base, _ = _flat_data()
    for test, n in (("bs", 500), ("ar", 500)):
        assert _ours(refs, base, list(base), test, n)[2] == 1.0
        assert _sacrebleu(refs, base, list(base), test, n)[2] == pytest.approx(1 / (n + 1))


def test_cli_defaults_are_the_library_defaults():
    from multiref_cli import score

    assert (score.DEFAULT_BS, score.DEFAULT_AR, score.DEFAULT_SEED) == (S.DEFAULT_BS, S.DEFAULT_AR, S.DEFAULT_SEED)


def test_draws_are_sacrebleus_and_seeded():
    counts = S.bootstrap_counts(7, 5, seed=3)
    idxs = np.random.default_rng(3).choice(7, size=(5, 7), replace=True)
    assert counts.tolist() == [np.bincount(row, minlength=7).tolist() for row in idxs]
    assert (S.bootstrap_counts(7, 5, seed=3) == counts).all() and not (S.bootstrap_counts(7, 5, seed=4) == counts).all()
    assert (S.ar_swaps(7, 5, 3) == np.random.default_rng(3).integers(2, size=(5, 7), dtype=bool)).all()


# -- every metric ------------------------------------------------------------------------------


def _kv():
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=8)
    kv.add_vectors(VOCAB, np.random.default_rng(0).normal(size=(len(VOCAB), 8)).astype(np.float32))
    return kv


def _grouped_systems(n=60, seed=2):
    """Items with 3 reference groups; the better system copies one reference of each group,
    the baseline outputs three random sentences; both give 3 outputs per item."""
    rng = random.Random(seed)
    better, base = [], []
    for i in range(n):
        groups = [[_sentence(rng) for _ in range(rng.randint(1, 3))] for _ in range(3)]
        better.append(Item(str(i), [g[0] for g in groups], groups=groups))
        base.append(Item(str(i), [_sentence(rng) for _ in range(3)], groups=groups))
    return base, better


def _diversity_systems(n=60, seed=3):
    """For diversity metrics: the baseline says the same thing everywhere, the better system varies."""
    rng = random.Random(seed)
    refs = [[_sentence(rng)] for _ in range(n)]
    base = [Item(str(i), ["w1 w2 w3 w4", "w1 w2 w3 w4 w5"], r) for i, r in enumerate(refs)]
    better = [Item(str(i), [_sentence(rng), _sentence(rng)], r) for i, r in enumerate(refs)]
    return base, better


METRICS = [
    ("bleu", {}), ("bleu", {"smoothing": "add1"}), ("bleu", {"smoothing": "nltk1"}), ("bleu", {"smoothing": "nltk2"}),
    ("bleu", {"aggregate": "max"}), ("delta_bleu", {}), ("maxbleu", {}), ("mds", {}), ("pds", {}),
    ("maxbleu", {"ties": "lsdscc"}), ("rouge_l", {}), ("meteor", {}), ("embedding_average", {"vectors": "kv"}),
    ("vector_extrema", {"vectors": "kv"}), ("greedy_matching", {"vectors": "kv"}), ("recall_bleu", {}),
    ("distinct", {}), ("distinct", {"order": 1}), ("distinct_per_utterance", {}), ("self_bleu", {}),
]


def _metric(name, options, request):
    if name == "meteor":
        request.getfixturevalue("nltk_data")
    options = {k: (_kv() if v == "kv" else v) for k, v in options.items()}
    return get_metric(name, **options)


def _systems_for(name):
    if name in ("distinct", "distinct_per_utterance", "self_bleu"):
        return _diversity_systems()
    return _grouped_systems()


@pytest.mark.parametrize("name,options", METRICS, ids=[f"{n}-{o}" for n, o in METRICS])
def test_each_metric_copy_is_never_significant_and_better_is(name, options, request):
    metric = _metric(name, options, request)
    base, better = _systems_for(name)
    copy = [Item(i.id, list(i.hypotheses), list(i.references), i.groups) for i in base]
    for test, n in (("bs", 300), ("ar", 300)):
        found = S.compare_systems(metric, [base, copy, better], test=test, n=n, confidence=True)
        assert found[0]["p_value"] is None and found[1]["p_value"] == 1.0
        assert found[1]["score"] == found[0]["score"]
        assert found[2]["score"] != found[0]["score"]
        assert found[2]["p_value"] < 0.05, (test, found)
        for f in found:
            lo, hi = f["ci"]
            assert lo <= hi and lo - 1e-9 <= f["score"] <= hi + 1e-9


@pytest.mark.parametrize("name,options", METRICS, ids=[f"{n}-{o}" for n, o in METRICS])
def test_sufficient_statistics_give_the_observed_score(name, options, request):
    metric = _metric(name, options, request)
    base, better = _systems_for(name)
    for items in (base, better):
        result = metric.score_items(items)
        stats = S.metric_stats(metric, result, items, {})
        assert stats.scores(np.ones((1, len(items))))[0] == pytest.approx(result.score, rel=1e-9, abs=1e-12)
        # a bootstrap resample scores as the metric itself on the resampled test set
        counts = S.bootstrap_counts(len(items), 3, seed=5)
        for row in counts:
            resampled = [item for item, c in zip(items, row) for _ in range(int(c))]
            expected = metric.score_items(resampled).score
            assert stats.scores(row[None])[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_distinct_resample_counts_distinct_ngrams_of_the_chosen_items():
    items = [Item("a", ["x y z"]), Item("b", ["x y q"]), Item("c", ["r s"])]
    metric = get_metric("distinct")
    stats = S.metric_stats(metric, metric.score_items(items), items, {})
    weights = np.array([[2.0, 0, 0], [1, 1, 0], [0, 0, 3], [1, 1, 1]])
    # a twice: {xy, yz} / 4; a+b: {xy, yz, yq} / 4; c three times: {rs} / 3; all: 4 / 5
    assert stats.scores(weights).tolist() == pytest.approx([0.5, 0.75, 1 / 3, 0.8])


def test_distinct_jackknife_is_the_leave_one_out_rescoring():
    base, better = _diversity_systems(n=25)
    metric = get_metric("distinct")
    for items in (base, better):
        result = metric.score_items(items)
        loo = np.array([metric.score_items(items[:i] + items[i + 1:]).score for i in range(len(items))])
        se = math.sqrt((len(items) - 1) / len(items) * np.sum((loo - loo.mean()) ** 2))
        lo, hi = S.distinct_jackknife(S.metric_stats(metric, result, items, {}))
        assert (lo, hi) == pytest.approx((max(0.0, result.score - 1.96 * se), min(1.0, result.score + 1.96 * se)),
                                         abs=1e-4)
    one = [Item("a", ["x y z"])]
    assert S.distinct_jackknife(S.metric_stats(metric, metric.score_items(one), one, {})) is None


def _pool(size=4000, seed=11, generic=0.2, skew=1.0):
    """Outputs as a repetitive model gives them: Zipfian words, some generic replies, 1-3 per context."""
    rng = random.Random(seed)
    words = [f"v{i}" for i in range(400)]
    zipf = [1.0 / (i + 1) ** skew for i in range(len(words))]
    replies = ["i do n't know .", "yes .", "thank you ."]
    def output():
        if rng.random() < generic:
            return rng.choice(replies)
        return " ".join(rng.choices(words, zipf, k=rng.randint(2, 9)))

    return [Item(str(i), [output() for _ in range(rng.randint(1, 3))]) for i in range(size)]


def test_distinct_interval_covers_the_expected_score_of_test_sets_of_that_size():
    """Coverage by simulation (benchmarks/coverage_distinct.py in small): test sets of 60 items
    drawn from a pool; the truth is the mean Distinct-2 of such test sets. The jackknife covers it
    about 95% of the time; the percentile bootstrap, biased low by repeated items, almost never."""
    pool, metric, rng = _pool(), get_metric("distinct"), np.random.default_rng(4)
    stats = S.metric_stats(metric, metric.score_items(pool), pool, {})

    def draw():
        rows = rng.choice(len(pool), 60, replace=False)
        return S.ItemStats(stats.table[rows], stats.finish, stats.incidence[rows])

    truth = np.mean([draw().scores(np.ones((1, 60)))[0] for _ in range(1500)])
    counts = S.bootstrap_counts(60, 200, seed=1)
    covered = {"jackknife": 0, "percentile": 0}
    for _ in range(150):
        test = draw()
        lo, hi = S.distinct_jackknife(test)
        covered["jackknife"] += lo <= truth <= hi
        lo, hi = S.interval(test.scores(counts))
        covered["percentile"] += lo <= truth <= hi
    assert 0.88 <= covered["jackknife"] / 150 <= 1.0, covered
    assert covered["percentile"] / 150 < 0.2, covered


def test_distinct_paired_tests_copy_never_more_diverse_always_equal_rarely():
    """Paired tests on corpus Distinct-2 over 40 test sets of 60 items: a copy of the baseline is
    never significant; a clearly more diverse system (fewer generic replies, flatter words) always
    is, by both tests; a system drawn from the same source as the baseline (equally diverse) is
    called different by approximate randomization about 5% of the time. (The paired bootstrap
    does so more often on Distinct-n: see benchmarks/coverage_distinct.py --paired.)"""
    metric = get_metric("distinct")
    base, same, better = _pool(seed=11), _pool(seed=12), _pool(seed=13, generic=0.1, skew=0.7)
    false_ar, found = 0, {"bs": 0, "ar": 0}
    for t in range(40):
        rows = random.Random(t).sample(range(len(base)), 60)
        systems = [[p[r] for r in rows] for p in (base, base, same, better)]
        for test in ("bs", "ar"):
            out = S.compare_systems(metric, systems, test=test, n=300, seed=t)
            assert out[1]["p_value"] == 1.0
            found[test] += out[3]["p_value"] < 0.05
            false_ar += test == "ar" and out[2]["p_value"] < 0.05
    assert found == {"bs": 40, "ar": 40} and false_ar <= 5, (found, false_ar)


def test_self_bleu_with_one_output_is_null_not_zero():
    items = [Item(str(i), [f"w{i} w2 w3"], ["w1"]) for i in range(5)]
    result = get_metric("self_bleu").score_items(items)
    assert result.score is None and "2 or more outputs" in result.extra["note"]
    found = S.compare_systems(get_metric("self_bleu"), [items, items], test="bs", n=50, confidence=True)
    assert found[1]["p_value"] is None and found[1]["ci"] is None


# -- the command line ------------------------------------------------------------------------


def _write_systems(tmp_path, n=80):
    refs, base, system = _flat_data(n=n, p_sys=0.3)
    ref_path = tmp_path / "refs.jsonl"
    ref_path.write_text("".join(json.dumps({"id": f"q{i}", "references": r}) + "\n" for i, r in enumerate(refs)))
    paths = []
    for name, hyps in (("base.txt", base), ("copy.txt", base), ("better.txt", system)):
        (tmp_path / name).write_text("".join(h + "\n" for h in hyps))
        paths.append(str(tmp_path / name))
    return str(ref_path), paths, refs, base, system


def test_cli_paired_bs_json_shape_and_sacrebleu_p(tmp_path, capsys):
    ref_path, paths, refs, base, system = _write_systems(tmp_path)
    code = main(["score", "-r", ref_path, "-i", *paths, "-m", "bleu", "-m", "distinct", "-m", "rouge_l",
                 "--paired-bs", "--confidence", "--format", "json", "-q"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and [s["name"] for s in out["systems"]] == paths
    bleu = [s["metrics"]["bleu"] for s in out["systems"]]
    assert set(bleu[0]) == {"score", "ci", "p_value"} and bleu[0]["p_value"] is None and bleu[1]["p_value"] == 1.0
    assert bleu[2]["p_value"] == pytest.approx(_sacrebleu(refs, base, system, "bs", 1000)[2], abs=_mc_error(0.01, 1000))
    assert all(len(s["metrics"][m]["ci"]) == 2 for s in out["systems"] for m in ("bleu", "distinct", "rouge_l"))
    assert out["signature"]["bleu"].endswith("|test:bs|n:1000|ci:95|ci_n:1000|seed:12345")
    assert out["signature"]["distinct"].endswith("|test:bs|n:1000|ci:95|ci_method:jackknife|seed:12345")
    for s in out["systems"]:  # the jackknife interval is centred on the score
        lo, hi = s["metrics"]["distinct"]["ci"]
        assert lo < s["metrics"]["distinct"]["score"] < hi
        assert (lo + hi) / 2 == pytest.approx(s["metrics"]["distinct"]["score"], abs=1e-12)


def test_cli_legend_names_the_jackknife_interval(tmp_path, capsys):
    ref_path, paths, *_ = _write_systems(tmp_path)
    assert main(["score", "-r", ref_path, "-i", *paths[:2], "-m", "bleu", "-m", "distinct", "--confidence", "-q"]) == 0
    text = capsys.readouterr().out
    assert "intervals: 95% bootstrap percentile intervals (distinct: delete-one jackknife, score +- 1.96 SE)" in text
    assert main(["score", "-r", ref_path, "-i", *paths[:2], "-m", "bleu", "--confidence", "-q"]) == 0
    assert "jackknife" not in capsys.readouterr().out


def test_cli_formats_are_deterministic_and_mark_significance(tmp_path, capsys):
    ref_path, paths, *_ = _write_systems(tmp_path)
    texts = {}
    for fmt in ("table", "csv", "markdown", "latex"):
        for _ in range(2):
            assert main(["score", "-r", ref_path, "-i", *paths, "--paired-ar", "--paired-ar-n", "500",
                         "--format", fmt, "-q"]) == 0
            text = capsys.readouterr().out
            assert texts.setdefault(fmt, text) == text  # same seed, same bytes
    assert "| better.txt" not in texts["markdown"]  # names are the paths given
    assert any(line.startswith(f"| {paths[2]} |") and "*" in line for line in texts["markdown"].splitlines())
    assert not any(line.startswith(f"| {paths[1]} |") and "*" in line for line in texts["markdown"].splitlines())
    assert "$^{*}$" in texts["latex"] and "approximate randomization, 500 trials, seed 12345" in texts["table"]
    rows = texts["csv"].splitlines()
    assert rows[0] == "system,metric,score,ci_low,ci_high,p_value,signature" and len(rows) == 4
    assert main(["score", "-r", ref_path, "-i", *paths, "--paired-ar", "--paired-ar-n", "500", "--seed", "7",
                 "--format", "csv", "-q"]) == 0
    other = capsys.readouterr().out
    assert "seed:7" in other and other != texts["csv"]


def test_cli_paired_needs_two_systems_and_the_same_items(tmp_path, capsys):
    ref_path, paths, *_ = _write_systems(tmp_path)
    assert main(["score", "-r", ref_path, "-i", paths[0], "--paired-bs", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "two or more" in err
    part = tmp_path / "part.jsonl"
    part.write_text(json.dumps({"id": "q0", "hypothesis": "w1 w2 w3 w4"}) + "\n")
    full = tmp_path / "full.jsonl"
    full.write_text("".join(json.dumps({"id": f"q{i}", "hypothesis": "w1 w2 w3 w4"}) + "\n" for i in range(2)))
    assert main(["score", "-r", ref_path, "-i", str(full), str(part), "--partial", "--paired-bs", "-q"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "paired tests need the same items" in err
    with pytest.raises(SystemExit) as info:
        main(["score", "-r", ref_path, "-i", paths[0], "--paired-bs-n", "0"])
    assert info.value.code == 2 and "must be from 1 to 1000000" in capsys.readouterr().err


def test_cli_item_order_does_not_change_the_test(tmp_path, capsys):
    ref_path, paths, refs, base, system = _write_systems(tmp_path)
    shuffled = tmp_path / "shuffled.jsonl"
    order = list(range(len(system)))
    random.Random(0).shuffle(order)
    shuffled.write_text("".join(json.dumps({"id": f"q{i}", "hypothesis": system[i]}) + "\n" for i in order))
    outs = []
    for sys_path in (paths[2], str(shuffled)):
        assert main(["score", "-r", ref_path, "-i", paths[0], sys_path, "--paired-bs", "--format", "json", "-q",
                     "-m", "bleu", "-m", "distinct"]) == 0
        outs.append(json.loads(capsys.readouterr().out)["systems"][1]["metrics"])
    assert outs[0] == outs[1]
