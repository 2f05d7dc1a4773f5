"""Exceptions that the CLI turns into a one-line message and a non-zero exit.

Exit statuses (see :mod:`multiref_cli`): 1 for a :class:`UserError` (bad input), 2 for a
:class:`UsageError` (a bad option), 130 for :class:`Interrupted`, 3 for anything else (a bug).
"""


class UserError(ValueError):
    """A mistake in the user's input or options (a bad file, flag or value).

    The message must say what is wrong and where (file and line when there is one).
    The CLI prints it as ``multiref: error: <message>`` and exits with status 1.
    """


class UsageError(UserError):
    """A bad command line (an unknown option, a malformed option value): exit status 2."""


class Interrupted(UserError):
    """SIGINT or SIGTERM stopped the command cleanly (its message says what state it left):
    exit status 130, as for a plain Ctrl-C."""


def where(path, line=None) -> str:
    """Format a location for error messages: ``path`` or ``path:line``."""
    return f"{path}:{line}" if line is not None else str(path)


class RunnerError(UserError):
    """Apache Beam's runner could not start (its message is Beam's own reason): exit status 1."""
