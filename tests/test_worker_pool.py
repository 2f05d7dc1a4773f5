"""The corpus job on a Beam worker pool: the cluster deployment, run on this machine (docs/cluster.md).

Flink and Spark on Kubernetes run Beam's Python SDK workers from a worker pool (the SDK
container's ``--worker_pool`` mode: ``python -m apache_beam.runners.worker.worker_pool_main``);
the runner asks it for workers over gRPC (``--environment_type EXTERNAL``). These tests start a
real pool, run the real job against it, and compare every output file with the default runner:

- the portable runner (``--runner PortableRunner --job_endpoint embed --environment_type EXTERNAL``),
  through the command line: same bytes, and the workers import only what
  deploy/worker/requirements.txt installs (read from ``PYTHONPROFILEIMPORTTIME`` output);
- two workers of one pool splitting one job (Beam's FnApiRunner asking the EXTERNAL pool for
  ``--direct_num_workers 2`` workers; the embedded job service of the portable runner asks for one):
  same bytes, the pool started two worker processes, and each cleaned comments (each imported
  nltk, which the treebank text convention imports on the first comment it tokenizes).

The pool's workers run a bare ``python`` from PATH (with the wrong one the driver waits silently),
so the pool starts with its interpreter's folder first on PATH, the driver runs under a timeout,
and the pool's process group (the pool and its workers) is ended on teardown.
``MULTIREF_WORKER_PYTHON`` runs the pool from another interpreter, such as a venv holding only
deploy/worker/requirements.txt and this package (deploy/worker/check_slim_workers.sh).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests import worker_imports as wi
from tests.helpers import REPO_DIR, file_digests

WORKER_PYTHON = os.environ.get("MULTIREF_WORKER_PYTHON") or sys.executable
DRIVER_TIMEOUT = 150  # seconds; a build of the sample takes about 20 s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _pool_env() -> dict:
    """The pool's environment: its interpreter's folder first on PATH (its workers run
    ``python``), import-time logging on, and this checkout importable, unless the pool runs
    from another interpreter (whose installed package is then the one tested)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1",
           "PATH": os.path.dirname(WORKER_PYTHON) + os.pathsep + os.environ.get("PATH", "")}
    if WORKER_PYTHON == sys.executable:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_DIR), os.environ.get("PYTHONPATH")]))
    else:
        env.pop("PYTHONPATH", None)
    return env


