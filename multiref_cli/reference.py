"""The command-line reference page, ``docs/cli.md``, rendered from the code.

The page lists every command with the one-line help the parser gives it and the docs page
that explains it, the flag table of :mod:`multiref_cli.flags`, the options of the dataset
builds and of the LSDSCC tools as their dataclasses declare them
(:func:`multiref.util.options.declared`) and the exit
statuses of :mod:`multiref_cli`. ``tests/test_cli_flags.py`` checks that ``docs/cli.md`` is exactly
:func:`render`'s output, so the page cannot drift from the parser. Regenerate it with::

    python -m multiref_cli.reference docs/cli.md

Standard library only (the parser's modules import nothing heavy at module level).
"""

from __future__ import annotations

import argparse
import sys

from multiref_cli import flags
from multiref_cli.commands import build_parser
from multiref_cli.common import EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

#: the docs page (relative to docs/) that explains each command
PAGES = {
    "score": "scoring.md",
    "lsdscc build": "corpus.md",
    "lsdscc crawl": "corpus.md#crawling-rmovies-yourself-multiref-lsdscc-crawl",
    "lsdscc export-ids": "corpus.md#ids-only-releases-export-ids-and-rehydrate",
    "lsdscc rehydrate": "corpus.md#ids-only-releases-export-ids-and-rehydrate",
    "lsdscc testset": "testset.md",
    "lsdscc annotate export": "testset.md#annotation-round-trip",
    "lsdscc annotate import": "testset.md#annotation-round-trip",
    "lsdscc annotate serve": "testset.md#annotating-in-the-browser",
    "lsdscc annotate browse": "testset.md#annotating-in-the-browser",
    "dailydialog build": "dailydialog.md",
    "analyze correlation": "analysis.md",
    "analyze refcount": "analysis.md",
    "analyze discrimination": "analysis.md",
    "analyze regression": "analysis.md",
    "metrics list": "scoring.md#other-metrics-rouge-l-meteor-embeddings-diversity",
    "metrics path": "scoring.md",
    "augment": "augment.md",
}

EXIT_STATUSES = (
    (EXIT_OK, "success"),
    (EXIT_INPUT, "bad input: a missing, unreadable, empty or wrongly shaped file (binary, wrong JSON shape, "
                 "wrong column names), a bad value, an output that cannot be written, an unreachable `gs://` "
                 "or `http(s)://` path"),
    (EXIT_USAGE, "bad command line: an unknown option (the message names the closest known one, e.g. "
                 "`--vocabsize` -> `--vocab-size`), a missing or malformed option value, a command group "
                 "without its command"),
    (EXIT_INTERNAL, "internal error (a bug): one line; `MULTIREF_DEBUG=1` shows the traceback; please report it"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C)"),
)

HEADER = """\
# Command-line reference

<!-- Generated from the code by `python -m multiref_cli.reference docs/cli.md`; do not edit by
hand. tests/test_cli_flags.py checks that this file is what the code renders. -->

`multiref --help` lists the commands; `multiref COMMAND --help` lists a command's options.
"""

FLAGS_INTRO = """\
## Flags: one flag and one default per concept

One flag and one default per concept, on every command that takes it. The table below is
`multiref_cli/flags.py`'s vocabulary with the defaults the options declare (each default lives
where its option is declared); `tests/test_cli_flags.py` checks the real parser against it, so
a command cannot drift from it. Where a command's default differs, the table names the paper
or release that default reproduces. Old spellings still work, hidden from `--help`, and print
`multiref: note: --old is deprecated; use --new` on stderr.
"""

RENAMED = """\
Renamed in this release (the old spelling still works): `analyze * --output-dir` is
`--output`; `analyze discrimination --aggregation` is `--aggregate`; `analyze correlation|refcount
--multiref-test` is `--multiref-references` (as in `dailydialog build`); `analyze regression
--data` is `--ratings` and `--judgments` is `--pairwise-ratings`. `--lowercase` is
`--lowercase/--no-lowercase` everywhere (`score` and `dailydialog build` gained `--no-lowercase`,
`lsdscc build` gained `--lowercase`).
"""

CONVENTIONS = """\
- Every error is one line on stderr, `multiref: error: ...`, naming the file (and line) or the
  option; argparse's usage dump is replaced by a pointer to `multiref COMMAND --help`.
- Commands that run Beam (`lsdscc build`, `dailydialog build`) pass options they do not know
  to Beam, after checking them against every Beam `PipelineOptions` class (including the
  runner's, e.g. `--render_output` of `--runner apache_beam.runners.render.RenderRunner`); an
  option neither knows is an error. When a Beam step fails on bad input, Beam's own log of the
  failure is dropped and the one line says what was wrong.
- Inputs are checked by shape before work starts (DailyDialog release, `multireftest.json`,
  DailyDialog++, ratings, hypotheses and references files, the corpus of `lsdscc testset`), and
  so are output paths; `gs://` and network paths are checked with a 5 s connection timeout, so
  an offline machine fails in seconds.
- Progress of long steps (scoring, each analysis, Lucene indexing and search, Doc2Vec epochs)
  goes to stderr when stderr is a terminal. `--progress` shows it also when stderr is a file or
  a pipe (one line every 5 s); `--quiet` hides progress and notes on every command. Results go
  to stdout (or `--output`), so `2>log` keeps them apart.
- `--version` works on every command (and never starts a build).
"""


