"""The Hugging Face evaluate modules: they load offline with evaluate.load(path), their
docstring examples run (doctest), and they give the library's numbers."""

from __future__ import annotations

import doctest
import importlib.util
import os

import pytest

os.environ["HF_EVALUATE_OFFLINE"] = "1"

from multiref.metrics import Item, evaluate_module_path, get_metric  # noqa: E402
from tests.test_lsdscc_metrics import FIGURE4_GROUPS, FIGURE4_HYPOTHESES  # noqa: E402

MODULES = ["lsdscc_metrics", "multiref_metrics"]


def _module_source(name):
    path = os.path.join(evaluate_module_path(name), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_evaluate_module_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    """Runs the Examples section of _KWARGS_DESCRIPTION (the card's numbers) as a doctest."""
    module = _module_source(name)
    test = doctest.DocTestParser().get_doctest(module._KWARGS_DESCRIPTION, {}, f"{name}._KWARGS_DESCRIPTION",
                                               module.__file__, 0)
    assert len(test.examples) >= 5
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


@pytest.mark.parametrize("name", MODULES)
def test_module_folder_has_card_and_script(name):
    folder = evaluate_module_path(name)
    assert os.path.isfile(os.path.join(folder, f"{name}.py"))
    card = open(os.path.join(folder, "README.md"), encoding="utf-8").read()
    assert card.startswith("---\n") and "## How to use" in card


def test_lsdscc_module_figure4():
    import evaluate

    module = evaluate.load(evaluate_module_path("lsdscc_metrics"))
    results = module.compute(predictions=[FIGURE4_HYPOTHESES], references=[FIGURE4_GROUPS])
    assert results["mds"] == pytest.approx(0.75) and results["pds"] == pytest.approx(0.875)
    expected = get_metric("maxbleu").score_items([Item("q", FIGURE4_HYPOTHESES, groups=FIGURE4_GROUPS)]).score
    assert results["maxbleu"] == expected
    results = module.compute(predictions=[FIGURE4_HYPOTHESES], references=[FIGURE4_GROUPS],
                             smoothing="nltk1", brevity_penalty=True, order=2)
    assert results["signature"].startswith("maxbleu|tok:whitespace|lc:no|order:2|smooth:nltk1|bp:yes|")


def test_multiref_module_config_name_and_kwargs():
    import evaluate

    preds = ["the cat sat on a mat", "see you later"]
    refs = [["the cat is on the mat", "a cat sat on the mat"], ["see you tomorrow", "bye"]]
    rouge = evaluate.load(evaluate_module_path("multiref_metrics"), "rouge_l")
    result = rouge.compute(predictions=preds, references=refs)
    assert result["rouge_l"] == get_metric("rouge_l").corpus_score(preds, refs).score
    module = evaluate.load(evaluate_module_path("multiref_metrics"))
    result = module.compute(predictions=preds, references=refs, metric="bleu", smoothing="nltk1", aggregate="max")
    assert result["bleu"] == get_metric("bleu", smoothing="nltk1", aggregate="max").corpus_score(preds, refs).score
    result = module.compute(predictions=preds, references=refs, metric="delta_bleu", order=1,
                            weights_per_reference=[[1.0, -1.0], [1.0, 0.5]])
    assert result["signature"].startswith("delta_bleu|")
    with pytest.raises(ValueError):
        module.compute(predictions=preds, references=refs, metric="nosuch")


def test_modules_score_what_multiref_score_scores_when_no_metric_is_named(capsys):
    """The metrics a run scores when none is named are declared once (multiref.metrics.defaults):
    the evaluate modules and ``multiref score`` (its ``--metric`` default) read them there."""
    import evaluate

    from multiref.metrics.defaults import DEFAULT_FLAT, DEFAULT_GROUPED
    from multiref_cli import build_parser, flags

    grouped = evaluate.load(evaluate_module_path("lsdscc_metrics"))
    results = grouped.compute(predictions=[FIGURE4_HYPOTHESES], references=[FIGURE4_GROUPS])
    assert set(results) - {"signature", "signatures"} == set(DEFAULT_GROUPED) == {"maxbleu", "mds", "pds"}
    flat = evaluate.load(evaluate_module_path("multiref_metrics"))
    result = flat.compute(predictions=["the cat sat"], references=[["the cat sat down"]])
    assert set(result) == {DEFAULT_FLAT[0], "signature"} and DEFAULT_FLAT == ("bleu",)
    metric_help = flags.visible_options(dict(flags.leaf_parsers(build_parser("score")))["score"])["--metric"].help
    assert f"default: {', '.join(DEFAULT_GROUPED)} for grouped references, {DEFAULT_FLAT[0]} otherwise" in metric_help
