"""Options declared once (multiref/util/options.py): one dataclass field gives the flag, the value
read back, the Beam options class and the card; the jobs' own declarations agree with the
real ``multiref`` parser."""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass

import pytest

from multiref.util.options import (add_arguments, declared, default_of, from_args, group, number_type, option, recorded,
                                   to_argv)
from tests.helpers import REPO_DIR


@dataclass(frozen=True)
class Inner:
    low: float = option(0.25, flag="--range", index=0, help="the range")
    high: float = option(0.75, flag="--range", index=1, help="the range")
    seed: int = option(7, flag="--seed", help="seed")


@dataclass(frozen=True)
class Toy:
    size: int = option(3, flag="--size", low=1, high=9, help="a bounded size")
    name: str = option("a", flag="--toy-name", choices=("a", "b"), card="toy_name", help="which toy")
    loud: bool = option(True, flag="--loud", help="loud (default: yes)")
    quiet: bool = option(False, flag="--hush", help="hush")
    strict: bool = option(True, flag="--lenient", inverse=True, help="lenient: not strict")
    words: tuple = option(("x",), flag="--word", repeat=True, help="repeatable")
    pair: tuple = option((1, 2), flag="--pair", metavar=("A", "B"), help="two numbers")
    tags: tuple = option((), flag="--tags", choices=("p", "q"), convert=lambda v: tuple(sorted(set(v))), help="tags")
    inner: Inner = group(Inner, "inner things")
    seed: int = option(7, flag="--seed", help="seed")
    hidden: str = "not a flag"

    def __post_init__(self):
        if self.inner.low > self.inner.high:
            raise ValueError("low above high")


@pytest.fixture(scope="module")
def leaves():
    from multiref_cli import build_parser, flags

    return dict(flags.leaf_parsers(build_parser()))


def _parser(*classes):
    parser = argparse.ArgumentParser(prog="toy")
    add_arguments(parser, *classes)
    return parser


def test_defaults_give_the_dataclass_defaults():
    assert from_args(Toy, _parser(Toy).parse_args([])) == Toy()
    assert from_args(Toy, _parser(Toy).parse_args(["--lenient"])) == Toy(strict=False)


def test_every_kind_of_flag_reaches_its_field():
    args = _parser(Toy).parse_args(["--size", "4", "--toy-name", "b", "--no-loud", "--hush", "--word", "y",
                                    "--word", "z", "--pair", "5", "6", "--tags", "q", "p", "q",
                                    "--range", "0.1", "0.2", "--seed", "3"])
    toy = from_args(Toy, args, hidden="given")
    assert toy == Toy(size=4, name="b", loud=False, quiet=True, strict=True, words=("y", "z"), pair=(5, 6), tags=("p", "q"),
                      inner=Inner(low=0.1, high=0.2, seed=3), seed=3, hidden="given")


def test_bounds_and_choices_are_usage_errors(capsys):
    for argv in (["--size", "10"], ["--size", "0"], ["--toy-name", "c"], ["--size", "x"]):
        with pytest.raises(SystemExit) as exc:
            _parser(Toy).parse_args(argv)
        assert exc.value.code == 2
    assert "must be from 1 to 9, got 0" in capsys.readouterr().err