JOBS_INTRO = """\
## Options of the dataset builds

Each option of a dataset build is declared once, as a field of the frozen dataclass the
build records in its card (`multiref/util/options.py`); the command's flags, the job's Beam
options class (for `python -m pipelines.lsdscc.corpus` and `python -m pipelines.dailydialog.job`)
and these tables derive from it. "Sets" names the field; the card records the fields of
`CorpusConfig` (with `num_shards` resolved), of the test-set configs and of `BuildOptions`.
Any other `--flag` goes to Apache Beam.
"""


def _job_tables() -> list:
    """``[(title, classes)]`` of the dataset builds whose options are declared as fields."""
    from pipelines.dailydialog.options import BUILD_OPTIONS
    from pipelines.lsdscc.options import CORPUS_OPTIONS
    from pipelines.lsdscc.testset_options import TESTSET_CONFIGS

    return [("`multiref lsdscc build`: the corpus", CORPUS_OPTIONS),
            ("`multiref lsdscc build` and `multiref lsdscc testset`: the test set", TESTSET_CONFIGS),
            ("`multiref dailydialog build`", BUILD_OPTIONS)]


TOOLS_INTRO = """\
## Options of the LSDSCC tools

The crawl, annotation and ids commands declare their options the same way: each option is a
field of the command's frozen config (`lsdscc/crawl/config.py`, `lsdscc/annotation/config.py`,
`lsdscc/corpus/ids.py`), which a Python caller builds and passes to the same library call the
command makes. "(required)": the command cannot do without it.
"""


def _tool_tables() -> list:
    """``[(command, classes)]`` of the LSDSCC tools whose options are declared as fields."""
    from lsdscc.annotation.config import BrowseConfig, ExportConfig, ImportConfig, ServeConfig
    from lsdscc.corpus.ids import ExportIdsConfig, RehydrateConfig
    from lsdscc.crawl.config import CrawlOptions

    return [("lsdscc crawl", (CrawlOptions,)), ("lsdscc annotate export", (ExportConfig,)),
            ("lsdscc annotate import", (ImportConfig,)), ("lsdscc annotate serve", (ServeConfig,)),
            ("lsdscc annotate browse", (BrowseConfig,)), ("lsdscc export-ids", (ExportIdsConfig,)),
            ("lsdscc rehydrate", (RehydrateConfig,))]


def tools_section(parser: argparse.ArgumentParser) -> list:
    """The parts of the "Options of the LSDSCC tools" section (defaults as the command's parser
    requires them: :func:`multiref_cli.flags.command_defaults`)."""
    leaves = dict(flags.leaf_parsers(parser))
    parts = [TOOLS_INTRO]
    for command, classes in _tool_tables():
        parts += [f"### `multiref {command}`\n", options_table(classes, flags.command_defaults(leaves[command]))]
    return parts


def options_table(classes, defaults: dict | None = None) -> str:
    """The Markdown table of the options ``classes`` declare: flag, default (``defaults[flag]``
    when given), field, meaning; a flag hidden from ``--help`` is left out."""
    from multiref.util.options import declared

    lines = ["| flag | default | sets | meaning |", "|---|---|---|---|"]
    for flag, default, text, fields in declared(*classes):
        if text == argparse.SUPPRESS:
            continue
        text = text.replace("%(default)s", default).replace("%%", "%")  # as --help shows it
        default = (defaults or {}).get(flag.split("/")[0], default) or "-"
        sets = ", ".join(f"`{f}`" for f in fields)
        default, text = (t.replace("|", r"\|") for t in (default, text))
        lines.append(f"| `{flag}` | {default} | {sets} | {text} |")
    return "\n".join(lines) + "\n"


def jobs_section() -> list:
    """The parts of the "Options of the dataset builds" section."""
    parts = [JOBS_INTRO]
    for title, classes in _job_tables():
        parts += [f"### {title}\n", options_table(classes)]
    return parts


def command_help(parser: argparse.ArgumentParser, path: str = ""):
    """Yield ``(command, one-line help)`` for every leaf command under ``parser``, in parser order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                command = f"{path} {name}".strip()
                if flags.subcommands(sub):
                    yield from command_help(sub, command)
                else:
                    yield command, " ".join(helps.get(name, "").split())


def commands_table(parser: argparse.ArgumentParser) -> str:
    """The Markdown table of commands; ValueError naming a command that has no docs page."""
    lines = ["| command | what it does | explained in |", "|---|---|---|"]
    for command, text in command_help(parser):
        if command not in PAGES:
            raise ValueError(f"command {command!r} has no docs page in multiref_cli.reference.PAGES")
        page = PAGES[command]
        lines.append(f"| `multiref {command}` | {text} | [{page.split('#')[0]}]({page}) |")
    return "\n".join(lines) + "\n"


def exit_table() -> str:
    """The Markdown table of exit statuses."""
    lines = ["| status | meaning |", "|---|---|"]
    lines += [f"| {status} | {meaning} |" for status, meaning in EXIT_STATUSES]
    return "\n".join(lines) + "\n"


def render() -> str:
    """The whole text of ``docs/cli.md``."""
    parser = build_parser()
    parts = [HEADER, "## Commands\n", commands_table(parser), FLAGS_INTRO, flags.markdown_table(parser), RENAMED,
             *jobs_section(), *tools_section(parser),
             "## Exit statuses and conventions\n", "Exit statuses, for every command:\n", exit_table(), CONVENTIONS]
    return "\n".join(parts)


def main(argv=None) -> int:
    """``python -m multiref_cli.reference [PATH]``: write the page to PATH, or print it."""
    args = list(sys.argv[1:] if argv is None else argv)
    text = render()
    if not args:
        sys.stdout.write(text)
        return 0
    with open(args[0], "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
