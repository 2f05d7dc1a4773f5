"""Exceptions that the CLI turns into a one-line message and a non-zero exit."""


class UserError(ValueError):
    """A mistake in the user's input or options (a bad file, flag or value).

    The message must say what is wrong and where (file and line when there is one).
    The CLI prints it as ``multiref: error: <message>`` and exits with status 1.
    """


def where(path, line=None) -> str:
    """Format a location for error messages: ``path`` or ``path:line``."""
    return f"{path}:{line}" if line is not None else str(path)
