"""``multiref analyze``'s options declared once (multiref/analysis/config.py, issue 33).

The command line builds the config from its flags (``from_args``) and makes the same library
call a Python user makes (:mod:`multiref.analysis.commands`); the paper defaults and the seed
are read from the one place that declares them.
"""

import argparse
import json

import pytest

from multiref.analysis import commands, config
from multiref.analysis.paper_defaults import GUPTA_2019, SAI_2020, SUGIYAMA
from multiref.util.defaults import SEED, TOKENIZER
from multiref.util.options import add_arguments, from_args
from multiref_cli import main
from tests.helpers import data_path

RATINGS = str(data_path("analysis", "ratings.csv"))
DEV = str(data_path("analysis", "ddpp_dev.jsonl"))
TEST = str(data_path("analysis", "ddpp_test.jsonl"))


def _parsed(cls, argv):
    parser = argparse.ArgumentParser()
    add_arguments(parser, cls)
    return from_args(cls, parser.parse_args(argv))


def test_the_flags_give_the_config_a_python_caller_builds():
    parsed = _parsed(config.CorrelationConfig, ["--ratings", RATINGS, "--bootstrap", "7", "--metric", "rouge_l",
                                                "--exclude-system", "a", "--exclude-system", "b", "--no-lowercase"])
    built = config.CorrelationConfig(
        ratings=config.RatingsOptions(ratings=RATINGS, exclude_system=("a", "b")),
        metrics=config.GuptaMetrics(metric=("rouge_l",), lowercase=False),
        statistics=config.CorrelationStatistics(bootstrap=7))
    assert parsed == built
    assert _parsed(config.RegressionConfig, ["--ratings", "x.jsonl"]).model.similarity == SUGIYAMA.similarity


def test_each_paper_default_is_the_papers():
    for cls, paper in ((config.GuptaMetrics, GUPTA_2019), (config.SaiMetrics, SAI_2020)):
        metrics = cls()
        assert (metrics.metric, metrics.tokenizer, metrics.lowercase, metrics.bleu_smoothing, metrics.rouge_beta) == (
            paper.metrics, paper.tokenizer, paper.lowercase, paper.bleu_smoothing, paper.rouge_beta)
    assert config.GuptaMetrics().tokenizer == TOKENIZER and config.SaiMetrics().tokenizer == "nltk"
    model = config.RegressionModel()
    assert (model.tokenizer, model.lowercase, model.top_m, model.svr_c) == (
        SUGIYAMA.tokenizer, SUGIYAMA.lowercase, SUGIYAMA.top_m, SUGIYAMA.svr_c)


def test_one_seed_everywhere():
    from multiref.analysis.correlation import CorrelationOptions
    from multiref.analysis.refcount import RefcountOptions
    from multiref.metrics.significance import DEFAULT_SEED
    from multiref_cli import build_parser, flags

    assert SEED == 12345  # sacrebleu's paired-test seed, which the reports have always used
    assert {CorrelationOptions().seed, RefcountOptions().seed, DEFAULT_SEED, config.CorrelationStatistics().seed,
            config.RefcountConfig().seed} == {SEED}
    leaves = dict(flags.leaf_parsers(build_parser()))
    for command in ("score", "analyze correlation", "analyze refcount"):
        assert flags.visible_options(leaves[command])["--seed"].default == SEED, command


def test_the_library_call_writes_what_the_command_writes(tmp_path, capsys):
    cli, lib = tmp_path / "cli", tmp_path / "lib"
    assert main(["analyze", "correlation", "--ratings", RATINGS, "--metric", "bleu2", "--metric", "rouge_l",
                 "--bootstrap", "20", "--permutations", "20", "--output", str(cli), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    outcome = commands.correlation(config.CorrelationConfig(
        ratings=config.RatingsOptions(ratings=RATINGS),
        metrics=config.GuptaMetrics(metric=("bleu2", "rouge_l")),
        statistics=config.CorrelationStatistics(bootstrap=20, permutations=20),
        output=config.OutputOptions(output_dir=str(lib))))
    assert (cli / "correlation.json").read_bytes() == (lib / "correlation.json").read_bytes()
    assert (cli / "correlation.md").read_bytes() == (lib / "correlation.md").read_bytes()
    assert json.loads(json.dumps(outcome.payload)) == printed
    assert outcome.report["options"]["seed"] == SEED and outcome.report["options"]["bootstrap"] == 20


def test_discrimination_from_python_with_sai_defaults():
    outcome = commands.discrimination(config.DiscriminationConfig(
        data=config.DiscriminationData(test=TEST, validation=DEV, aggregation=("max",)),
        metrics=config.SaiMetrics(metric=("rouge_l",))))
    options = outcome.report["options"]
    assert options["paper_defaults"] == SAI_2020.paper and options["tokenizer"] == SAI_2020.tokenizer
    assert options["aggregations"] == ["max"] and list(outcome.payload) == ["rouge_l"]


def test_a_config_without_its_input_is_a_user_error():
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="--ratings"):
        commands.correlation(config.CorrelationConfig())
    with pytest.raises(UserError, match="--test"):
        commands.discrimination(config.DiscriminationConfig())


def test_the_library_call_refuses_an_input_or_a_dataset_folder_as_its_output(tmp_path):
    """The guard is the library's, so a Python caller has it too: checked before any work."""
    import shutil

    from multiref.util.errors import UserError

    ratings = tmp_path / "ratings.csv"
    shutil.copy(RATINGS, ratings)
    before = ratings.read_bytes()
    with pytest.raises(UserError, match="it is the input"):
        commands.correlation(config.CorrelationConfig(ratings=config.RatingsOptions(ratings=str(ratings)),
                                                      output=config.OutputOptions(output_dir=str(ratings))))
    assert ratings.read_bytes() == before
    dataset = tmp_path / "ds"
    dataset.mkdir()
    (dataset / "README.md").write_text("# card\n")
    (dataset / "dataset_meta.json").write_text('{"configs": {}}\n')
    with pytest.raises(UserError, match="inside the dataset folder"):  # before the bad --orders
        commands.refcount(config.RefcountConfig(ratings=config.RatingsOptions(ratings=str(ratings)), orders=0,
                                                output=config.OutputOptions(output_dir=str(dataset / "plots"))))
    assert sorted(p.name for p in dataset.iterdir()) == ["README.md", "dataset_meta.json"]
