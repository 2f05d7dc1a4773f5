"""The spill grouping (multiref/beam/spill.py) on Beam's local runner: the same groups as
a GroupByKey, files only in the job's folder, the folder gone after success and failure, and
retried bundles that cannot double a value."""

import os
import random
from typing import Tuple

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.io.filesystem import FileMetadata
from apache_beam.io.localfilesystem import LocalFileSystem
from apache_beam.testing.util import assert_that, equal_to

from multiref.beam import spill as bs
from pipelines.beam.runner import pipeline_options


def _pipeline(flags=()):
    return BeamTestPipeline(options=pipeline_options(list(flags)))


def _data(n=3000, keys=400, seed=3):
    rng = random.Random(seed)
    return [(f"k{rng.randrange(keys)}", os.urandom(rng.randrange(0, 40))) for _ in range(n)]


def _listing(folder):
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


@pytest.mark.parametrize("flags", [(), ("--direct_num_workers", "2", "--direct_running_mode", "multi_processing")])
def test_groups_equal_a_group_by_key_with_values_in_encoding_order(tmp_path, flags):
    data = _data()
    with bs.spill_folder(str(tmp_path)) as folder:
        with _pipeline(flags) as p:
            pairs = p | beam.Create(data).with_output_types(Tuple[str, bytes])
            plain = pairs | "Plain" >> beam.GroupByKey() | "Sorted" >> beam.MapTuple(lambda k, vs: (k, sorted(vs)))
            spilled = (pairs | bs.SpillGroupByKey(folder, buckets=7, flush_bytes=2000)
                       | "AsList" >> beam.MapTuple(lambda k, vs: (k, list(vs))))
            tagged = (plain | "P" >> beam.Map(lambda kv: ("plain", kv)),
                      spilled | "S" >> beam.Map(lambda kv: ("spill", kv)))
            both = tagged | beam.Flatten() | beam.combiners.ToList()
            assert_that(both | beam.Map(_same_groups), equal_to([True]))
        written = _listing(folder)
        assert len(written) > 5 and all(name.endswith(".spill") for name in written)  # flushed many times
    assert _listing(tmp_path) == []  # the folder and its files are gone


def _same_groups(tagged):
    plain = sorted(kv for tag, kv in tagged if tag == "plain")
    spilled = sorted(kv for tag, kv in tagged if tag == "spill")
    return len(plain) > 100 and plain == spilled


def test_several_inputs_meet_in_one_grouping_and_any_typed_keys_work(tmp_path):
    left = [(("c", "train", i % 5), i) for i in range(50)]
    right = [(("c", "train", i % 3), -i) for i in range(20)]
    expected = {}
    for key, value in left + right:
        expected.setdefault(key, []).append(value)
    with bs.spill_folder(str(tmp_path)) as folder:
        with _pipeline() as p:
            a = p | "A" >> beam.Create(left)
            b = p | "B" >> beam.Create(right)
            out = (a, b) | bs.SpillGroupByKey(folder, buckets=2) | beam.MapTuple(lambda k, vs: (k, sorted(vs)))
            assert_that(out, equal_to([(k, sorted(vs)) for k, vs in expected.items()]))


def test_reshuffle_keeps_every_element_once(tmp_path):
    items = [f"item {i}" * (i % 4) for i in range(500)]
    with bs.spill_folder(str(tmp_path)) as folder:
        with _pipeline() as p:
            out = p | beam.Create(items).with_output_types(str) | bs.SpillReshuffle(folder, buckets=3, flush_bytes=500)
            assert_that(out, equal_to(items))
        assert len(_listing(folder)) > 3
    assert _listing(tmp_path) == []


def test_the_folder_is_removed_after_a_failing_pipeline(tmp_path):
    def fail(kv, folder):
        raise ValueError(f"boom with {len(os.listdir(folder))} spill files")

    with pytest.raises(Exception, match=r"boom with [1-9]\d* spill files"):
        with bs.spill_folder(str(tmp_path)) as folder:
            with _pipeline() as p:
                _ = (p | beam.Create(_data(200)).with_output_types(Tuple[str, bytes])
                     | bs.SpillGroupByKey(folder, buckets=4, flush_bytes=300) | beam.Map(fail, folder))
    assert _listing(tmp_path) == []


def test_nothing_is_written_outside_the_folder_and_nothing_removed_when_told_not_to(tmp_path):
    (tmp_path / "keep.txt").write_text("the user's file")
    with bs.spill_folder(str(tmp_path), remove=False) as folder:
        assert os.path.dirname(folder) == str(tmp_path) and os.path.basename(folder).startswith(".spill-")
        with _pipeline() as p:
            _ = p | beam.Create(_data(100)).with_output_types(Tuple[str, bytes]) | bs.SpillGroupByKey(folder)
    assert sorted(os.listdir(tmp_path)) == [os.path.basename(folder), "keep.txt"]
    bs.remove_folder(folder)
    bs.remove_folder(folder)  # already gone: nothing to do
    assert os.listdir(tmp_path) == ["keep.txt"]


def _attempt(spill, data):
    """One bundle of ``data`` through the spilling DoFn: the segments it emits."""
    spill.start_bundle()
    out = [segment for element in data for segment in spill.process(element)]
    return out + [windowed.value for windowed in spill.finish_bundle()]


