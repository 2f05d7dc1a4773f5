"""The ``multiref`` command line: one console script with subcommands.

Each subcommand lives in its own module, named in ``SUBCOMMANDS`` (:mod:`multiref_cli.commands`,
which builds the parser). The helpers they share are in :mod:`multiref_cli.common`. A module exposes
``register(parser)``, which adds its arguments (and nested subcommands) and sets
``parser.set_defaults(func=handler)``; ``handler(args) -> int`` does the work. Those modules
import only the standard library at module level, so ``multiref --help`` stays fast: heavy
imports happen inside the handlers. The flag vocabulary (one flag and one default per
concept, old spellings as hidden aliases) is :mod:`multiref_cli.flags`.

Exit statuses (docs/cli.md#exit-statuses-and-conventions):

- 0: success;
- 1: bad input: a missing, unreadable or malformed file, a bad value, an unreachable path
  (library code raises :class:`multiref.util.errors.UserError`, ``ValueError`` or ``OSError``);
- 2: usage error: an unknown option (with the closest known one), a missing or malformed
  option value, a command group without its subcommand;
- 3: internal error (a bug: the traceback is printed, please report it);
- 130: interrupted (Ctrl-C).

Every error is one line on stderr, ``multiref: error: ...``, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from multiref_cli.commands import SUBCOMMANDS, build_parser  # noqa: F401  (re-exported)
from multiref_cli.common import (  # noqa: F401  (re-exported for callers outside the package)
    EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Parser, group, one_line,
    tokenizer_choices,
)


def _fail(message, status: int = EXIT_INPUT) -> int:
    print(f"multiref: error: {one_line(message)}", file=sys.stderr)
    return status


def _command_parser(parser: argparse.ArgumentParser, argv: list) -> tuple:
    """The (sub)parser that ``argv`` selects, and how many leading tokens name it."""
    current, depth = parser, 0
    while depth < len(argv):
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or argv[depth] not in subs[0].choices:
            break
        current, depth = subs[0].choices[argv[depth]], depth + 1
    return current, depth


def _takes_beam_options(parser: argparse.ArgumentParser) -> bool:
    return any(a.dest == "beam_args" for a in parser._actions)


def route_beam_options(parser: argparse.ArgumentParser, argv: list) -> list:
    """Move options the command does not know behind ``--`` when it passes them on to Beam.

    Commands that run a Beam pipeline take a ``beam_args`` positional; users may write
    ``multiref lsdscc build --output o --runner DataflowRunner --project p`` as well as
    ``... --output o -- --runner DataflowRunner --project p``. An unknown ``--name`` token
    (or ``--name=value``) and the value tokens after it go to Beam, in their order; they are
    checked against Beam's option classes before anything runs (:func:`check_beam_options`).
    Commands without ``beam_args``, and argv that already has ``--``, are returned unchanged.
    """
    command, depth = _command_parser(parser, argv)
    if depth == 0 or "--" in argv or not _takes_beam_options(command):
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


def _unknown_arguments(parser: argparse.ArgumentParser, argv: list, extras: list) -> None:
    """Usage error for arguments no parser took, naming the closest known option."""
    from multiref_cli.flags import suggest

    command, depth = _command_parser(parser, argv)
    prog = command.prog
    options = [t for t in extras if t.startswith("-") and t != "-"]
    if not options:
        command.error(f"unexpected argument {extras[0]!r} for '{prog}'")
    name = options[0].split("=", 1)[0]
    command.error(f"unknown option {name} for '{prog}'{suggest(name, command)}")


def check_beam_options(command: argparse.ArgumentParser, beam_args: list) -> list:
    """Validate options passed through to Beam; return them without a leading ``--``.

    The command parsed its own flags first (``parse_known_args``); the rest are checked by
    the parser Beam itself builds from every ``PipelineOptions`` class it registers (Beam's,
    the runner's, any subclass defined so far: :func:`multiref_cli.flags.beam_option_parser`).
    An unknown one is a usage error naming the closest option of the command or of Beam.
    """
    from multiref_cli.flags import beam_option_parser, suggest
    from multiref.util.errors import UsageError

    beam_args = list(beam_args or [])
    if beam_args and beam_args[0] == "--":
        beam_args = beam_args[1:]
    if not beam_args:
        return beam_args
    if not beam_args[0].startswith("-"):
        command.error(f"unexpected argument {beam_args[0]!r} for '{command.prog}' (Beam options start with --)")
    try:
        beam = beam_option_parser(command, beam_args)
        _known, unknown = beam.parse_known_args(beam_args)
    except UsageError as exc:  # a malformed value of a Beam option, or a --runner that cannot be imported
        command.error(str(exc))
    options = [t for t in unknown if t.startswith("-")]
    if options:
        name = options[0].split("=", 1)[0]
        command.error(f"unknown option {name} for '{command.prog}' (neither its own nor an Apache Beam "
                      f"pipeline option){suggest(name, command, beam)}")
    if unknown:
        command.error(f"unexpected argument {unknown[0]!r} among the Apache Beam options")
    return beam_args


def _exit_status(exc: BaseException):
    """``(status, message)`` for an exception that is the user's mistake, else None.

    Looks through the chain of causes, since Beam wraps a transform's exception.
    """
    from multiref.util.errors import Interrupted, UsageError, UserError

    seen = exc
    while seen is not None:
        if isinstance(seen, Interrupted):
            return EXIT_INTERRUPTED, str(seen)
        if isinstance(seen, UsageError):
            return EXIT_USAGE, str(seen)
        if isinstance(seen, UserError):
            return EXIT_INPUT, str(seen)
        if isinstance(seen, FileNotFoundError):
            return EXIT_INPUT, f"no such file or directory: {seen.filename or seen}"
        if isinstance(seen, FileExistsError):
            return EXIT_INPUT, f"already exists: {seen.filename or seen} (remove it or choose another path)"
        if isinstance(seen, OSError) and seen.filename:
            return EXIT_INPUT, f"{seen.strerror or type(seen).__name__}: {seen.filename}"
        if isinstance(seen, OSError) or _is_cloud_error(seen):  # a full disk, Beam's file systems, gs://
            return EXIT_INPUT, f"{type(seen).__name__}: {one_line(seen)}"
        if isinstance(seen, UnicodeDecodeError):
            return EXIT_INPUT, f"an input file is not valid UTF-8 ({seen.reason} at byte {seen.start})"
        if isinstance(seen, ValueError):
            return EXIT_INPUT, str(seen)
        seen = seen.__cause__ or seen.__context__
    return None


def _is_cloud_error(exc: BaseException) -> bool:
    """True for the Google Cloud client libraries' errors (refused credentials, a missing bucket,
    a failed upload): the environment's, not a bug of ours."""
    return type(exc).__module__.split(".")[0] == "google" and any(
        cls.__name__ in ("GoogleAPIError", "GoogleAuthError") for cls in type(exc).__mro__)


