"""``python -m pipelines.beam.guard``: end a Beam job's processes when its driver is killed.

:func:`pipelines.beam.runner.run_pipeline` starts this guard with a pipe on its stdin and the
driver's pid in ``MULTIREF_BEAM_DRIVER``, and writes ``done`` to the pipe when the job ends.
If the pipe closes without it (the driver was killed, even with ``kill -9``), the guard kills
every process whose environment carries that pid: Beam's multi-process SDK workers and the
``/bin/sh -c`` that starts each of them, which would otherwise keep running (a worker that has
not yet connected waits for its driver for minutes). Standard library only; Linux (/proc).
"""

from __future__ import annotations

import os
import signal
import sys

DRIVER_ENV = "MULTIREF_BEAM_DRIVER"


def marked(driver: str) -> list[int]:
    """Pids of the processes (other than this one) whose environment holds ``DRIVER_ENV=driver``."""
    needle = f"{DRIVER_ENV}={driver}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                if needle in fh.read().split(b"\0"):
                    found.append(int(name))
        except OSError:  # gone, or another user's
            continue
    return found


def end_job(driver: str) -> None:
    """SIGKILL every process :func:`marked` with ``driver`` (gone ones are skipped)."""
    for pid in marked(driver):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main() -> int:
    driver = os.environ.get(DRIVER_ENV, "")
    if not driver.isdigit():
        return 2
    if sys.stdin.buffer.read().strip() == b"done":
        return 0
    end_job(driver)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