@pytest.mark.parametrize("kind, low, high, text, message", [
    (int, 1, 10, "4.5", "expected an integer from 1 to 10, got '4.5'"),
    (int, 1, 10, "9" * 5000, "expected an integer from 1 to 10, got '99999"),
    (int, 0, None, "-1", "must be at least 0, got -1"),
    (int, None, 5, "6", "must be at most 5, got 6"),
    (float, 0, None, "x", "expected a number at least 0, got 'x'"),
    (float, 0, None, "-0.5", "must be at least 0, got -0.5"),
    (float, 0, None, "nan", "expected a finite number at least 0, got 'nan'"),
    (float, 0, None, "inf", "expected a finite number at least 0, got 'inf'"),
    (float, None, None, "1e999", "expected a finite number, got '1e999'"),
    (float, -1.0, 1.0, "1.5", "must be from -1 to 1, got 1.5"),  # float bounds as :g shows them
    (float, 1e-6, None, "0", "must be at least 1e-06, got 0"),
])
def test_number_type_says_what_it_expected(kind, low, high, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as info:
        number_type(kind, low, high)(text)
    assert str(info.value).startswith(message)


def test_number_type_returns_values_in_bounds():
    assert number_type(int, 0, 65535)("65535") == 65535 and number_type(float, 0)("2.5") == 2.5
    assert number_type(int)("-7") == -7


def test_a_skipped_flag_is_left_to_the_caller():
    parser = argparse.ArgumentParser()
    add_arguments(parser, Toy, skip=("--size",))
    parser.add_argument("--toy-size", type=int, default=default_of(Toy, "size"))
    args = parser.parse_args(["--toy-size", "5"])
    assert "--size" not in parser._option_string_actions and default_of(Toy, "size") == 3
    assert from_args(Toy, args, size=args.toy_size).size == 5


def test_augment_declares_no_default_of_its_own():
    """augment's three renamed flags take the test-set stage's defaults; its other method flags are
    the stage's options, so a default changed there changes here."""
    from pipelines.augment import options as augment_options

    parser = argparse.ArgumentParser()
    augment_options.add_augment_arguments(parser)
    actions = parser._option_string_actions
    for flag, _metavar, cls, name, stage_flag, _help in augment_options.RENAMED:
        assert actions[flag].default == default_of(cls, name) and stage_flag not in actions
    for flag in ("--doc2vec-epochs", "--doc2vec-sample", "--bm25-k1", "--jvm-heap", "--max-candidates"):
        assert flag in actions


def test_a_check_of_the_dataclass_is_a_value_error():
    with pytest.raises(ValueError, match="low above high"):
        from_args(Toy, _parser(Toy).parse_args(["--range", "0.9", "0.1"]))


def test_a_shared_flag_is_added_once_and_must_agree():
    parser = _parser(Toy)
    assert sum("--seed" in a.option_strings for a in parser._actions) == 1

    @dataclass(frozen=True)
    class Other:
        seed: int = option(8, flag="--seed", help="seed")

    with pytest.raises(TypeError, match="--seed"):
        _parser(Toy, Other)


def test_help_shows_defaults_groups_and_metavars():
    text = _parser(Toy).format_help()
    assert "a bounded size (default: 3)" in text
    assert "--range LOW HIGH" in text and "--pair A B" in text
    assert "inner things:" in text
    assert "--loud, --no-loud" in text and "(default: True)" not in text


def test_recorded_keeps_declared_order_and_card_names():
    assert list(recorded(Toy()).items()) == [
        ("size", 3), ("toy_name", "a"), ("loud", True), ("quiet", False), ("strict", True), ("words", ["x"]), ("pair", [1, 2]),
        ("tags", []), ("inner", {"low": 0.25, "high": 0.75, "seed": 7}), ("seed", 7), ("hidden", "not a flag")]


@pytest.mark.parametrize("toy", [Toy(), Toy(size=4, name="b", loud=False, quiet=True, strict=False, words=("y", "z"),
                                     pair=(5, 6), tags=("p",), inner=Inner(0.1, 0.2, 3), seed=3)])
def test_recorded_options_give_back_their_flags(toy):
    argv, names = to_argv(Toy, recorded(toy))
    assert from_args(Toy, _parser(Toy).parse_args(argv)) == toy
    assert names == set(recorded(toy)) - {"hidden"}


def test_a_corpus_card_gives_back_its_flags(leaves):
    from lsdscc.corpus.config import CorpusConfig
    from pipelines.lsdscc.options import config_from_values

    config = CorpusConfig(subreddits=("movies", "films"), lowercase=False, tokenizer="nltk", vocab_size=300,
                          validation_fraction=0.3, min_turns=4)
    argv, _names = to_argv(CorpusConfig, config.as_options())
    args, extras = leaves["lsdscc build"].parse_known_args(argv)
    assert not extras and config_from_values(args) == config


@dataclass(frozen=True)
class Spellings:
    paths: tuple = option((), flag="--path", aliases=("-p", "-i"), extend=True, metavar="PATH", help="paths")
    fast: bool = option(False, flag="--fast", exclusive="speed", help="fast")
    slow: bool = option(False, flag="--slow", exclusive="speed", help="slow")
    penalty: bool | None = option(None, flag="--penalty", negatable=True, help="on, off, or the library's")
    level: int = option(2, flag="--level", low=1, high=3, help="level")


def test_aliases_extend_exclusive_switches_and_a_three_way_switch(capsys):
    parser = _parser(Spellings)
    assert from_args(Spellings, parser.parse_args([])) == Spellings()
    parsed = parser.parse_args(["-p", "a", "b", "--path", "c", "-i", "d", "--slow", "--no-penalty"])
    assert from_args(Spellings, parsed) == Spellings(paths=("a", "b", "c", "d"), slow=True, penalty=False)
    assert from_args(Spellings, parser.parse_args(["--penalty"])).penalty is True
    with pytest.raises(SystemExit):
        parser.parse_args(["--fast", "--slow"])
    assert "argument --slow: not allowed with argument --fast" in capsys.readouterr().err
    assert "[--fast | --slow]" in parser.format_usage() and "--path PATH [PATH ...], -p PATH" in parser.format_help()
    for config in (Spellings(paths=("a", "b"), fast=True, penalty=False), Spellings(penalty=True), Spellings()):
        argv, _names = to_argv(Spellings, recorded(config))
        assert from_args(Spellings, parser.parse_args(argv)) == config
    assert ("--penalty/--no-penalty", "-", "on, off, or the library's", ["Spellings.penalty"]) in declared(Spellings)


def test_check_values_does_the_parsers_checks_for_python_callers():
    from multiref.util.options import check_values

    check_values(Spellings(level=3))
    with pytest.raises(ValueError, match="--level: must be from 1 to 3, got 4"):
        check_values(Spellings(level=4))
    with pytest.raises(ValueError, match="--toy-name: 'c' is not one of: a, b"):
        check_values(Toy(name="c"))
    with pytest.raises(ValueError, match="--tags: 'r' is not one of: p, q"):
        check_values(Toy(tags=("p", "r")))


def test_mutable_default_is_refused():
    with pytest.raises(TypeError, match="mutable"):
        option([1], flag="--x", help="")


def test_declared_lists_each_flag_once():
    rows = declared(Toy)
    assert [r[0] for r in rows].count("--seed") == 1
    assert ("--size", "3", "a bounded size", ["Toy.size"]) in rows
    assert ("--range", "0.25 0.75", "the range", ["Inner.low", "Inner.high"]) in rows
    assert ("--seed", "7", "seed", ["Inner.seed", "Toy.seed"]) in rows
    assert ("--word", "x", "repeatable", ["Toy.words"]) in rows and ("--loud/--no-loud", "yes", "loud (default: yes)", ["Toy.loud"]) in rows
    assert ("--toy-name", "a", "which toy; one of: a, b", ["Toy.name"]) in rows and rows[3][0] == "--hush"
    assert ("--lenient", "no", "lenient: not strict", ["Toy.strict"]) in rows


# ---------------------------------------------------------------- the jobs' declarations


def test_corpus_flags_of_the_cli_give_the_config_defaults(leaves):
    from lsdscc.corpus.config import CorpusConfig
    from pipelines.lsdscc.options import CorpusJob, config_from_values

    args, _ = leaves["lsdscc build"].parse_known_args([])
    assert config_from_values(args) == CorpusConfig()
    assert from_args(CorpusJob, args) == CorpusJob()
    args, _ = leaves["lsdscc build"].parse_known_args(["--subreddit", "A", "--subreddit", "b", "--no-lowercase",
                                                       "--vocab-size", "7", "--validation-fraction", "0.5"])
    assert config_from_values(args, num_shards=2) == CorpusConfig(subreddits=("A", "b"), lowercase=False, vocab_size=7,
                                                                  validation_fraction=0.5, num_shards=2)


def test_testset_flags_give_the_config_defaults_and_one_seed(leaves):
    from lsdscc.testset.doc2vec import Doc2VecConfig
    from lsdscc.testset.retrieval import RetrievalConfig
    from lsdscc.testset.assemble import SamplingConfig
    from pipelines.lsdscc.testset_options import configs_from_args

    for command in ("lsdscc build", "lsdscc testset"):
        args, _ = leaves[command].parse_known_args(["--dataset", "d"] if command == "lsdscc testset" else [])
        assert configs_from_args(args) == (RetrievalConfig(), Doc2VecConfig(), SamplingConfig())
    args, _ = leaves["lsdscc testset"].parse_known_args(["--dataset", "d", "--testset-seed", "9", "--strata-bounds",
                                                         "2", "4", "--bm25-k1", "0.5"])
    retrieval, d2v, sampling = configs_from_args(args)
    assert (d2v.seed, sampling.seed, sampling.bounds, retrieval.k1) == (9, 9, (2, 4), 0.5)


def test_dailydialog_flags_give_the_build_defaults(leaves):
    from pipelines.dailydialog.options import BuildOptions, options_from_args

    args, _ = leaves["dailydialog build"].parse_known_args(["--output", "o"])
    assert options_from_args(args) == BuildOptions()
    args, _ = leaves["dailydialog build"].parse_known_args(["--output", "o", "--no-dedup", "--split-fractions", "0.6",
                                                            "0.2", "0.2", "--seed", "4", "--corruptions", "reverse",
                                                            "reverse", "--multiref-splits", "validation", "test"])
    options = options_from_args(args)
    assert (options.dedup, options.splits.train, options.negatives.seed, options.seed) == (False, 0.6, 4, 4)
    assert options.corruptions == ("reverse",) and options.multiref_splits == ("test", "validation")


def test_the_cards_record_the_same_options_in_the_same_order():
    from lsdscc.corpus.config import DEFAULT_BOTS, CorpusConfig
    from pipelines.dailydialog.options import BuildOptions

    card = BuildOptions().card()
    assert list(card.items()) == [
        ("text", {"curly_quotes": False, "detokenize": False, "lowercase": False}),
        ("chunks", {"long_dialogue": 8, "chunk_length": 4, "min_chunk": 3, "max_chunk": 5}),
        ("splits", {"train": 0.8, "validation": 0.1, "test": 0.1, "salt": "dailydialog_pp"}),
        ("random_negatives", {"count": 5, "min_words": 5, "seed": 0, "keep_released": False}),
        ("multiref_splits", ["test"]), ("multiref_first_reference", "released"), ("dedup", True),
        ("near_duplicates", None), ("corruptions", []), ("seed", 0)]
    assert [list(v) for v in card.values() if isinstance(v, dict)] == [
        ["curly_quotes", "detokenize", "lowercase"], ["long_dialogue", "chunk_length", "min_chunk", "max_chunk"],
        ["train", "validation", "test", "salt"], ["count", "min_words", "seed", "keep_released"]]
    assert CorpusConfig().as_options() == {
        "bot_pattern": r"(?i)bot[-_]?$", "bots": list(DEFAULT_BOTS), "drop_deleted_later": True, "long_word_length": 20,
        "lowercase": True, "max_query_tokens": 100, "max_response_tokens": 60, "min_split_length": 7, "min_turns": 3,
        "num_shards": 1, "piece_min_count": 10, "rare_max_count": 2, "since": None, "subreddits": ["movies"],
        "text_convention": "lsdscc", "tokenizer": "treebank", "unk_token": "<unk>", "until": None,
        "validation_fraction": 0.15, "vocab_size": 50_000}  # since/until: the time range (issue 21)
    assert list(CorpusConfig().as_options()) == sorted(CorpusConfig().as_options())


# ---------------------------------------------------------------- Beam options classes


def test_job_options_classes_are_made_once_and_read_the_flags():
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.dailydialog.options import dailydialog_pipeline_options
    from pipelines.lsdscc.options import corpus_pipeline_options

    corpus, dd = corpus_pipeline_options(), dailydialog_pipeline_options()
    assert corpus is corpus_pipeline_options() and issubclass(corpus, PipelineOptions)
    assert corpus.__name__ == "LsdsccCorpusOptions" and dd.__name__ == "DailyDialogOptions"
    options = PipelineOptions(["--vocab-size", "7", "--no-lowercase", "--direct_num_workers", "2"])
    assert (options.view_as(corpus).vocab_size, options.view_as(corpus).lowercase) == (7, False)
    assert options.view_as(dd).lowercase is False and options.view_as(dd).seed == 0
    # Beam parses every registered class with one parser: the jobs' shared flags must not clash
    assert PipelineOptions(["--output", "x"]).get_all_options()["output"] == "x"


def test_help_imports_no_beam():
    code = ("import sys\nfrom multiref_cli import build_parser\nbuild_parser().format_help()\n"
            "assert 'apache_beam' not in sys.modules, 'Beam imported at parse time'\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_DIR, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@dataclass(frozen=True)
class Source:
    """Two ways to name the input, one of them required; a short spelling; one-or-more values."""

    folder: str | None = option(None, flag="--folder", required=True, exclusive="source", help="a folder")
    file: str | None = option(None, flag="--file", required=True, exclusive="source", help="a file")
    order: str | None = option(None, flag="--order", exclusive="order", help="optional, alone in its group")
    other: str | None = option(None, flag="--other-order", exclusive="order", help="or this")
    names: tuple = option((), flag="--names", help="one or more")
    hypotheses: str | None = option(None, flag="--hypotheses", aliases=("-H",), help="outputs")


def _source_parser():
    parser = argparse.ArgumentParser(prog="probe")
    parser.error = lambda message: (_ for _ in ()).throw(ValueError(message))
    add_arguments(parser, Source)
    return parser


@pytest.mark.parametrize("argv, message", [
    ([], "one of the arguments --folder --file is required"),
    (["--folder", "d", "--file", "f"], "argument --file: not allowed with argument --folder"),
    (["--file", "f", "--order", "a", "--other-order", "b"], "argument --other-order: not allowed with argument --order"),
    (["--file", "f", "--names"], "argument --names: expected at least one argument"),
])
def test_exclusive_flags_and_one_or_more_values_are_usage_errors(argv, message):
    with pytest.raises(ValueError, match=message):
        _source_parser().parse_args(argv)


def test_exclusive_short_and_one_or_more_read_back():
    config = from_args(Source, _source_parser().parse_args(["--file", "f", "-H", "h.jsonl", "--names", "a", "b"]))
    assert config == Source(file="f", hypotheses="h.jsonl", names=("a", "b"))
    assert from_args(Source, _source_parser().parse_args(["--folder", "d"])).names == ()
    assert "--hypotheses HYPOTHESES, -H HYPOTHESES" in _source_parser().format_help()


# -- from_recorded: recorded options back to the config, checked as the parser checks their flags ----

@pytest.mark.parametrize("config", [Toy(), Toy(size=4, name="b", loud=False, quiet=True, strict=False, words=("y", "z"),
                                             pair=(5, 6), tags=("p",), inner=Inner(0.1, 0.2, 3), seed=3),
                                    Spellings(paths=("a", "b"), fast=True, penalty=False), Spellings(penalty=True)])
def test_from_recorded_is_the_inverse_of_recorded(config):
    from multiref.util.options import from_recorded

    assert from_recorded(type(config), recorded(config)) == config
    assert from_recorded(Toy, {}) == Toy() and from_recorded(Toy, {"size": 5}, seed=9) == Toy(size=5, seed=9)


class _Refusing(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(message)


#: tampered values of Toy's recorded options, each refused by the parser given to_argv's flags
TAMPERED = [{"size": "abc"}, {"size": 10}, {"size": 2.5}, {"size": True}, {"toy_name": "c"}, {"toy_name": 3},
            {"size": [4, 5]}, {"pair": [1]}, {"pair": [1, 2, 3]}, {"tags": ["r"]}, {"words": [1, "x"], "size": "z"},
            {"inner": {"low": "x"}}, {"inner": {"low": 0.9, "high": 0.1}}]


@pytest.mark.parametrize("tampered", TAMPERED)
def test_from_recorded_refuses_what_the_parser_refuses_in_its_words(tampered):
    from multiref.util.options import from_recorded

    options = {**recorded(Toy()), **tampered}
    if "inner" in tampered:
        options["inner"] = {**recorded(Toy())["inner"], **tampered["inner"]}
    parser = _Refusing(add_help=False)
    add_arguments(parser, Toy)
    with pytest.raises(ValueError) as by_parser:
        from_args(Toy, parser.parse_args(to_argv(Toy, options)[0]))
    with pytest.raises(ValueError) as by_config:
        from_recorded(Toy, options)
    assert str(by_config.value) == str(by_parser.value)


@pytest.mark.parametrize("field, value, words", [
    ("loud", "no", 'loud: "no" is not a value of --loud/--no-loud (it would be recorded as true)'),
    ("words", "xy", 'argument --word: expected a list, got "xy"'),
    ("words", [], "words: [] is not a value of --word (it would be recorded as [\"x\"])"),
    ("size", None, "size: null is not a value of --size (it would be recorded as 3)"),
    ("inner", 7, "inner: expected an object of options, got int")])
def test_from_recorded_refuses_a_value_the_config_would_not_record_naming_the_field(field, value, words):
    """What the parser would have turned into another value (a switch's truth, a default) is refused."""
    from multiref.util.options import from_recorded

    with pytest.raises(ValueError) as refused:
        from_recorded(Toy, {**recorded(Toy()), field: value})
    assert str(refused.value) == words
