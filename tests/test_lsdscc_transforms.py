"""Each composite of the LSDSCC corpus graph (pipelines/lsdscc/transforms.py) on its own,
with TestPipeline and assert_that, in the style of Beam's examples."""

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.records import Post
from lsdscc.corpus.threads import MultiTurnRow, Node, SingleTurnRow, Thread
from pipelines.beam.runner import pipeline_options
from multiref.beam.writer import SumCounts
from pipelines.lsdscc import dedup as d
from pipelines.lsdscc import transforms as t

CONFIG = CorpusConfig(max_query_tokens=8, max_response_tokens=5, min_turns=3, rare_max_count=1, piece_min_count=2)


def _pipeline():
    return BeamTestPipeline(options=pipeline_options([]))


def _total(counts):
    return counts | "Sum" >> beam.CombineGlobally(SumCounts())


def _comment(i, body, parent="t3_s", subreddit="movies", author="x"):
    return {"id": i, "body": body, "author": author, "parent_id": parent, "link_id": "t3_s",
            "subreddit": subreddit, "created_utc": "5"}


def test_read_normalizes_rejects_and_counts():
    records = [_comment("a", "hi"), _comment("b", "[deleted]"), dict(_comment("c", "x"), body=7),
               _comment("d", "elsewhere", subreddit="pics"), _comment("e", "beep", author="AutoModerator")]
    with _pipeline() as p:
        out = p | t.Read(CONFIG, source=records)
        assert_that(out["posts"], equal_to([("t3_s", ("t1", "t1_a", "t3_s", "t3_s", 5, "hi")),
                                            ("t3_s", ("deleted", "t1_b", "t3_s", "", 0, ""))]),  # b's tombstone
                    label="posts")
        assert_that(out["rejected"] | beam.Map(lambda r: (r["reason"], r["line"])), equal_to([("wrong-type", 3)]),
                    label="rejected")
        assert_that(_total(out["counts"]), equal_to([{
            "dropped-bot": 1, "dropped-deleted": 1, "dropped-other-subreddit": 1, "posts-kept-comments": 1,
            "records-read": 5, "rejected-wrong-type": 1}]), label="counts")


def test_read_counts_lines_the_reader_skipped(monkeypatch, tmp_path):
    # The reader may drop other subreddits' lines before parsing them: ("skipped", n) items.
    def fake_read_items(path, subreddits=None, progress_label=None, tap=None):
        yield ("ok", 1, _comment("a", "hi"))
        yield ("skipped", 40)

    monkeypatch.setattr(t.sources, "read_items", fake_read_items)
    (tmp_path / "RC.jsonl").write_text("")
    with _pipeline() as p:
        out = p | t.Read(CONFIG, inputs=[str(tmp_path / "RC.jsonl")])
        assert_that(_total(out["counts"]), equal_to([{
            "dropped-other-subreddit": 40, "posts-kept-comments": 1, "records-read": 41}]))


POSTS = [
    Post("t3", "t3_s", "t3_s", "", 100, "Best movie?"),
    Post("t1", "t1_c2", "t3_s", "t1_c1", 102, "Agreed!"),
    Post("t1", "t1_c1", "t3_s", "t3_s", 101, "Inception :)"),
    Post("t1", "t1_c2", "t3_s", "t1_c1", 102, "Agreed!"),  # a repeated record
    Post("t1", "t1_x", "t3_o", "t3_o", 103, "Orphan thread"),
]


def test_threads_groups_by_link_id_and_resolves_ids():
    with _pipeline() as p:
        out = p | beam.Create([(post.link_id, post) for post in POSTS]) | t.Threads()
        assert_that(out["threads"] | beam.MapTuple(lambda k, posts: (k, [x.id for x in posts])),
                    equal_to([("t3_s", ["t1_c1", "t1_c2", "t3_s"]), ("t3_o", ["t1_x"])]), label="threads")
        assert_that(_total(out["counts"]), equal_to([{"dropped-duplicate-id": 1, "threads": 2,
                                                       "threads-without-submission": 1}]), label="counts")


