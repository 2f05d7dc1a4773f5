"""Hold Apache Beam's log records while a command runs.

Beam logs a failing transform's exception (with its traceback) before re-raising it. When
the failure is the user's (a malformed input file), the CLI prints one line instead and the
held records are dropped; otherwise (success, or a bug) they are written out as Beam would
have written them. Standard library only.
"""

from __future__ import annotations

import contextlib
import logging


#: warnings every local worker process of Beam's multi-processing mode relays on every run
#: (it is started without a staging folder, which this job never uses): not the user's concern
BENIGN = ("No semi_persistent_directory found",)


class _Held(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records: list = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is kept, as it was
            message = str(record.msg)
        if not any(text in message for text in BENIGN):
            self.records.append(record)

    def discard(self) -> None:
        self.records.clear()


class _HeldFromBeam(logging.Handler):
    """On the root logger: holds in ``held`` the records Beam's modules log through the root
    logger (the portable runner relays its job's messages, tracebacks included, with
    ``logging.log``); any other record is written at once, as without this handler."""

    def __init__(self, held: _Held, package: str):
        super().__init__(level=logging.WARNING)
        self.held, self.package = held, package

    def emit(self, record: logging.LogRecord) -> None:
        if record.pathname.startswith(self.package):
            self.held.emit(record)
        elif logging.lastResort is not None and record.levelno >= logging.lastResort.level:
            logging.lastResort.handle(record)


def _package_folder(name: str) -> str:
    import importlib.util
    import os

    spec = importlib.util.find_spec(name)
    folders = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(folders[0], "") if folders else "/nonexistent-package/"


@contextlib.contextmanager
def captured_beam_logs(name: str = "apache_beam"):
    """Context manager: hold the ``apache_beam`` logger's warnings and errors, and those that
    Beam's modules log through the root logger when it has no handler of its own.

    Yields an object with ``discard()``; records not discarded are written to stderr on exit.
    """
    logger, root = logging.getLogger(name), logging.getLogger()
    held = _Held()
    relayed = _HeldFromBeam(held, _package_folder(name)) if not root.handlers else None
    propagate = logger.propagate
    logger.addHandler(held)
    logger.propagate = False
    if relayed is not None:
        root.addHandler(relayed)
    try:
        yield held
    finally:
        logger.removeHandler(held)
        logger.propagate = propagate
        if relayed is not None:
            root.removeHandler(relayed)
        for record in held.records:
            logging.lastResort.handle(record)