@contextlib.contextmanager
def worker_pool(folder):
    """A running worker pool; yields ``(address, pool process, log path)``. Ends the pool's
    process group (the pool and the workers it started) on exit."""
    port, log = free_port(), folder / "pool.log"
    with open(log, "wb") as out:
        pool = subprocess.Popen([WORKER_PYTHON, "-m", "apache_beam.runners.worker.worker_pool_main",
                                 "--service_port", str(port)], cwd=folder, env=_pool_env(), stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            assert pool.poll() is None, f"the worker pool exited: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, "the worker pool did not listen within 60 s"
            with contextlib.suppress(OSError), socket.create_connection(("localhost", port), timeout=1):
                break
            time.sleep(0.2)
        yield f"localhost:{port}", pool, log
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pool.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                pool.wait(10)
                break


def _drive(argv, log, cwd):
    """Run a driver command; fail with the pool's log when a worker process dies at start-up
    (a traceback in the pool's log: the driver itself would wait for it without a word, and
    does not even end on SIGTERM) or after :data:`DRIVER_TIMEOUT` seconds."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_DIR), os.environ.get("PYTHONPATH")]))}
    with open(log.with_suffix(".driver"), "w+") as out:
        driver = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline, why = time.monotonic() + DRIVER_TIMEOUT, None
        while driver.poll() is None and why is None:
            if "Traceback (most recent call last)" in log.read_text(errors="replace"):
                why = "a worker process died (the wrong `python` on the pool's PATH?)"
            elif time.monotonic() > deadline:
                why = f"the driver did not finish in {DRIVER_TIMEOUT} s"
            time.sleep(0.5)
        if why is not None:
            driver.kill()
            driver.wait(10)
            pytest.fail(f"{why}; pool log:\n{log.read_text(errors='replace')[-3000:]}")
        out.seek(0)
        assert driver.returncode == 0, out.read()[-3000:]


@pytest.fixture(scope="module")
def default_build(tmp_path_factory):
    """``digests(*flags)``: the files of the bundled sample built with ``flags`` on the default
    runner, as ``multiref lsdscc build --skip-testset`` builds them (each built once)."""
    from pipelines.lsdscc.corpus import run

    built: dict = {}

    def digests(*flags):
        if flags not in built:
            folder = tmp_path_factory.mktemp("default") / "out"
            run(["--output", str(folder), *flags], quiet=True, check=True)
            built[flags] = file_digests(folder)
        return built[flags]

    return digests


@pytest.fixture(scope="module")
def portable_build(tmp_path_factory):
    """The same build through the command line on the portable runner, its workers from a pool:
    ``(output folder, the pool's log)``."""
    folder = tmp_path_factory.mktemp("portable")
    with worker_pool(folder) as (address, _, log):
        _drive([sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--quiet", "--skip-testset", "--output",
                str(folder / "out"), "--runner", "PortableRunner", "--job_endpoint", "embed", "--environment_type",
                "EXTERNAL", "--environment_config", address], log, folder)
        text = log.read_text(errors="replace")
    return folder / "out", text


def test_portable_runner_on_a_worker_pool_gives_the_same_bytes(default_build, portable_build):
    folder, log = portable_build
    assert file_digests(folder) == default_build()
    started = [line for line in log.splitlines() if "Starting worker with command" in line]
    assert len(started) == 1 and "['python', '-c'" in started[0], started  # a worker process, from PATH


def test_the_workers_import_only_the_worker_requirements(portable_build):
    _, log = portable_build
    imported = wi.distributions_of(wi.imported_by_log(log))
    # Beam itself imports its optional extras (dill, pandas, absl-py) when they are installed;
    # setuptools is imported by its .pth hook in every venv
    allowed = wi.closure(wi.requirement_lines()) | wi.beam_extras() | {"setuptools"}
    assert {d: m for d, m in imported.items() if d not in allowed} == {}
    assert not [h for h in wi.HEAVY if h in imported]
    # the modules the workers loaded are those tests/test_worker_requirements.py scans
    loaded, scanned = wi.project_modules_in_log(log), set(wi.project_modules_loaded())
    assert loaded and loaded <= scanned, loaded - scanned


# -- two workers of one pool --------------------------------------------------------------

TWO_WORKERS = """
import sys
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.transforms.environments import ExternalEnvironment
from pipelines.lsdscc.corpus import build
from pipelines.lsdscc.options import corpus_from_args, corpus_pipeline_options

address, folder, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
runner = FnApiRunner(default_environment=ExternalEnvironment(address))
options = PipelineOptions(["--output", folder, "--direct_num_workers", "2", *flags], runner=runner)
build(*corpus_from_args(options.view_as(corpus_pipeline_options())), options=options, quiet=True)
"""


def test_two_workers_of_one_pool_share_the_job(default_build, tmp_path):
    # With the treebank convention, cleaning imports nltk when it tokenizes its first comment
    # (lsdscc.corpus.cleaning.nltk_tokenizer), so a worker process that imports nltk has cleaned
    # comments: data, not only the stage's code.
    flags = ("--text-convention", "treebank")
    with worker_pool(tmp_path) as (address, _, log):
        _drive([sys.executable, "-c", TWO_WORKERS, address, str(tmp_path / "out"), *flags], log, tmp_path)
        text = log.read_text(errors="replace")
    assert file_digests(tmp_path / "out") == default_build(*flags)
    started = re.findall(r'Starting worker with command .*worker_id="(worker_\d+)"', text)
    assert sorted(started) == ["worker_0", "worker_1"], started
    # one first import per process in the pool's log (the pool itself imports neither)
    assert len(re.findall(r"\| +pipelines\.lsdscc\.transforms$", text, flags=re.M)) == 2  # both got the graph
    assert len(re.findall(r"\| +nltk$", text, flags=re.M)) == 2  # both cleaned comments


# -- a pool whose workers cannot start -----------------------------------------------------


def test_an_interrupted_build_ends_even_when_the_pools_workers_never_started(tmp_path, monkeypatch):
    # the pool's `python` is the base interpreter, without Beam, as with the wrong PATH: Beam's
    # embedded job service then waits for a worker with non-daemon threads, which kept the
    # interrupted command alive until the interpreter had joined them
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "python").symlink_to(os.path.realpath(sys.base_prefix + "/bin/python3"))  # no Beam there
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_DIR), os.environ.get("PYTHONPATH")]))}
    with worker_pool(tmp_path) as (address, _, log):
        driver = subprocess.Popen(
            [sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--quiet", "--skip-testset", "--output",
             str(tmp_path / "out"), "--runner", "PortableRunner", "--job_endpoint", "embed",
             "--environment_type", "EXTERNAL", "--environment_config", address],
            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + DRIVER_TIMEOUT
        while "Starting worker with command" not in log.read_text(errors="replace"):
            assert driver.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.5)
        time.sleep(2)
        assert driver.poll() is None  # still waiting for its worker
        driver.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        try:
            _, err = driver.communicate(timeout=60)
        finally:
            driver.kill()
        ended = time.monotonic() - sent
    # measured: 0.1 s; before the fix 6.5-6.9 s here (Beam's job service joining its threads),
    # and without end when the service was still waiting for the worker
    assert ended < 4, f"the command took {ended:.1f} s to end after SIGTERM"
    assert driver.returncode == 130, err[-2000:]
    assert "multiref: error: interrupted by SIGTERM" in err
    assert not (tmp_path / "out").exists()
