"""A child process measured as a tree and step by step, for the benchmarks and their tests.

:func:`run_sampled` runs a command and, until it exits, samples every ``interval`` seconds
the resident memory and CPU time of the child *and all its descendants* (read from
``/proc``: a JVM started inside the child, Beam or Doc2Vec worker processes are counted),
and timestamps each line the child writes to standard error. Lines matching the ``marks``
(``[(step name, regular expression)]``) end a step: each step gets its wall seconds, its CPU
seconds (sampled) and its peak tree RSS (sampled). The whole run's CPU seconds come from
``os.wait4`` (exact, like :func:`multiref.util.measure.run_child`); the largest single
process's peak RSS is the largest ``VmHWM`` sampled in the tree (``wait4``'s ``ru_maxrss``
would count the parent's resident set at the moment it spawned the child: Linux carries the
old memory's high-water mark across ``exec``). Linux only (``/proc``); elsewhere the samples
are empty and only the ``wait4`` figures are given.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
import time

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int) -> list | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def descendants(root: int) -> list:
    """``root`` and every live process below it (from the parent ids in ``/proc``)."""
    children: dict = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return [root]
    for name in names:
        if name.isdigit():
            fields = _stat_fields(int(name))
            if fields is not None:
                children.setdefault(int(fields[1]), []).append(int(name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def tree_usage(root: int, pids: list | None = None) -> tuple:
    """``(RSS in MB, CPU seconds)`` of ``root`` and its live descendants (``pids``, when the
    caller has just listed them): the sum of their resident sets (``statm``) and of their user +
    system times, their reaped children's included."""
    rss_pages, ticks = 0, 0
    for pid in pids or descendants(root):
        fields = _stat_fields(pid)
        try:
            with open(f"/proc/{pid}/statm", "rb") as fh:
                rss_pages += int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if fields is not None:
            ticks += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return rss_pages * PAGE / 2**20, ticks / TICKS


def largest_peak(root: int, pids: list | None = None) -> float:
    """The largest peak resident set (``VmHWM``, MB) among ``root`` and its live descendants
    (``pids``, when the caller has just listed them)."""
    peak = 0
    for pid in pids or descendants(root):
        try:
            with open(f"/proc/{pid}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"VmHWM:"):
                        peak = max(peak, int(line.split()[1]))  # kB
                        break
        except (OSError, IndexError, ValueError):
            continue
    return peak / 1024


def run_sampled(argv: list, cwd: str | None = None, marks=(), interval: float = 0.5, env=None) -> dict:
    """Runs ``argv`` to its end, sampled (module docstring). Returns ``returncode``, ``stdout``,
    ``stderr``, ``process_seconds``, ``cpu_seconds`` (``wait4``), ``peak_rss_mb`` (sampled ``VmHWM``),
    ``peak_tree_rss_mb`` (sampled) and ``steps``: ``[{name, seconds, cpu_seconds, peak_tree_rss_mb}]``
    for the marks seen, in order, then ``rest`` (from the last mark seen to the exit)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, cwd=cwd, env=env)
        lines: list = []
        reader = threading.Thread(target=_read_lines, args=(proc.stderr, t0, lines), daemon=True)
        reader.start()
        samples, largest = [(0.0, 0.0, 0.0)], 0.0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            tree = descendants(proc.pid)  # one walk of /proc a sample, for both figures
            rss, cpu = tree_usage(proc.pid, tree)
            largest = max(largest, largest_peak(proc.pid, tree))
            samples.append((time.perf_counter() - t0, rss, cpu))
            time.sleep(interval)
        wall = time.perf_counter() - t0
        reader.join()
        proc.stderr.close()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        out.seek(0)
        stdout = out.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    samples.append((wall, 0.0, cpu))
    return {
        "returncode": proc.returncode, "stdout": stdout, "stderr": "".join(text for _, text in lines),
        "process_seconds": wall, "cpu_seconds": cpu,
        "peak_rss_mb": largest or usage.ru_maxrss / 1024,  # wait4 (KiB on Linux) where /proc is not
        "peak_tree_rss_mb": max(s[1] for s in samples), "steps": steps_of(lines, samples, marks, wall),
    }


def _read_lines(stream, t0: float, lines: list) -> None:
    for raw in stream:
        lines.append((time.perf_counter() - t0, raw.decode("utf-8", "replace")))


def steps_of(lines: list, samples: list, marks, end: float) -> list:
    """Steps from timestamped ``lines`` ``[(seconds, text)]`` and ``samples``
    ``[(seconds, tree RSS MB, tree CPU s)]``: a step ends at the first line matching its mark
    (marks in order; one not seen is skipped), the last one (``rest``) at ``end``."""
    bounds, start = [], 0
    for name, pattern in marks:
        regex = re.compile(pattern)
        for i in range(start, len(lines)):
            if regex.search(lines[i][1]):
                bounds.append((name, lines[i][0]))
                start = i + 1
                break
    bounds.append(("rest", end))
    steps, begin = [], 0.0
    for name, stop in bounds:
        inside = [s for s in samples if begin <= s[0] <= stop]
        steps.append({"name": name, "seconds": stop - begin,
                      "cpu_seconds": _cpu_at(samples, stop) - _cpu_at(samples, begin),
                      "peak_tree_rss_mb": max((s[1] for s in inside), default=0.0)})
        begin = stop
    return steps


def _cpu_at(samples: list, when: float) -> float:
    """The tree's CPU seconds at the last sample at or before ``when``."""
    return max((s[2] for s in samples if s[0] <= when), default=0.0)
