"""What the subcommand modules share, below the package's ``__init__``: the exit statuses,
the parser class (one-line errors, exit 2), :func:`group` for command groups and
:func:`tokenizer_choices` for ``--tokenizer``. Standard library only at module level.

:mod:`multiref_cli` re-exports these names for outside callers; modules inside the package
import them from here, never back from ``__init__``.
"""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, sized without importing shutil (start-up time of every command)."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        if width is None:
            import os

            try:
                width = int(os.environ["COLUMNS"])
            except (KeyError, ValueError):
                try:
                    width = os.get_terminal_size(sys.__stdout__.fileno()).columns
                except (AttributeError, ValueError, OSError):
                    width = 80
            width -= 2
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line naming the command, and exit status 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        command = self.prog if self.prog.startswith("multiref") else "multiref"
        sys.stderr.write(f"multiref: error: {one_line(message)} (see '{command} --help')\n")
        sys.exit(EXIT_USAGE)

    def _get_option_tuples(self, option_string):  # abbreviations: a hidden old spelling is no rival
        from multiref_cli.flags import dedupe_option_tuples

        return dedupe_option_tuples(super()._get_option_tuples(option_string))


def one_line(message) -> str:
    """The first non-blank line of ``message`` (a wrapped Beam or library error)."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    if not lines:
        return "unknown error"
    text = lines[0]
    for line in lines[1:]:  # "Pipeline has validation errors:" says nothing without the next line
        if not text.endswith(":"):
            break
        text = f"{text} {line}"
    return text


def tokenizer_choices():
    """The names ``--tokenizer`` accepts: the built-in tokenizers and the plug-ins. The CLI sits
    above the dataset packages, so it registers the ``lsdscc`` one itself (an installed package
    also declares it as a ``multiref.metrics.tokenizers`` entry point). Give the flag a
    ``metavar`` and ``%(choices)s`` in its help, so argparse lists them only when asked."""
    from lsdscc.corpus.tokenizer import register
    from multiref.metrics.tokenizers import TOKENIZER_CHOICES

    register()
    return TOKENIZER_CHOICES


def group(parser: argparse.ArgumentParser, title: str = "subcommands") -> argparse._SubParsersAction:
    """Make ``parser`` a command group whose subcommands are added to the returned action.

    Running the group without a subcommand is a one-line usage error naming them (exit 2).
    """
    parser.set_defaults(func=None, _group_parser=parser)
    return parser.add_subparsers(dest=f"{parser.prog.replace(' ', '_')}_command", metavar="SUBCOMMAND", title=title)
