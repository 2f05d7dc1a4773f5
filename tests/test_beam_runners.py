"""Beam's own reasons, remote globs matched by the job, FIFO inputs, no orphaned workers.

- A runner that cannot start (a job-server jar or the Prism binary that cannot be fetched,
  no ``--job_endpoint``, an environment type the runner lacks) is one line with Beam's reason
  and exit 1; a failure of the job itself (our bug) still exits 3.
- ``gs://`` input globs are matched inside the job, so the Dataflow dry run builds offline.
- A FIFO or ``<(zstdcat ...)`` input is read once, streaming.
- ``kill -9`` of a multi-process build leaves none of its Beam workers running.

The proxy variables point every download at the discard port, so the "cannot fetch" cases
are the same with or without a network (nothing is downloaded either way).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers import REPO_DIR
from tests.test_cli_errors import CLOSED, assert_one_error_line, run_multiref

SAMPLE = REPO_DIR / "lsdscc" / "corpus" / "sample"
NO_DOWNLOADS = {"https_proxy": CLOSED, "HTTPS_PROXY": CLOSED, "http_proxy": CLOSED, "HTTP_PROXY": CLOSED,
                "no_proxy": "", "NO_PROXY": ""}


def _build(tmp_path, *beam_args, command=("lsdscc", "build", "--skip-testset")):
    env = dict(NO_DOWNLOADS, HOME=str(tmp_path))  # an empty jar cache: Beam must fetch the jar
    return run_multiref([*command, "--quiet", "--output", str(tmp_path / "out"), *beam_args], tmp_path,
                        env_extra=env, timeout=240)[0]


@pytest.mark.parametrize("beam_args, needle", [
    (["--runner", "FlinkRunner"], "Unable to fetch remote job server jar at https://"),
    (["--runner", "SparkRunner"], "beam-runners-spark-3-job-server-2.77.0.jar"),
    (["--runner", "PrismRunner"], "Unable to fetch remote prism binary at https://github.com/apache/beam/"),
    (["--runner", "PortableRunner"], "You must specify a --job_endpoint"),
    (["--runner", "PortableRunner", "--job_endpoint", "embed", "--environment_type", "PROCESS",
      "--environment_config", '{"command": "/nonexistent/boot"}'], "no worker environment 'beam:env:process:v1'"),
], ids=["flink-jar", "spark-jar", "prism-binary", "portable-no-endpoint", "embed-process"])
def test_a_runner_that_cannot_start_says_beams_reason(tmp_path, beam_args, needle):
    proc = _build(tmp_path, *beam_args)
    assert_one_error_line(proc, 1, needle)
    assert "could not start" in proc.stderr and "apache-beam[gcp]" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_dailydialog_build_says_beams_reason_too(tmp_path):
    proc = _build(tmp_path, "--runner", "PortableRunner", "--job_endpoint", "embed", "--environment_type",
                  "PROCESS", "--environment_config", '{"command": "/nonexistent/boot"}',
                  command=("dailydialog", "build"))
    assert_one_error_line(proc, 1, "no worker environment 'beam:env:process:v1'")


class _Boom(Exception):
    pass


def _failing_pipeline(beam_args, in_setup=False):
    import apache_beam as beam

    from pipelines.beam.runner import pipeline_options

    class Fails(beam.DoFn):
        def setup(self):
            if in_setup:
                raise _Boom("a bug in setup")

        def process(self, element):
            raise _Boom("a bug in our DoFn")

    p = beam.Pipeline(options=pipeline_options(beam_args))
    _ = p | beam.Create([1, 2]) | beam.ParDo(Fails())
    return p


@pytest.mark.parametrize("beam_args", [
    [],
    ["--runner", "PortableRunner", "--job_endpoint", "embed", "--environment_type", "LOOPBACK"],
], ids=["fnapi", "portable-loopback"])
@pytest.mark.parametrize("in_setup", [False, True], ids=["process", "setup"])
def test_a_failing_job_is_not_a_runner_that_cannot_start(beam_args, in_setup):
    # our own bug inside the job stays what it is (the CLI's exit 3), on either runner
    from pipelines.beam.runner import run_pipeline
    from multiref.util.errors import UserError

    with pytest.raises(Exception) as caught:
        run_pipeline(_failing_pipeline(beam_args, in_setup))
    assert not isinstance(caught.value, UserError), caught.value
    assert "a bug in" in str(caught.value)


# -- remote globs ---------------------------------------------------------------------------

#: docs/cluster.md's Dataflow command, with --dry_run=True; Beam packages setup.py with
#: `setup.py sdist` (no network), and with the worker image (docs/cluster.md) instead
DATAFLOW = ["lsdscc", "build", "--input", "gs://my-bucket/reddit/R[CS]_2017-*.zst", "--output",
            "gs://my-bucket/lsdscc", "--skip-testset", "--runner", "DataflowRunner", "--project", "my-project",
            "--region", "us-central1", "--temp_location", "gs://my-bucket/tmp", "--dry_run=True"]
SETUP_FILE = ["--setup_file", str(REPO_DIR / "setup.py")]
IMAGE = ["--sdk_container_image", "us-central1-docker.pkg.dev/my-project/beam/multiref-worker:0.1.0",
         "--experiments", "use_runner_v2"]


@pytest.mark.parametrize("packaging", [SETUP_FILE, IMAGE], ids=["setup-file", "worker-image"])
def test_dataflow_dry_run_with_a_remote_glob_builds_offline(tmp_path, packaging):
    # STORAGE_EMULATOR_HOST (run_multiref) sends any Cloud Storage call to a closed port
    try:
        proc, seconds = run_multiref(DATAFLOW + packaging, tmp_path, env_extra=NO_DOWNLOADS, timeout=100)
    except subprocess.TimeoutExpired:
        pytest.fail("the dry run did not finish in 100 s (it listed gs:// while building the graph)")
    assert proc.returncode == 0, proc.stderr
    assert "dry run: the pipeline was built, nothing was run" in proc.stdout
    assert seconds < 60, seconds
    assert os.listdir(tmp_path) == []  # no lock, no staging folder, nothing written


def test_the_remote_glob_is_matched_inside_the_graph(tmp_path):
    graph = tmp_path / "graph.dot"
    env = {**os.environ, "STORAGE_EMULATOR_HOST": CLOSED, **NO_DOWNLOADS}
    proc = subprocess.run([sys.executable, "-m", "pipelines.lsdscc.corpus", "--input",
                           "gs://my-bucket/reddit/R[CS]_2017-*.zst", "--output", "gs://my-bucket/lsdscc",
                           "--runner", "apache_beam.runners.render.RenderRunner", "--render_output", str(graph)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    dot = graph.read_text()
    from pipelines.lsdscc.corpus import STEPS

    for label in (*STEPS, "MatchRemote", "ListRemotePatterns", "ReadAndNormalize", "WriteRejected", "WriteStats"):
        # graphviz's `dot`, when installed, lays the file out and drops the quotes of plain labels
        assert f'label="{label}"' in dot or re.search(rf"label={label}[,\]\s]", dot), label


def test_remote_inputs_pass_through_and_local_ones_are_resolved(tmp_path):
    from lsdscc.corpus import sources
    from multiref.util.errors import UserError

    (tmp_path / "RC_a.jsonl").write_text("{}\n")
    remote = "gs://my-bucket/reddit/R[CS]_2017-*.zst"
    assert sources.resolve_inputs([remote, str(tmp_path)]) == sorted([remote, str(tmp_path / "RC_a.jsonl")])
    assert sources.match_remote(str(tmp_path / "RC_*.jsonl")) == [str(tmp_path / "RC_a.jsonl")]
    with pytest.raises(UserError, match="no input files match"):
        sources.match_remote(str(tmp_path / "RS_*.zst"))
    with pytest.raises(UserError, match="input not found"):
        sources.resolve_inputs([str(tmp_path / "missing.zst")])


# -- FIFOs ------------------------------------------------------------------------------------

def _feed(fifo, data: bytes):
    def write():
        with open(fifo, "wb") as fh:  # blocks until the reader opens it
            fh.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_read_once_streaming(tmp_path):
    from lsdscc.corpus import sources

    fifo = tmp_path / "comments.fifo"
    os.mkfifo(fifo)
    assert sources.resolve_inputs([str(fifo)]) == [str(fifo)]  # not opened: a FIFO is read once
    writer = _feed(fifo, (SAMPLE / "RC_sample.jsonl.zst").read_bytes())  # zstd: sniffed from the stream
    from_fifo = list(sources.read_items(str(fifo)))
    writer.join(10)
    assert not writer.is_alive()
    assert from_fifo == list(sources.read_items(str(SAMPLE / "RC_sample.jsonl.zst")))


def test_a_build_reads_a_fifo_like_the_file(tmp_path):
    fifo = tmp_path / "comments.fifo"
    os.mkfifo(fifo)
    out = {}
    for name, comments in (("file", SAMPLE / "RC_sample.jsonl.zst"), ("fifo", fifo)):
        argv = [sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--quiet", "--skip-testset", "--input",
                str(comments), "--input", str(SAMPLE / "RS_sample.jsonl.zst"), "--output", str(tmp_path / name)]
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        writer = _feed(fifo, (SAMPLE / "RC_sample.jsonl.zst").read_bytes()) if name == "fifo" else None
        stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr
        if writer is not None:
            writer.join(10)
        out[name] = stdout.replace(str(tmp_path / name), "OUT")
    assert out["fifo"] == out["file"]
    from tests.helpers import file_digests

    single = {k: v for k, v in file_digests(tmp_path / "file").items() if k.startswith("single_turn")}
    assert single and all(file_digests(tmp_path / "fifo")[k] == v for k, v in single.items())


# -- no orphans -----------------------------------------------------------------------------

def _children(pid: int) -> list:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout.split()
    pairs = list(zip(map(int, out[0::2]), map(int, out[1::2])))
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in pairs if pp == parent]
        found += kids
        frontier += kids
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except FileNotFoundError:
        return False


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except FileNotFoundError:
        return 0


def _workers(pid: int) -> list:
    """The Beam SDK worker processes (and their ``sh -c``) that ``pid`` started."""
    found = []
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as fh:
                if b"sdk_worker_main" in fh.read():
                    found.append(child)
        except FileNotFoundError:
            pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("when", ["starting", "working"])
def test_kill_9_of_a_multi_process_build_leaves_no_workers(tmp_path, when):
    # "starting": killed as soon as the workers exist, before they connect (Beam's workers then
    # wait for their driver for minutes); "working": killed while both process bundles
    from lsdscc.corpus.sample_gen import write_dump

    write_dump(str(tmp_path / "dump"), 60000)  # about 40 s of work with two workers
    argv = [sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--quiet", "--skip-testset", "--input",
            str(tmp_path / "dump"), "--output", str(tmp_path / "out"), "--direct_running_mode", "multi_processing",
            "--direct_num_workers", "2"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            workers = _workers(proc.pid)
            busy = [p for p in workers if _threads(p) > 10]  # a worker, connected (not its sh -c)
            ready = len(workers) >= 4 if when == "starting" else len(busy) >= 2  # two workers, each under a sh -c
            if ready:
                break
            time.sleep(0.2)
        assert ready, f"the workers did not start: {workers}"
        if when == "working":
            time.sleep(2)
        assert proc.poll() is None, "the build finished before it was killed: use a bigger dump"
        workers = _workers(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_running(p) for p in workers):
            time.sleep(0.2)
        left = [p for p in workers if _running(p)]
        assert not left, f"worker processes outlived the build: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for pid in workers:  # on failure, end what this test started (by pid)
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