BEAM_COMMANDS = ("lsdscc", "dailydialog")  # the commands that run Apache Beam pipelines


class _NoLogs:
    def discard(self) -> None:
        pass


@contextlib.contextmanager
def _no_logs():
    yield _NoLogs()


def _run(func, args) -> int:
    """Run a handler; turn every user mistake into one line and its exit status."""
    import os

    if getattr(args, "command", None) in BEAM_COMMANDS:
        from multiref_cli.beam_logs import captured_beam_logs
    else:  # no Beam here: skip importing logging
        captured_beam_logs = _no_logs

    with captured_beam_logs() as logs:
        try:
            status = int(func(args) or 0)
        except BrokenPipeError:  # e.g. `multiref metrics list | head`
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_OK
        except KeyboardInterrupt:
            logs.discard()
            return _fail("interrupted (commands that write state, such as crawl, resume when rerun)",
                         EXIT_INTERRUPTED)
        except Exception as exc:  # noqa: BLE001 - the one place that turns exceptions into exit statuses
            mapped = _exit_status(exc)
            if mapped is None:
                if os.environ.get("MULTIREF_DEBUG"):
                    raise
                return _fail(f"internal error (a bug, please report it; MULTIREF_DEBUG=1 shows the traceback): "
                             f"{type(exc).__name__}: {one_line(exc)}", EXIT_INTERNAL)
            logs.discard()  # Beam's log of the same failure: the line below says it
            return _fail(mapped[1], mapped[0])
    return status


def main(argv: list[str] | None = None) -> int:
    import os

    # Beam imports grpc; with grpc's fork support on, a child that Beam's multi-process runner
    # starts with subprocess can abort before exec (a grpc bug: epoll_wait on a closed fd).
    # Nothing here forks without exec, so the support is not needed.
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    from multiref.util import progress
    from multiref_cli import flags

    _one_line_warnings()
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    args, extras = parser.parse_known_args(route_beam_options(parser, argv))
    if extras:
        _unknown_arguments(parser, argv, extras)
    func = getattr(args, "func", None)
    if func is None:  # a command group without its subcommand
        group_parser = getattr(args, "_group_parser", parser)
        names = ", ".join(flags.subcommands(group_parser))
        group_parser.error(f"'{group_parser.prog}' needs a command: {names}")
    command, _depth = _command_parser(parser, argv)
    if _takes_beam_options(command):
        args.beam_args = check_beam_options(command, args.beam_args)
    def checked(args):  # unreachable gs:// and network paths fail in seconds, before any work
        from multiref.util.files import check_remote_paths

        check_remote_paths(args)
        return func(args)

    with progress.configured(quiet=getattr(args, "quiet", False), force=getattr(args, "progress", False)):
        return _run(checked, args)


def _one_line_warnings() -> None:
    """A Python warning (numpy's RuntimeWarning, a library's DeprecationWarning) is one line,
    ``multiref: warning: Category: message``: never the source line of the code that warned."""
    import warnings

    def formatwarning(message, category, filename, lineno, line=None):
        return f"multiref: warning: {category.__name__}: {str(message).splitlines()[0] if str(message) else ''}\n"

    warnings.formatwarning = formatwarning


def run() -> None:  # console-script entry point
    status = main()
    if status == EXIT_INTERRUPTED:
        _exit_now_if_threads_linger(status)
    sys.exit(status)


def _exit_now_if_threads_linger(status: int) -> None:
    """After an interrupt, end the process even if a runner left non-daemon threads.

    Beam's embedded job service keeps such threads waiting for workers that never connect
    (an EXTERNAL worker pool whose workers died at start); the interpreter would join them
    forever. The interrupt line is printed and the staging folder handled by then.
    """
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


if __name__ == "__main__":
    run()
