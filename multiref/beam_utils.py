"""Beam options shared by every pipeline: a local runner that never reaches the network.

Beam 2.77's ``DirectRunner`` first tries the Prism runner, which downloads a binary (and,
offline, fails before falling back). Our pipelines run locally on the portable
``FnApiRunner`` instead, the same runner DirectRunner falls back to, unless the user names
another runner (``--runner DataflowRunner`` and its options pass straight through).
``--runner DirectRunner`` is taken to mean "run locally" and gets the same treatment.

Parallelism on a laptop: ``--direct_num_workers N --direct_running_mode multi_processing``.
"""

from __future__ import annotations

import functools
import logging
from typing import Sequence

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

    from multiref.errors import UserError

    runner = options.view_as(StandardOptions).runner
    name = runner if isinstance(runner, str) else type(runner).__name__
    if "dataflow" in str(name or "").lower() and "://" not in folder:
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