def test_clean_tokenizes_each_post_once():
    with _pipeline() as p:
        out = p | beam.Create([("t3_s", (POSTS[2],))]) | t.Clean(CONFIG)
        assert_that(out["threads"], equal_to([("t3_s", (Node("t1_c1", "t3_s", 101, "inception happy"),))]))
        assert_that(out["words"] | "Words" >> beam.CombineGlobally(t.SumWords()),
                    equal_to([{"inception": 1, "happy": 1}]), label="words")


def test_clean_counts_the_same_words_as_counting_the_threads():
    # Clean counts each post's tokens as it makes them; Vocabulary on threads alone splits
    # their texts again: the same counts, so the same vocabulary and final threads.
    posts = [("t3_s", tuple(POSTS[:3])), ("t3_o", (POSTS[4],))]
    with _pipeline() as p:
        cleaned = p | beam.Create(posts) | t.Clean(CONFIG)
        fused = cleaned | "Fused" >> t.Vocabulary(CONFIG)
        alone = cleaned["threads"] | "Alone" >> t.Vocabulary(CONFIG)
        expected = {"best": 1, "movie": 1, "?": 1, "agreed": 1, "!": 1, "inception": 1, "happy": 1, "orphan": 1,
                    "thread": 1}
        assert_that(fused["summary"] | "FusedTypes" >> beam.Map(lambda s: s["noise"]["vocabulary_types"]),
                    equal_to([len(expected)]), label="fused types")
        both = ((fused["summary"], alone["summary"]) | "Summaries" >> beam.Flatten()
                | "Pairwise" >> beam.combiners.ToList() | "Same" >> beam.Map(lambda s: s[0] == s[1]))
        assert_that(both, equal_to([True]), label="same summary")
        assert_that(fused["threads"] | "Texts" >> beam.MapTuple(lambda k, ns: (k, [n.text for n in ns])),
                    equal_to([("t3_s", ["best movie ?", "agreed !", "inception happy"]),
                              ("t3_o", ["orphan thread"])]), label="final")


def test_vocabulary_counts_once_and_applies_as_side_input():
    # "greatmovie" is rare and spelled by two frequent words: split (step 5); "é" is dropped
    # (non-ASCII); with vocab_size 2 every other word becomes <unk> (step 6).
    config = CorpusConfig(vocab_size=2, rare_max_count=1, piece_min_count=2)
    nodes = (Node("t1_a", "t3_s", 1, "great movie great movie"), Node("t1_b", "t1_a", 2, "greatmovie é ok"))
    with _pipeline() as p:
        out = p | beam.Create([Thread("t3_s", nodes)]) | t.Vocabulary(config)
        assert_that(out["threads"] | beam.MapTuple(lambda k, ns: [n.text for n in ns]),
                    equal_to([["great movie great movie", "great movie <unk>"]]), label="threads")
        assert_that(out["summary"] | beam.Map(lambda s: (s["split_words"], s["vocabulary_kept"],
                                                         s["noise"]["non_ascii_types"])),
                    equal_to([(1, 2, 1)]), label="summary")


def _final_thread():
    return Thread("t3_s", (Node("t1_c1", "t3_s", 101, "inception happy"), Node("t1_c2", "t1_c1", 102, "agreed !"),
                     Node("t1_c3", "t1_gone", 103, "orphan"), Node("t3_s", "", 100, "best movie ?")))


def _unpacked(config, packed_rows):
    """Packed rows ``(thread_id, bytes)`` -> the rows, as the writer unpacks them."""
    return packed_rows | f"Unpack{config}" >> beam.FlatMap(lambda kv: t.unpack_shard(config, [kv[1]]))


def test_pairs_rows_lengths_and_drops():
    with _pipeline() as p:
        out = p | beam.Create([_final_thread()]) | t.Pairs(CONFIG)
        assert_that(_unpacked("single_turn", out["rows"]), equal_to([
            SingleTurnRow("t1_c1", "t3_s", "t3_s", "t1_c1", "best movie ?", "inception happy", 101),
            SingleTurnRow("t1_c2", "t3_s", "t1_c1", "t1_c2", "inception happy", "agreed !", 102)]),
            label="rows")
        assert_that(out["lengths"], equal_to([{"query": {3: 1, 2: 1}, "response": {2: 2}}]), label="lengths")
        assert_that(_total(out["counts"]), equal_to([{"dropped-missing-parent": 1, "pairs-candidate": 2}]),
                    label="counts")


