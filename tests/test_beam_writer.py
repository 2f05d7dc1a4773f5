"""The shared deterministic writer (multiref/beam/writer.py) and the parquet settings it uses."""

import os
from typing import NamedTuple

import apache_beam as beam
import pytest
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from multiref.output import hfdata
from pipelines.beam.runner import pipeline_options
from multiref.beam.writer import CountingDoFn, SumCounts, WriteShards, write_file

SCHEMA = pa.schema([("id", pa.string()), ("n", pa.int64())])


def _write(folder, rows, num_shards, splits=(("c", "train"), ("c", "test")), flags=(), summaries=None):
    with BeamTestPipeline(options=pipeline_options(list(flags))) as p:
        out = (p | beam.Create([("c", s, key, r) for s, key, r in rows])
               | WriteShards(str(folder), {"c": SCHEMA}, splits, num_shards))
        if summaries is not None:
            assert_that(out | beam.Map(tuple), equal_to(summaries))


def test_shards_sorted_complete_and_independent_of_order(tmp_path):
    rows = [("train", f"k{i % 7}", (f"id{i:03d}", i)) for i in range(60)] + [("test", "k1", ("x", 1))]
    _write(tmp_path / "a", rows, 3)
    _write(tmp_path / "b", rows[::-1], 3, flags=["--direct_num_workers", "2", "--direct_running_mode",
                                                  "multi_threading"])
    names = sorted(os.listdir(tmp_path / "a" / "c"))
    assert names == [f"{s}-{i:05d}-of-00003.parquet" for s in ("test", "train") for i in range(3)]
    for name in names:
        assert (tmp_path / "a" / "c" / name).read_bytes() == (tmp_path / "b" / "c" / name).read_bytes(), name
    seen = []
    for i in range(3):
        ids = pq.read_table(tmp_path / "a" / "c" / f"train-{i:05d}-of-00003.parquet").column("id").to_pylist()
        assert ids == sorted(ids)
        seen += ids
    assert sorted(seen) == [f"id{i:03d}" for i in range(60)]
    # rows sharing a key share a shard
    assert {hfdata.shard_index(f"k{i}", 3) for i in range(7)} == {0, 1, 2}


def _unpack_pairs(config, values):
    return [row for packed in values for row in packed]


