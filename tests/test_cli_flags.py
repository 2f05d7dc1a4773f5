"""The real ``multiref`` parser against the flag vocabulary (multiref_cli/flags.py).

The table states which flag names which concept and why a command's default differs; the
defaults themselves are derived from the option declarations (``multiref.util.options``), or
from the parser for a flag a command adds by hand. Each check names the command and the flag
that drifted, so after a merge the failures list what to reconcile: a concept spelled
differently, another default without a paper named, an old spelling that is no longer a
hidden alias, a new command missing from the table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

from multiref_cli import build_parser, flags

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def leaves():
    return dict(flags.leaf_parsers(build_parser()))


def test_every_command_is_in_the_table(leaves):
    assert sorted(leaves) == sorted(flags.ALL), "commands and flags.ALL differ"
    for row in flags.TABLE:
        unknown = set(row.commands) - set(flags.ALL)
        assert not unknown, f"{row.concept}: no such command {unknown}"


def test_each_concept_has_one_flag_and_a_flag_one_concept_per_command():
    seen = {}
    for row in flags.TABLE:
        for command in row.commands:
            key = (command, row.flag)
            assert key not in seen, f"{command} {row.flag}: both {seen[key]!r} and {row.concept!r}"
            seen[key] = row.concept
        for command, why in row.reasons.items():
            assert command in row.commands, f"{row.concept}: a reason for {command}, which does not take it"
            assert why.strip(), f"{row.concept}: {command} has another default without saying why"


@pytest.mark.parametrize("row", flags.TABLE, ids=lambda r: f"{r.flag}:{r.concept}")
def test_flag_spelling(leaves, row):
    for command in row.commands:
        assert row.flag in flags.visible_options(leaves[command]), f"{command}: {row.concept} is not spelled {row.flag}"


@pytest.mark.parametrize("row", flags.TABLE, ids=lambda r: f"{r.flag}:{r.concept}")
def test_one_default_per_concept_unless_a_paper_demands_another(leaves, row):
    assert flags.disagreements(leaves, row) == []


def test_defaults_come_from_the_declarations_else_the_parser():
    from dataclasses import dataclass

    from multiref.util.options import add_arguments, option

    @dataclass(frozen=True)
    class Probe:
        features: tuple = option(("bleu",), flag="--features", repeat=True, help="repeatable")
        lowercase: bool = option(True, flag="--lowercase", help="lowercase")
        ratings: str | None = option(None, flag="--ratings", required=True, help="file")

    parser = argparse.ArgumentParser()
    add_arguments(parser, Probe)
    parser.add_argument("--by-hand", type=int, default=3)
    assert parser.get_default("features") is None  # the parser's; the declaration says bleu
    assert flags.command_defaults(parser) == {"--features": "bleu", "--lowercase": "yes", "--ratings": flags.REQUIRED,
                                              "--by-hand": "3"}


def test_the_check_sees_a_default_without_a_reason_and_a_stale_reason():
    def leaf(default):
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int, default=default)
        return parser

    leaves = {"a": leaf(1), "b": leaf(1), "c": leaf(2)}
    assert flags.disagreements(leaves, flags.Flag("seed", "--seed", ("a", "b", "c"), reasons={"c": "a paper"})) == []
    found = flags.disagreements(leaves, flags.Flag("seed", "--seed", ("a", "b", "c")))
    assert len(found) == 1 and "defaults differ without a reason" in found[0] and "'c': '2'" in found[0]
    found = flags.disagreements(leaves, flags.Flag("seed", "--seed", ("a", "b", "c"), reasons={"b": "x", "c": "y"}))
    assert len(found) == 1 and "b has a reason for its default, but it is '1'" in found[0]


def test_the_derived_defaults_are_the_ones_the_commands_use(leaves):
    from multiref.util.defaults import SEED

    defaults = flags.command_defaults
    assert defaults(leaves["lsdscc crawl"])["--requests-per-minute"] == "100"
    assert defaults(leaves["lsdscc annotate import"])["--tie"] == "irrelevant"
    assert defaults(leaves["analyze regression"])["--similarity"] == "bleu"
    assert {defaults(leaves[c])["--seed"] for c in ("score", "analyze correlation", "analyze refcount")} == {str(SEED)}


def test_table_flags_are_used_only_where_the_table_says(leaves):
    table_flags = {row.flag for row in flags.TABLE}
    for command, parser in leaves.items():
        listed = {row.flag for row in flags.flags_of(command)}
        for option in flags.visible_options(parser):
            if option in table_flags and option not in listed:
                pytest.fail(f"{command} takes {option}, but the table does not list {command} for it")


def test_old_spellings_are_hidden_aliases_of_the_new_flag(leaves):
    olds = {old for row in flags.TABLE for old in row.old}
    for command, parser in leaves.items():
        visible = flags.visible_options(parser)
        for old in olds:
            assert old not in visible, f"{command} still shows the old spelling {old}"
    for row in flags.TABLE:
        for old, commands in row.old.items():
            for command in commands:
                parser = leaves[command]
                assert old in parser._option_string_actions, f"{command}: {old} is no longer accepted"
                assert parser._option_string_actions[old] is parser._option_string_actions[row.flag], \
                    f"{command}: {old} does not act as {row.flag}"
                assert old not in parser.format_help(), f"{command}: --help shows {old}"


def _sample_value(action):
    if action.nargs == 0:
        return None
    if action.choices:
        return list(action.choices)[0] if action.nargs is None else [list(action.choices)[0]]
    return "x" if action.nargs is None else ["x"]


@pytest.mark.parametrize("row", [r for r in flags.TABLE if r.old], ids=lambda r: r.flag)
def test_an_old_spelling_notes_the_new_one_and_sets_the_same_value(leaves, row, capsys):
    for old, commands in row.old.items():
        for command in commands:
            action = leaves[command]._option_string_actions[old]
            value = _sample_value(action)
            given, expected = argparse.Namespace(), argparse.Namespace()
            action(leaves[command], given, value, old)
            note = capsys.readouterr().err
            assert note == f"multiref: note: {old} is deprecated; use {row.flag}\n"
            action(leaves[command], expected, value, row.flag)
            assert capsys.readouterr().err == ""
            assert vars(given) == vars(expected) and vars(given), f"{command} {old}"


def test_abbreviation_prefers_the_current_spelling(leaves):
    args, _ = leaves["analyze correlation"].parse_known_args(["--ratings", "r.csv", "--out", "folder"])
    assert args.output == "folder"  # the dest of --output


def test_every_command_takes_quiet_progress_and_version(leaves):
    for command, parser in leaves.items():
        known = parser._option_string_actions
        for option in ("--quiet", "--progress", "--version"):
            assert option in known, f"{command} lacks {option}"


def test_old_spelling_in_a_real_process(tmp_path):
    missing = tmp_path / "missing.jsonl"
    proc = subprocess.run([sys.executable, "-m", "multiref_cli", "analyze", "regression", "--data", str(missing)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = proc.stderr.splitlines()
    assert lines[0] == "multiref: note: --data is deprecated; use --ratings"
    assert lines[1].startswith("multiref: error: ") and str(missing) in lines[1]
    assert len(lines) == 2 and proc.returncode == 1


def test_docs_cli_is_what_the_code_renders():
    from multiref_cli import reference

    with open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8") as fh:
        page = fh.read()
    assert flags.markdown_table(build_parser()) in page, "docs/cli.md's flag table differs from flags.markdown_table()"
    assert page == reference.render(), "docs/cli.md is stale: run python -m multiref_cli.reference docs/cli.md"


def test_docs_cli_names_every_command_and_a_page_for_it(leaves):
    from multiref_cli import reference

    assert sorted(reference.PAGES) == sorted(leaves), "reference.PAGES and the parser's commands differ"
    table = reference.commands_table(build_parser())
    for command in leaves:
        assert f"| `multiref {command}` |" in table, f"docs/cli.md does not list {command}"
    with pytest.raises(ValueError, match="no docs page"):
        pages = dict(reference.PAGES)
        del pages["score"]
        original, reference.PAGES = reference.PAGES, pages
        try:
            reference.commands_table(build_parser())
        finally:
            reference.PAGES = original


def test_reference_script_writes_the_page(tmp_path):
    out = tmp_path / "cli.md"
    proc = subprocess.run([sys.executable, "-m", "multiref_cli.reference", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(ROOT, "docs", "cli.md"), encoding="utf-8") as fh:
        assert out.read_text(encoding="utf-8") == fh.read()


def test_beam_options_of_any_pipeline_options_subclass_are_known(leaves):
    # A PipelineOptions subclass registers itself when defined, as the project's own will in
    # pipelines/: its options pass the check without any list to update.
    from apache_beam.options.pipeline_options import PipelineOptions

    from multiref_cli import check_beam_options
    from multiref.util.errors import UsageError

    class _ProbeOptions(PipelineOptions):
        @classmethod
        def _add_argparse_args(cls, parser):
            parser.add_argument("--probe_only_option", type=int)

    build = leaves["lsdscc build"]
    assert check_beam_options(build, ["--", "--probe_only_option", "3", "--direct_num_workers", "2"]) == \
        ["--probe_only_option", "3", "--direct_num_workers", "2"]
    parser = flags.beam_option_parser(build)
    with pytest.raises(UsageError, match="probe_only_option"):
        parser.parse_known_args(["--probe_only_option", "three"])
    with pytest.raises(SystemExit):
        check_beam_options(build, ["--probe_only_optoin", "3"])