def test_conversations_root_to_leaf():
    with _pipeline() as p:
        out = p | beam.Create([_final_thread()]) | t.Conversations(CONFIG)
        assert_that(_unpacked("multi_turn", out["rows"]), equal_to([MultiTurnRow(
            "t1_c2", "t3_s", ["t3_s", "t1_c1", "t1_c2"], ["best movie ?", "inception happy", "agreed !"], 102)]),
            label="rows")
        assert_that(_total(out["counts"]), equal_to([{"multi-turn-candidate": 1,
                                                       "multi-turn-dropped-broken-chain": 1}]), label="counts")


def _pair(i, thread, query="q", response="r"):
    return SingleTurnRow(i, thread, "t1_p", i, query, response, 1)


def _buffers(rows):
    """The content-key buffers the row makers send for ``rows``, as ``[(bucket, bytes)]``."""
    buffers = {}
    for row in rows:
        t.add_content_key(buffers, row)
    return sorted((bucket, stream.get()) for bucket, stream in buffers.items())


def _written_ids(config, lane):
    """The ids of the rows the writer keeps of a lane's packed rows and notices (one shard)."""
    lane = lane | f"Flat{config}" >> beam.Flatten() if isinstance(lane, tuple) else lane
    grouped = lane | f"One{config}" >> beam.Map(lambda kv: (0, kv[1])) | f"Group{config}" >> beam.GroupByKey()
    return grouped | f"Ids{config}" >> beam.FlatMap(lambda kv: [r.id for r in t.unpack_shard(config, kv[1])])


def _lane(p, name, rows):
    """A lane of :class:`Dedup`'s input: each row packed alone, and the rows' content keys."""
    return {"rows": p | f"{name}Rows" >> beam.Create([t.packed([row]) for row in rows]),
            "keys": p | f"{name}Keys" >> beam.Create(_buffers(rows))}


def test_dedup_keeps_the_smallest_id():
    examples = [_pair("t1_c", "t3_a"), _pair("t1_a", "t3_b"), _pair("t1_b", "t3_c"), _pair("t1_z", "t3_d", "other")]
    for order in (examples, examples[::-1]):  # the rule the job runs, in any order and any split of the buffers
        for buffers in ([data for _, data in _buffers(order)], [data for r in order for _, data in _buffers([r])]):
            assert d.duplicates(buffers) == (2, [("t3_a", "t1_c"), ("t3_c", "t1_b")])
    with _pipeline() as p:
        out = {"single_turn": _lane(p, "S", examples)} | t.Dedup()
        assert_that(_written_ids("single_turn", out["rows"]["single_turn"]), equal_to(["t1_a", "t1_z"]), label="rows")
        assert_that(_total(out["counts"]), equal_to([{"dropped-duplicate": 2}]), label="counts")


def test_dedup_drops_rows_of_threads_that_also_keep_one():
    # A thread's kept and dropped rows travel in one packed value; only the dropped leave.
    rows = [_pair("t1_a", "t3_x"), _pair("t1_b", "t3_x"), _pair("t1_c", "t3_y", "other"), _pair("t1_d", "t3_x", "other")]
    with _pipeline() as p:
        lane = {"rows": p | beam.Create([t.packed(rows[:2] + rows[3:]), t.packed(rows[2:3])]),
                "keys": p | "Keys" >> beam.Create(_buffers(rows))}
        out = {"single_turn": lane} | t.Dedup()
        assert_that(_written_ids("single_turn", out["rows"]["single_turn"]), equal_to(["t1_a", "t1_c"]))


@pytest.mark.parametrize("fraction", [0.0, 0.5])
def test_split_by_thread_hash(fraction):
    from lsdscc.corpus.threads import split_of

    threads = [f"t3_{i}" for i in range(20)]
    with _pipeline() as p:
        rows = p | beam.Create([t.packed([_pair(f"t1_{i}", th)]) for i, th in enumerate(threads)])
        out = {"single_turn": rows} | t.Split(fraction)
        assert_that(out["single_turn"] | beam.Map(lambda e: (e[0], e[1], e[2])),
                    equal_to([("single_turn", split_of(th, fraction), th) for th in threads]))
    assert {split_of(th, 0.5) for th in threads} == {"train", "validation"}