def test_a_retried_bundle_writes_new_files_and_only_emitted_segments_are_read(tmp_path):
    data = _data(400, keys=30)
    key_coder, value_coder = beam.coders.StrUtf8Coder(), beam.coders.BytesCoder()
    spill = bs._Spill(str(tmp_path), 5, 1500, key_coder, value_coder)
    spill.setup()
    first, second = _attempt(spill, data), _attempt(spill, data)  # the runner keeps only the second
    assert {path for _, (path, _, _) in first}.isdisjoint({path for _, (path, _, _) in second})
    by_bucket = {}
    for bucket, segment in second:
        by_bucket.setdefault(bucket, []).append(segment)
    got = [(key.decode(), value) for segments in by_bucket.values()
           for key, values in bs.grouped(segments) for value in values]
    assert sorted(got) == sorted(data)  # each value once, though the first attempt's files are there too
    assert set(by_bucket) <= set(range(5)) and len(by_bucket) > 1


def test_groups_do_not_depend_on_the_order_of_segments(tmp_path):
    spill = bs._Spill(str(tmp_path), 1, 200, beam.coders.StrUtf8Coder(), beam.coders.BytesCoder())
    spill.setup()
    segments = [segment for _, segment in _attempt(spill, _data(300, keys=10))]
    assert len(segments) > 3
    assert bs.grouped(segments) == bs.grouped(segments[::-1])


def test_bad_arguments_and_windows_are_refused():
    with pytest.raises(ValueError, match="needs a folder"):
        bs.SpillGroupByKey("")
    with pytest.raises(ValueError, match="must be positive"):
        bs.SpillGroupByKey("x", buckets=0)
    p = beam.Pipeline(options=pipeline_options([]))
    windowed = p | beam.Create([("a", 1)]) | beam.WindowInto(beam.window.FixedWindows(10))
    with pytest.raises(ValueError, match="global window"):
        _ = windowed | bs.SpillGroupByKey("x")


@pytest.mark.parametrize("flags, expected", [
    ((), True),
    (("--direct_running_mode", "multi_processing", "--direct_num_workers", "2"), True),
    (("--runner", "PortableRunner", "--job_endpoint", "embed", "--environment_type", "LOOPBACK"), True),
    (("--runner", "PortableRunner", "--job_endpoint", "localhost:8099"), False),  # a Flink or Spark job server
    (("--runner", "DataflowRunner", "--project", "p", "--region", "r"), False),
])
def test_the_spill_is_for_runners_that_shuffle_in_this_memory(flags, expected):
    from pipelines.beam.runner import shuffles_in_memory

    assert shuffles_in_memory(pipeline_options(list(flags))) is expected


@pytest.mark.parametrize("output, flags, local_temp", [
    ("out/lsdscc", (), False),
    ("gs://bucket/lsdscc", (), True),  # the local runner: every process is on this machine
    ("gs://bucket/lsdscc", ("--direct_running_mode", "multi_processing", "--direct_num_workers", "2"), True),
    ("gs://bucket/lsdscc", ("--runner", "PortableRunner", "--job_endpoint", "embed",
                            "--environment_type", "EXTERNAL", "--environment_config", "pool:50000"), False),
])
def test_a_remote_output_spills_locally_only_when_every_process_is_here(output, flags, local_temp, monkeypatch, tmp_path):
    import tempfile

    from pipelines.beam.runner import spill_parent

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert spill_parent(output, pipeline_options(list(flags))) == (str(tmp_path) if local_temp else output)


class _PrefixFileSystem(LocalFileSystem):
    """A 'remote' file system for this test: ``spilltest://<local path>`` through Beam's
    FileSystems registry, with no directories (as Cloud Storage): a path that reaches ``os``
    without going through FileSystems is not found."""

    PREFIX = "spilltest://"

    @classmethod
    def scheme(cls):
        return "spilltest"

    def _local(self, path):
        return path[len(self.PREFIX):] if path.startswith(self.PREFIX) else path

    def has_dirs(self):
        return False

    def create(self, path, *args, **kwargs):
        return super().create(self._local(path), *args, **kwargs)

    def open(self, path, *args, **kwargs):
        return super().open(self._local(path), *args, **kwargs)

    def exists(self, path):
        return super().exists(self._local(path))

    def delete(self, paths):
        super().delete([self._local(p) for p in paths])

    def _list(self, prefix):
        for meta in super()._list(self._local(prefix)):
            yield FileMetadata(self.PREFIX + meta.path, meta.size_in_bytes, meta.last_updated_in_seconds)


def test_a_remote_folder_is_written_read_and_emptied_through_file_systems(tmp_path):
    data = _data(500, keys=40)
    with bs.spill_folder(_PrefixFileSystem.PREFIX + str(tmp_path)) as folder:
        assert folder.startswith("spilltest://")
        with _pipeline() as p:
            out = (p | beam.Create(data).with_output_types(Tuple[str, bytes])
                   | bs.SpillGroupByKey(folder, buckets=3, flush_bytes=1000)
                   | beam.MapTuple(lambda k, vs: (k, list(vs))))
            expected = {}
            for key, value in data:
                expected.setdefault(key, []).append(value)
            assert_that(out, equal_to([(k, sorted(vs)) for k, vs in expected.items()]))
        assert [f for _, _, files in os.walk(tmp_path) for f in files]  # the files were there
    assert [f for _, _, files in os.walk(tmp_path) for f in files] == []  # every spill file deleted