def test_unpack_hook_makes_rows_of_packed_values_before_sorting(tmp_path):
    # each element carries several rows as one value; the shard's rows are unpacked, then sorted
    packed = [("train", "k", (("b", 2), ("a", 1))), ("train", "k", (("c", 3),))]
    with BeamTestPipeline(options=pipeline_options([])) as p:
        out = (p | beam.Create([("c", s, key, v) for s, key, v in packed])
               | WriteShards(str(tmp_path), {"c": SCHEMA}, [("c", "train")], 1, unpack=_unpack_pairs))
        assert_that(out | beam.Map(lambda s: s.rows), equal_to([3]))
    assert pq.read_table(tmp_path / "c" / "train-00000-of-00001.parquet").to_pylist() == [
        {"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "c", "n": 3}]


def test_more_shards_than_rows_and_empty_splits_are_valid_files(tmp_path):
    k = hfdata.shard_index("k", 4)
    _write(tmp_path, [("train", "k", ("a", 1))], 4,
           summaries=[("c", s, i, int((s, i) == ("train", k)), None) for s in ("train", "test") for i in range(4)])
    for split in ("train", "test"):
        for i in range(4):
            md = pq.read_metadata(tmp_path / "c" / f"{split}-{i:05d}-of-00004.parquet")
            assert md.num_row_groups == (1 if (split, i) == ("train", hfdata.shard_index("k", 4)) else 0)
    assert not [n for n in os.listdir(tmp_path / "c") if n.startswith(".tmp")]


def test_load_dataset_reads_a_split_with_empty_shards(tmp_path):
    import datasets

    _write(tmp_path, [("train", "k", ("a", 1)), ("train", "j", ("b", 2))], 5, splits=[("c", "train")])
    hfdata.add_config(str(tmp_path), hfdata.ConfigInfo(name="c", description="d", splits={"train": 2},
                                                       features=SCHEMA))
    assert sorted(datasets.load_dataset(str(tmp_path), "c")["train"]["id"]) == ["a", "b"]


def test_counts_as_data():
    class CountEven(CountingDoFn):
        def process(self, n):
            if n % 2 == 0:
                self.count("even")
            yield n

    with BeamTestPipeline(options=pipeline_options([])) as p:
        out = p | beam.Create(range(10)) | beam.ParDo(CountEven()).with_outputs("counts", main="numbers")
        assert_that(out.counts | beam.CombineGlobally(SumCounts()), equal_to([{"even": 5}]))


def test_write_file_replaces_atomically(tmp_path):
    path = str(tmp_path / "sub" / "f.json")
    write_file(path, b"one")
    write_file(path, b"two")
    assert open(path, "rb").read() == b"two" and os.listdir(tmp_path / "sub") == ["f.json"]


def test_empty_table_has_no_row_group(tmp_path):
    path = str(tmp_path / "e.parquet")
    hfdata.write_parquet(path, [], SCHEMA)
    md = pq.read_metadata(path)
    assert md.num_rows == 0 and md.num_row_groups == 0 and pq.read_schema(path).names == ["id", "n"]
    assert hfdata.parquet_bytes([("a", 1)], SCHEMA) == hfdata.parquet_bytes([{"id": "a", "n": 1}], SCHEMA)


class _Row(NamedTuple):
    id: str
    parts: list[str]
    n: int | None = None


def test_tuple_row_coder_is_compact_deterministic_and_round_trips():
    from multiref.beam.writer import TupleRowCoder

    coder = TupleRowCoder(_Row)
    row = _Row("t1_a", ["q", "r"], 7)
    assert coder.is_deterministic()
    assert coder.decode(coder.encode(row)) == row and type(coder.decode(coder.encode(row))) is _Row
    assert coder.decode(coder.encode(_Row("x", []))) == _Row("x", [], None)
    plain = beam.coders.FastPrimitivesCoder()
    assert coder.encode(row) == plain.encode(tuple(row))  # the fields only: no pickled type
    assert len(plain.encode(row)) > 3 * len(coder.encode(row))  # Beam's default pickles the type
    nested = beam.coders.TupleCoder([beam.coders.StrUtf8Coder(), coder])
    assert nested.decode(nested.encode(("k", row))) == ("k", row)


def test_registered_row_coder_follows_the_rows_through_the_writer(tmp_path):
    from apache_beam import typehints

    from multiref.beam.writer import TupleRowCoder, register_row_coder

    register_row_coder(_Row)
    schema = pa.schema([("id", pa.string()), ("parts", pa.list_(pa.string())), ("n", pa.int64())])
    with BeamTestPipeline(options=pipeline_options([])) as p:
        rows = (p | beam.Create([_Row("b", ["x"], 2), _Row("a", [], 1)])
                | beam.Map(lambda r: ("c", "train", r.id, r)).with_output_types(typehints.Tuple[str, str, str, _Row]))
        _ = rows | WriteShards(str(tmp_path), {"c": schema}, [("c", "train")], 1)
    shard_of = [node for node in _graph_nodes(p) if node.full_label.endswith("ShardOf")]
    (hint,) = [n.outputs[None].element_type for n in shard_of]
    _, row_coder = beam.coders.registry.get_coder(hint).coders()  # the GroupByShard's input
    assert isinstance(row_coder, TupleRowCoder) and row_coder.row_type is _Row
    table = pq.read_table(tmp_path / "c" / "train-00000-of-00001.parquet").to_pylist()
    assert table == [{"id": "a", "parts": [], "n": 1}, {"id": "b", "parts": ["x"], "n": 2}]


def _graph_nodes(pipeline):
    out = []

    def visit(node):
        out.append(node)
        for part in node.parts:
            visit(part)

    visit(pipeline._root_transform())
    return out


class _Holder(NamedTuple):
    key: str
    rows: list[_Row]


def test_tuple_row_coder_sends_a_list_of_rows_as_tuples_and_refuses_other_fields():
    from multiref.beam.writer import TupleRowCoder

    coder = TupleRowCoder(_Holder)
    holder = _Holder("k", [_Row("a", ["x"], 1), _Row("b", [])])
    back = coder.decode(coder.encode(holder))
    assert back == holder and all(type(r) is _Row for r in back.rows)
    assert coder.encode(holder) == beam.coders.FastPrimitivesCoder().encode(("k", (("a", ["x"], 1), ("b", [], None))))

    class Loose(NamedTuple):
        value: float

    with pytest.raises(TypeError, match="Loose: no deterministic row encoding"):
        TupleRowCoder(Loose)
