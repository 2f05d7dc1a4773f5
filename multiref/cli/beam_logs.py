"""Hold Apache Beam's log records while a command runs.

Beam logs a failing transform's exception (with its traceback) before re-raising it. When
the failure is the user's (a malformed input file), the CLI prints one line instead and the
held records are dropped; otherwise (success, or a bug) they are written out as Beam would
have written them. Standard library only.
"""

from __future__ import annotations

import contextlib
import logging


class _Held(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def discard(self) -> None:
        self.records.clear()


@contextlib.contextmanager
def captured_beam_logs(name: str = "apache_beam"):
    """Context manager: hold the ``apache_beam`` logger's warnings and errors.

    Yields an object with ``discard()``; records not discarded are written to stderr on exit.
    """
    logger = logging.getLogger(name)
    held = _Held()
    propagate = logger.propagate
    logger.addHandler(held)
    logger.propagate = False
    try:
        yield held
    finally:
        logger.removeHandler(held)
        logger.propagate = propagate
        for record in held.records:
            logging.lastResort.handle(record)
