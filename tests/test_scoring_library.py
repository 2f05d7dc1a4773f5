"""``multiref score`` as a library call (issue 33, part 2): ``multiref.scoring.score(ScoreConfig(...))``
returns what the command prints (scores, intervals, p-values, complete signatures), with the
per-item scores and the notes and warnings as data; the config is declared once and the
command line's flags and defaults derive from it."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

from multiref.scoring import MetricOptions, ScoreConfig, Statistics, score
from multiref_cli import main
from tests.helpers import data_path

D = data_path("score")
LSDSCC = str(D / "lsdscc_small.json")
HYPS_LSDSCC = str(D / "hyps_lsdscc.jsonl")
REFS_FLAT = str(D / "refs_flat.jsonl")
HYPS_FLAT = str(D / "hyps_flat.jsonl")
OTHER = ['{"id": "d1_1", "hypothesis": "i am fine , thank you ."}', '{"id": "d1_2", "hypothesis": "ok see you ."}',
         '{"id": "d2_1", "hypotheses": ["the weather is warm ."]}']


@pytest.fixture
def other(tmp_path):
    path = tmp_path / "other.jsonl"
    path.write_text("\n".join(OTHER) + "\n")
    return str(path)


def _cli_json(capsys, *argv) -> dict:
    assert main(["score", *argv, "--format", "json", "-q"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("test, flags", [("bs", ["--paired-bs", "--paired-bs-n", "200", "--confidence"]),
                                         ("ar", ["--paired-ar", "--paired-ar-n", "300", "--seed", "7",
                                                 "--correction", "holm"])])
def test_a_python_call_gives_the_command_lines_json(capsys, other, test, flags):
    statistics = Statistics(paired_bs=True, paired_bs_n=200, confidence=True) if test == "bs" else \
        Statistics(paired_ar=True, paired_ar_n=300, seed=7, correction="holm")
    outcome = score(ScoreConfig(references=REFS_FLAT, hypotheses=(HYPS_FLAT, other),
                                metrics=MetricOptions(names=("bleu", "rouge_l", "distinct_per_utterance")),
                                statistics=statistics))
    cli = _cli_json(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT, other, "-m", "bleu", "-m", "rouge_l",
                    "-m", "distinct_per_utterance", *flags)
    assert [s.name for s in outcome.systems] == [s["name"] for s in cli["systems"]] == [HYPS_FLAT, other]
    for ours, theirs in zip(outcome.systems, cli["systems"]):
        assert {m: {k: v for k, v in r.items() if k != "signature"} for m, r in ours.metrics.items()} == theirs["metrics"]
        assert {m: r["signature"] for m, r in ours.metrics.items()} == cli["signature"]
    assert outcome.systems[1].metrics["bleu"]["p_value"] is not None and outcome.systems[0].metrics["bleu"]["p_value"] is None
    signature = outcome.systems[0].metrics["bleu"]["signature"]
    if test == "bs":
        assert signature.endswith("|test:bs|n:200|ci:95|ci_n:200|seed:12345")
        assert all(r["ci"] is not None for s in outcome.systems for r in s.metrics.values())
    else:
        assert signature.endswith("|test:ar|n:300|corr:holm|seed:7")


def test_per_item_scores_are_the_per_item_files(capsys, tmp_path, other):
    items = tmp_path / "items.jsonl"
    assert main(["score", "-r", REFS_FLAT, "-H", HYPS_FLAT, other, "-m", "bleu", "-m", "rouge_l", "-q",
                 "--per-item", str(items)]) == 0
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    outcome = score(ScoreConfig(references=REFS_FLAT, hypotheses=[HYPS_FLAT, other],
                                metrics=MetricOptions(names=("bleu", "rouge_l"))))
    for system in outcome.systems:
        mine = [r for r in rows if r["system"] == system.name]
        assert [r["id"] for r in mine] == system.item_ids == ["d1_1", "d1_2", "d2_1"]
        for name in ("bleu", "rouge_l"):
            assert [r[name] for r in mine] == system.per_item[name]
    assert not outcome.statistics and outcome.systems[0].metrics["bleu"]["ci"] is None


def test_notes_and_warnings_are_data_and_nothing_is_printed(capsys, tmp_path):
    hyps = tmp_path / "short.jsonl"
    hyps.write_text('{"query": "what is your favourite movie ?", "hypotheses": ["", "alpha"]}\n'
                    '{"query": "did you like the ending ?", "hypotheses": ["a b c d"]}\n')
    seen = []
    outcome = score(ScoreConfig(references=LSDSCC, hypotheses=str(hyps),
                                metrics=MetricOptions(names=("maxbleu", "bleu"), aggregate="mean",
                                                      bleu=dataclasses.replace(MetricOptions().bleu,
                                                                               convention="sacrebleu"))),
                    on_message=seen.append)
    assert capsys.readouterr() == ("", "")
    kinds = [m.kind for m in outcome.messages if m.kind != "log"]
    assert kinds == ["note", "note", "warning"] and seen == outcome.messages
    notes = [m.text for m in outcome.messages if m.kind == "note"]
    assert notes[0].startswith("note: maxbleu keeps the public LSDSCC scorer's BLEU")
    assert "1 of 3 hypotheses are empty and 1 have 1-2 tokens" in [m for m in outcome.messages if m.kind == "warning"][0].text
    quiet = score(ScoreConfig(references=LSDSCC, hypotheses=(str(hyps),), quiet=True))
    assert not [m for m in quiet.messages if m.kind == "warning"]  # the empty-and-short count is left out


def test_standard_input_is_a_stream_the_caller_gives(capsys):
    text = b"i am fine , thanks .\nsee you tomorrow .\nit is lovely and sunny today .\n"
    outcome = score(ScoreConfig(references=REFS_FLAT, hypotheses=("-",)), stdin=io.BytesIO(text))
    cli = _cli_json(capsys, "-r", REFS_FLAT, "-H", HYPS_FLAT)
    assert outcome.systems[0].name == "stdin"
    assert outcome.systems[0].metrics["bleu"]["score"] == cli["bleu"]["score"] > 0


def test_the_command_lines_defaults_are_the_configs():
    from multiref_cli import build_parser, flags
    from multiref.util.options import from_args

    parser = dict(flags.leaf_parsers(build_parser("score")))["score"]
    parsed = parser.parse_args(["-r", "refs.jsonl"])
    assert from_args(ScoreConfig, parsed) == ScoreConfig(references="refs.jsonl")
    parsed = parser.parse_args(["-r", "r", "-H", "a", "b", "-i", "c", "-m", "bleu", "--paired-ar", "--no-brevity-penalty",
                                "--bleu-weights", "1,1", "-o", "x", "-q"])
    config = from_args(ScoreConfig, parsed)
    assert config.hypotheses == ("a", "b", "c") and config.metrics.names == ("bleu",)
    assert config.statistics.test == "ar" and config.metrics.bleu.brevity_penalty is False
    assert config.metrics.bleu.weights == (1.0, 1.0) and (config.output, config.quiet) == ("x", True)


@pytest.mark.parametrize("make, message", [
    (lambda: Statistics(paired_bs=True, paired_ar=True), "--paired-bs and --paired-ar"),
    (lambda: Statistics(paired_bs_n=0), "--paired-bs-n: must be from 1 to 1000000, got 0"),
    (lambda: Statistics(correction="bonferroni"), "--correction: 'bonferroni' is not one of: none, holm"),
    (lambda: MetricOptions(tokenizer="nope"), "--tokenizer: 'nope' is not one of"),
    (lambda: ScoreConfig(format="pdf"), "--format: 'pdf' is not one of"),
])
def test_a_config_built_in_python_is_checked_as_the_flags_are(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_user_mistakes_are_one_line_user_errors(tmp_path):
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match="no references"):
        score(ScoreConfig(hypotheses=(HYPS_FLAT,)))
    with pytest.raises(UserError, match="give two or more --hypotheses files"):
        score(ScoreConfig(references=REFS_FLAT, hypotheses=(HYPS_FLAT,), statistics=Statistics(paired_bs=True)))


def test_the_config_and_score_help_import_nothing_heavy():
    """``multiref score --help`` and ``import multiref.scoring`` (the config) stay standard library."""
    import subprocess
    import sys

    code = ("import sys, io, contextlib\n"
            "import multiref.scoring\n"
            "from multiref_cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['score', '--help'])\n"
            "    except SystemExit: pass\n"
            "print([m for m in ('numpy', 'scipy', 'pyarrow', 'nltk', 'apache_beam') if m in sys.modules])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
