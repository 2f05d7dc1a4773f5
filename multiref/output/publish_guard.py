"""What the local and the remote publishing share: their errors, their warnings on stderr,
and the guard that turns SIGINT/SIGTERM into a clean stop (:mod:`multiref.output.publish`,
:mod:`multiref.output.publish_remote`)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from typing import Iterator

from multiref.util import errors
from multiref.util.errors import UserError


class FolderLocked(UserError):
    """Another build holds the folder's lock."""


class Interrupted(errors.Interrupted):
    """SIGINT or SIGTERM stopped a build; the target folder is unchanged."""


def warn(message: str) -> None:
    print(f"[publish] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def signals_blocked() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


#: what runs first when a SignalGuard catches a signal (see :func:`on_interrupt`)
_INTERRUPT_HOOKS: list = []


@contextlib.contextmanager
def on_interrupt(hook) -> Iterator[None]:
    """While the block runs, call ``hook()`` when SIGINT/SIGTERM reaches a :class:`SignalGuard`,
    before its KeyboardInterrupt: e.g. ending the processes a job waits on, which a signal sent
    to this process alone (``kill``, ``timeout``, a scheduler) does not reach."""
    _INTERRUPT_HOOKS.append(hook)
    try:
        yield
    finally:
        _INTERRUPT_HOOKS.remove(hook)


class SignalGuard:
    """SIGINT/SIGTERM -> KeyboardInterrupt in the main thread, remembering which one came
    (the :func:`on_interrupt` hooks run first)."""

    def __init__(self):
        self.received = None
        self._old = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is signal.SIG_IGN:
                    continue  # e.g. nohup or a background job: keep the user's choice
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum, frame):
        import logging

        self.received = signal.Signals(signum).name
        logging.getLogger("apache_beam").setLevel(logging.CRITICAL)  # its tracebacks of the interrupt are noise
        for hook in list(_INTERRUPT_HOOKS):
            try:
                hook()
            except Exception:  # noqa: BLE001 - best effort: the interrupt goes on
                pass
        raise KeyboardInterrupt

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        return False
