"""Beam options shared by every pipeline: a local runner that never reaches the network.

Beam 2.77's ``DirectRunner`` first tries the Prism runner, which downloads a binary (and,
offline, fails before falling back). Our pipelines run locally on the portable
``FnApiRunner`` instead, the same runner DirectRunner falls back to, unless the user names
another runner (``--runner DataflowRunner`` and its options pass straight through).
``--runner DirectRunner`` is taken to mean "run locally" and gets the same treatment.

Parallelism on a laptop: ``--direct_num_workers N --direct_running_mode multi_processing``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import Sequence

from multiref.util.location import is_remote

LOCAL_RUNNER = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"
_LOCAL_ALIASES = {"directrunner", "direct", "fnapirunner", "local"}

_LOG = logging.getLogger(__name__)


def _runner_of(args: Sequence[str]) -> tuple[str | None, int | None]:
    for i, arg in enumerate(args):
        if arg == "--runner" and i + 1 < len(args):
            return args[i + 1], i
        if arg.startswith("--runner="):
            return arg.split("=", 1)[1], i
    return None, None


def local_or_given(beam_args: Sequence[str]) -> list:
    """Return ``beam_args`` with the local runner filled in or substituted for DirectRunner."""
    args = list(beam_args)
    runner, index = _runner_of(args)
    if runner is None:
        return ["--runner", LOCAL_RUNNER] + args
    if runner.lower() in _LOCAL_ALIASES:
        if args[index] == "--runner":
            args[index + 1] = LOCAL_RUNNER
        else:
            args[index] = f"--runner={LOCAL_RUNNER}"
    return args


def is_local(beam_args: Sequence[str]) -> bool:
    runner, _ = _runner_of(local_or_given(beam_args))
    return runner == LOCAL_RUNNER


def pipeline_options(beam_args: Sequence[str] = (), **overrides):
    """Build ``PipelineOptions`` from pass-through Beam flags, defaulting to the local runner.

    Unknown flags are left to Beam, which reports them; ``overrides`` set option values
    directly (e.g. ``save_main_session=False``).
    """
    from apache_beam.options.pipeline_options import PipelineOptions

    return PipelineOptions(local_or_given(beam_args), **overrides)


def counters(result) -> dict:
    """All user counters of a finished pipeline as ``{namespace/name: value}``, sorted."""
    from apache_beam.metrics.metric import MetricsFilter

    out = {}
    for c in result.metrics().query(MetricsFilter())["counters"]:
        key = f"{c.key.metric.namespace}/{c.key.metric.name}"
        value = c.committed if c.committed is not None else c.attempted
        out[key] = out.get(key, 0) + (value or 0)
    return dict(sorted(out.items()))


def is_local_runner(options) -> bool:
    """True when ``options`` name the local runner (:data:`LOCAL_RUNNER`, any running mode)."""
    from apache_beam.options.pipeline_options import StandardOptions

    return options.view_as(StandardOptions).runner == LOCAL_RUNNER


def shuffles_in_memory(options) -> bool:
    """True for runners whose ``GroupByKey`` holds its whole input in this machine's memory: the
    local runner (:data:`LOCAL_RUNNER`, any running mode) and Beam's portable runner with an
    embedded job service (``--job_endpoint embed``: the same runner, inside this process).
    Dataflow, Flink and Spark shuffle through their own service or disks."""
    from apache_beam.options.pipeline_options import PortableOptions, StandardOptions

    runner = options.view_as(StandardOptions).runner
    name = runner if isinstance(runner, str) else type(runner).__name__
    portable = str(name).rsplit(".", 1)[-1] == "PortableRunner"
    return is_local_runner(options) or (portable and options.view_as(PortableOptions).job_endpoint == "embed")


def spill_parent(output: str, options) -> str:
    """Where a job's spill folder goes: beside its ``output`` (a folder the job owns), except
    when the output is remote (``gs://...``) and the runner is the local one, whose processes
    all run on this machine: then in the local temporary folder (``TMPDIR``), since spilling
    to a bucket would only add object writes and reads."""
    import tempfile

    return tempfile.gettempdir() if is_remote(output) and is_local_runner(options) else output


def use_local_workers(options, workers: int) -> bool:
    """Run the local runner (:data:`LOCAL_RUNNER`) in ``workers`` processes: sets Beam's
    ``direct_num_workers`` and ``direct_running_mode=multi_processing`` on ``options`` (in
    place) when ``workers > 1``, unless the user set either flag. Other runners are left as
    they are. Returns whether the options were changed."""
    from apache_beam.options.pipeline_options import DirectOptions

    direct = options.view_as(DirectOptions)
    if workers <= 1 or not is_local_runner(options) or direct.direct_num_workers != 1 \
            or direct.direct_running_mode != "in_memory":
        return False
    direct.direct_num_workers, direct.direct_running_mode = workers, "multi_processing"
    return True


def runner_does_not_execute(options) -> bool:
    """True for runners that only build (``--dry_run``) or draw (RenderRunner) the graph:
    nothing is written, so there is nothing to finish after ``run()``."""
    from apache_beam.options.pipeline_options import StandardOptions, TestOptions

    runner = options.view_as(StandardOptions).runner
    name = runner if isinstance(runner, str) else type(runner).__name__
    return bool(options.view_as(TestOptions).dry_run) or "render" in str(name).lower()


def check_output_for_runner(options, folder: str) -> None:
    """Every runner that runs on this machine (local, multi-process, portable with LOOPBACK)
    writes local folders; Dataflow's workers need ``gs://``. Raises UserError otherwise."""
    from apache_beam.options.pipeline_options import StandardOptions

    from multiref.util.errors import UserError

    runner = options.view_as(StandardOptions).runner
    name = runner if isinstance(runner, str) else type(runner).__name__
    if "dataflow" in str(name or "").lower() and not is_remote(folder):
        raise UserError(f"Dataflow workers cannot write to a local folder: give --output gs://BUCKET/..., got {folder}")


@functools.cache
def pipeline_options_class(name: str, add_arguments, doc: str) -> type:
    """A Beam ``PipelineOptions`` subclass called ``name`` whose flags are those that
    ``add_arguments(parser)`` adds (a job's flags, declared once as dataclass fields).

    Made once per job, on first call, when the job runs (it needs Beam; ``--help`` does
    not): Beam registers the subclass, and ``options.view_as(cls)`` reads its values.
    """
    from apache_beam.options.pipeline_options import PipelineOptions

    class JobOptions(PipelineOptions):
        @classmethod
        def _add_argparse_args(cls, parser):
            add_arguments(parser)

    JobOptions.__name__ = JobOptions.__qualname__ = name
    JobOptions.__doc__ = doc
    return JobOptions


# -- a runner that cannot start --------------------------------------------------------------

#: Beam functions that only start a runner or its workers, as (module, qualified name): an
#: exception raised while one of them runs means the job never ran (a job-server jar or the
#: Prism binary that cannot be fetched, no --job_endpoint, a job service that does not answer,
#: an environment type the runner lacks, a worker process or container that does not start).
#: Recognised by where it was raised, whatever its type or message.
RUNNER_START_UP = frozenset({
    ("apache_beam.runners.portability.portable_runner", "PortableRunner.run_portable_pipeline"),
    ("apache_beam.runners.portability.fn_api_runner.worker_handlers", "WorkerHandlerManager.get_worker_handlers"),
})
_EMBEDDED_JOB_LOG = "apache_beam.runners.portability.local_job_service"  # logs its job's exception


def start_up_frame(exc: BaseException):
    """``(module, qualified name)`` of the innermost :data:`RUNNER_START_UP` function that
    ``exc`` was raised through, or None (the runner had started: a failure of the job itself)."""
    found, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        key = (tb.tb_frame.f_globals.get("__name__"), getattr(code, "co_qualname", code.co_name))
        if key in RUNNER_START_UP:
            found = key
        tb = tb.tb_next
    return found


def runner_start_reason(exc: BaseException) -> str:
    """Beam's own reason, one line, for an exception raised while a runner started."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if isinstance(exc, KeyError) and start_up_frame(exc)[1].startswith("WorkerHandlerManager"):
        return f"this runner has no worker environment {text}"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _JobException(logging.Handler):
    """Keeps the exception the embedded job service logs when its job fails (it reaches the
    driver only as text)."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.exception = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            self.exception = record.exc_info[1]


# -- worker processes die with the driver ---------------------------------------------------

#: Set by :func:`run_pipeline` to the driver's pid while a job runs: every process the job
#: starts (Beam's multi-process workers, ``/bin/sh -c python -m ...sdk_worker_main``) inherits
#: it, which is how :mod:`pipelines.beam.guard` finds them once the driver is gone.
DRIVER_ENV = "MULTIREF_BEAM_DRIVER"


@contextlib.contextmanager
def _guarded():
    """Start :mod:`pipelines.beam.guard` for this driver (Linux: it reads /proc) and tell it,
    on a normal exit, that the job ended; if the driver is killed, the guard's pipe closes
    without that word and it kills the job's leftover processes."""
    import subprocess
    import sys

    if not sys.platform.startswith("linux"):
        yield
        return
    guard = subprocess.Popen([sys.executable, "-m", "pipelines.beam.guard"], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        yield
    finally:
        try:
            guard.stdin.write(b"done\n")
            guard.stdin.close()
        except OSError:
            pass
        guard.wait()


@contextlib.contextmanager
def _driver_pid_in_environment():
    import os

    old = os.environ.get(DRIVER_ENV)
    os.environ[DRIVER_ENV] = str(os.getpid())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(DRIVER_ENV, None)
        else:
            os.environ[DRIVER_ENV] = old


@contextlib.contextmanager
def _workers_end_on_interrupt():
    """When SIGINT/SIGTERM reaches this driver alone (``kill PID``, ``timeout``, a scheduler;
    Ctrl-C reaches the whole process group), end the job's worker processes too: the local
    runner's driver waits on its multi-process workers and would otherwise wait for ever. Their
    threads' tracebacks of that end are dropped: one line says what happened
    (:mod:`multiref.output.publish`)."""
    import os
    import threading

    from multiref.output.publish_guard import on_interrupt
    from pipelines.beam.guard import end_job

    def end_workers() -> None:
        threading.excepthook = lambda args: None
        end_job(str(os.getpid()))

    with on_interrupt(end_workers):
        yield


def run_pipeline(p):
    """Run pipeline ``p`` and wait until it finishes; return its result.

    A runner that cannot start raises :class:`multiref.util.errors.RunnerError` (a UserError:
    exit 1) carrying Beam's own reason, chained to Beam's exception. Recognised by where the
    exception was raised (:data:`RUNNER_START_UP`), in this process or, for
    ``--job_endpoint embed``, in the embedded job service's thread. Any other exception (a
    failure of the job, a bug of ours) is re-raised unchanged.
    """
    runner = f"Apache Beam's {type(p.runner).__name__}"
    job_log = logging.getLogger(_EMBEDDED_JOB_LOG)
    job = _JobException()
    job_log.addHandler(job)
    try:
        with _driver_pid_in_environment(), _guarded(), _workers_end_on_interrupt():
            return _run_and_wait(p, runner, job)
    finally:
        job_log.removeHandler(job)


def _run_and_wait(p, runner: str, job: _JobException):
    from multiref.util.errors import RunnerError

    try:
        result = p.run()
    except Exception as exc:
        if start_up_frame(exc) is None:
            raise
        raise RunnerError(f"{runner} could not start: {runner_start_reason(exc)}") from exc
    try:
        result.wait_until_finish()
    except Exception as exc:
        failed = job.exception
        if failed is None or start_up_frame(failed) is None:
            raise
        raise RunnerError(f"{runner} could not start: {runner_start_reason(failed)}") from exc
    return result
