"""The ``multiref`` command line: one console script with subcommands.

Each subcommand lives in its own module, named in ``SUBCOMMANDS``. A module exposes
``register(parser)``, which adds its arguments (and nested subcommands) and sets
``parser.set_defaults(func=handler)``; ``handler(args) -> int`` does the work. Those modules
import only the standard library at module level, so ``multiref --help`` stays fast: heavy
imports happen inside the handlers.

Library code raises :class:`multiref.errors.UserError` (or ``ValueError``,
``FileNotFoundError``) for user mistakes; :func:`main` turns them into one line on stderr
and exit status 1. Argument errors exit with status 2 (argparse's convention).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from multiref import __version__

# (name, module, one-line help). Order is the order shown by --help.
SUBCOMMANDS = [
    ("score", "multiref.cli.score", "score system outputs against multi-reference test sets"),
    ("lsdscc", "multiref.cli.lsdscc", "build the LSDSCC Reddit corpus and multi-reference test set"),
    ("dailydialog", "multiref.cli.dailydialog", "build the multi-reference DailyDialog and DailyDialog++ datasets"),
    ("analyze", "multiref.cli.analyze", "evaluate the evaluators: correlation, discrimination, regression"),
    ("metrics", "multiref.cli.metrics_cmd", "list metrics and the paths of their Hugging Face evaluate modules"),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multiref",
        description="Build multi-reference dialogue-evaluation datasets and score systems against them.",
    )
    parser.add_argument("--version", action="version", version=f"multiref-dialog {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name, help_text in SUBCOMMANDS:
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        module.register(p)
    return parser


def _fail(message: str) -> int:
    first_line = str(message).strip().splitlines()[0] if str(message).strip() else "unknown error"
    print(f"multiref: error: {first_line}", file=sys.stderr)
    return 1


def _command_parser(parser: argparse.ArgumentParser, argv: list) -> tuple:
    """The (sub)parser that ``argv`` selects, and how many leading tokens name it."""
    current, depth = parser, 0
    while depth < len(argv):
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or argv[depth] not in subs[0].choices:
            break
        current, depth = subs[0].choices[argv[depth]], depth + 1
    return current, depth


def route_beam_options(parser: argparse.ArgumentParser, argv: list) -> list:
    """Move options the command does not know behind ``--`` when it passes them on to Beam.

    Commands that run a Beam pipeline take a ``beam_args`` positional; users may write
    ``multiref lsdscc build --output o --runner DataflowRunner --project p`` as well as
    ``... --output o -- --runner DataflowRunner --project p``. An unknown ``--name`` token
    (or ``--name=value``) and the value tokens after it go to Beam, in their order. Commands
    without ``beam_args``, and argv that already has ``--``, are returned unchanged.
    """
    command, depth = _command_parser(parser, argv)
    if depth == 0 or "--" in argv or not any(a.dest == "beam_args" for a in command._actions):
        return list(argv)
    known = set(command._option_string_actions)
    own, beam, in_beam = list(argv[:depth]), [], False
    for token in argv[depth:]:
        name = token.split("=", 1)[0]
        if token.startswith("--") and not any(k == name or k.startswith(name) for k in known):  # argparse abbreviations
            in_beam = True
            beam.append(token)
        elif in_beam and not token.startswith("-"):
            beam.append(token)  # the value of a Beam option
        else:
            in_beam = False
            own.append(token)
    return own + (["--"] + beam if beam else [])


def main(argv: list[str] | None = None) -> int:
    from multiref.errors import UserError

    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(route_beam_options(parser, argv))
    func = getattr(args, "func", None)
    if func is None:
        # A command group given without its subcommand: show that group's help.
        help_parser = getattr(args, "_group_parser", parser)
        help_parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args) or 0)
    except UserError as exc:
        return _fail(str(exc))
    except FileNotFoundError as exc:
        name = exc.filename or str(exc)
        return _fail(f"no such file or directory: {name}")
    except (PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        return _fail(f"{exc.strerror or type(exc).__name__}: {exc.filename}")
    except BrokenPipeError:  # e.g. `multiref metrics list | head`
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return _fail("interrupted (commands that write state, such as crawl, resume when rerun)")


def group(parser: argparse.ArgumentParser, title: str = "subcommands") -> argparse._SubParsersAction:
    """Make ``parser`` a command group whose subcommands are added to the returned action.

    Running the group without a subcommand prints its help and exits 2.
    """
    parser.set_defaults(func=None, _group_parser=parser)
    return parser.add_subparsers(dest=f"{parser.prog.replace(' ', '_')}_command", metavar="SUBCOMMAND", title=title)


def run() -> None:  # console-script entry point
    sys.exit(main())


if __name__ == "__main__":
    run()