def test_writer_hooks_add_response_numbers():
    rows = [SingleTurnRow("t1_b", "t3_s", "t3_s", "t1_b", "q", "r", 1), SingleTurnRow("t1_a", "t3_s", "t3_s", "t1_a", "q", "s", 1),
            SingleTurnRow("t1_c", "t3_s", "t1_a", "t1_c", "s", "u", 1)]
    finished = t.finish_shard("single_turn", rows)
    assert [r[0] for r in finished] == ["t1_a", "t1_b", "t1_c"] and [r[-1] for r in finished] == [2, 2, 1]
    assert t.summarize_shard("single_turn", finished) == {2: 1, 1: 1}
    assert t.finish_shard("multi_turn", rows) == rows and t.summarize_shard("multi_turn", rows) is None


def test_dedup_and_split_lane_by_lane():
    # {config: rows} runs one lane per config (no Flatten): the same rows and counts as one input.
    pairs = [_pair("t1_c", "t3_a"), _pair("t1_a", "t3_b")]
    turns = [MultiTurnRow("t1_x", "t3_a", ["t3_a", "t1_x"], ["q", "r"], 1),
             MultiTurnRow("t1_w", "t3_b", ["t3_b", "t1_w"], ["q", "r"], 1)]
    with _pipeline() as p:
        out = {"single_turn": _lane(p, "P", pairs), "multi_turn": _lane(p, "M", turns)} | t.Dedup()
        split = out["rows"] | t.Split(0.0)
        assert sorted(split) == ["multi_turn", "single_turn"]

        def kept(config):
            return lambda kv: [(kv[0][1], r.id) for r in t.unpack_shard(config, kv[1])]

        for config, label, expected in (("single_turn", "S", ("train", "t1_a")), ("multi_turn", "T", ("train", "t1_w"))):
            grouped = split[config] | f"{label}Flat" >> beam.Flatten() | f"{label}Key" >> beam.Map(lambda e: ((e[0], e[1]), e[3])) | f"{label}G" >> beam.GroupByKey()
            assert_that(grouped | f"{label}Kept" >> beam.FlatMap(kept(config)), equal_to([expected]), label=config)
        assert_that(_total(out["counts"]), equal_to([{"dropped-duplicate": 1, "multi-turn-dropped-duplicate": 1}]),
                    label="counts")


def test_only_bytes_cross_the_shuffles():
    # Beam's local runner holds a GroupByKey's values as decoded objects: posts, packed rows
    # and content keys cross as bytes; threads between the steps keep the registered row coder.
    from multiref.beam.writer import TupleRowCoder

    registry = beam.coders.registry
    p = beam.Pipeline(options=pipeline_options([]))
    posts = (p | t.Read(CONFIG, source=[_comment("a", "hi")]))["posts"]
    final = (posts | t.Threads())["threads"] | t.Clean(CONFIG) | "V" >> t.Vocabulary(CONFIG)
    pairs = final["threads"] | t.Pairs(CONFIG)
    convs = final["threads"] | t.Conversations(CONFIG)
    split = ({"single_turn": pairs, "multi_turn": convs} | t.Dedup())["rows"] | t.Split(0.1)
    assert registry.get_coder(posts.element_type).coders()[1] == TupleRowCoder(Post)
    assert registry.get_coder(final["threads"].element_type) == TupleRowCoder(Thread)
    assert registry.get_coder(pairs["rows"].element_type).coders()[1] == beam.coders.BytesCoder()
    for part in split["multi_turn"]:  # the packed rows and the notices
        assert registry.get_coder(part.element_type).coders()[3] == beam.coders.BytesCoder()
    grouped = [node.inputs[0] for node in _applied(p) if node.full_label.endswith("GroupByLinkId")]
    assert registry.get_coder(grouped[0].element_type).coders()[1] == beam.coders.BytesCoder()


def _applied(p):
    nodes = []

    class Visitor(beam.pipeline.PipelineVisitor):
        def enter_composite_transform(self, node):
            nodes.append(node)

        def visit_transform(self, node):
            nodes.append(node)

    p.visit(Visitor())
    return nodes