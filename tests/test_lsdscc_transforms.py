"""Each composite of the LSDSCC corpus graph (pipelines/lsdscc_transforms.py) on its own,
with TestPipeline and assert_that, in the style of Beam's examples."""

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.records import Post
from lsdscc.corpus.threads import MultiTurnRow, Node, SingleTurnRow, Thread
from multiref.output.beam_utils import pipeline_options
from multiref.output.beam_writer import SumCounts
from pipelines import lsdscc_transforms as t

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
        assert_that(out["posts"], equal_to([("t3_s", ("t1", "t1_a", "t3_s", "t3_s", 5, "hi"))]), label="posts")
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
        assert_that(out, equal_to([("t3_s", (Node("t1_c1", "t3_s", 101, "inception happy"),))]))


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


def test_pairs_rows_lengths_and_drops():
    with _pipeline() as p:
        out = p | beam.Create([_final_thread()]) | t.Pairs(CONFIG)
        assert_that(out["rows"], equal_to([
            SingleTurnRow("t1_c1", "t3_s", "t3_s", "t1_c1", "best movie ?", "inception happy", 101),
            SingleTurnRow("t1_c2", "t3_s", "t1_c1", "t1_c2", "inception happy", "agreed !", 102)]),
            label="rows")
        assert_that(out["lengths"], equal_to([{"query": {3: 1, 2: 1}, "response": {2: 2}}]), label="lengths")
        assert_that(_total(out["counts"]), equal_to([{"dropped-missing-parent": 1, "pairs-candidate": 2}]),
                    label="counts")


def test_conversations_root_to_leaf():
    with _pipeline() as p:
        out = p | beam.Create([_final_thread()]) | t.Conversations(CONFIG)
        assert_that(out["rows"], equal_to([MultiTurnRow(
            "t1_c2", "t3_s", ["t3_s", "t1_c1", "t1_c2"], ["best movie ?", "inception happy", "agreed !"], 102)]),
            label="rows")
        assert_that(_total(out["counts"]), equal_to([{"multi-turn-candidate": 1,
                                                       "multi-turn-dropped-broken-chain": 1}]), label="counts")


def _pair(i, thread, query="q", response="r"):
    return SingleTurnRow(i, thread, "t1_p", i, query, response, 1)


def test_dedup_keeps_the_smallest_id():
    examples = [_pair("t1_c", "t3_a"), _pair("t1_a", "t3_b"), _pair("t1_b", "t3_c"), _pair("t1_z", "t3_d", "other")]
    keep = t.KeepSmallestId(SingleTurnRow)  # the rule the job runs, in any order and any merge
    for order in (examples[:3], examples[2::-1]):
        acc = keep.create_accumulator()
        for e in order:
            acc = keep.add_input(acc, e)
        assert keep.extract_output(acc) == (examples[1], 3)
    halves = [keep.add_input(keep.create_accumulator(), e) for e in examples[:3]] + [keep.create_accumulator()]
    assert keep.merge_accumulators(halves) == (examples[1], 3)
    with _pipeline() as p:
        out = p | beam.Create(examples) | t.Dedup()
        assert_that(out["rows"] | beam.Map(lambda e: e.id), equal_to(["t1_a", "t1_z"]), label="rows")
        assert_that(_total(out["counts"]), equal_to([{"dropped-duplicate": 2}]), label="counts")


@pytest.mark.parametrize("fraction", [0.0, 0.5])
def test_split_by_thread_hash(fraction):
    from lsdscc.corpus.threads import split_of

    threads = [f"t3_{i}" for i in range(20)]
    with _pipeline() as p:
        out = p | beam.Create([_pair(f"t1_{i}", th) for i, th in enumerate(threads)]) | t.Split(fraction)
        assert_that(out | beam.Map(lambda e: (e[0], e[1], e[2])),
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
        out = {"single_turn": p | "P" >> beam.Create(pairs), "multi_turn": p | "M" >> beam.Create(turns)} | t.Dedup()
        split = out["rows"] | t.Split(0.0)
        assert sorted(split) == ["multi_turn", "single_turn"]
        assert_that(split["single_turn"] | "S" >> beam.Map(lambda e: (e[1], e[3][0])), equal_to([("train", "t1_a")]),
                    label="single")
        assert_that(split["multi_turn"] | "T" >> beam.Map(lambda e: e[3][0]), equal_to(["t1_w"]), label="multi")
        assert_that(_total(out["counts"]), equal_to([{"dropped-duplicate": 1, "multi-turn-dropped-duplicate": 1}]),
                    label="counts")


def test_rows_cross_every_shuffle_with_the_registered_row_coder():
    # Beam's default coder pickles a NamedTuple's type with every element; the job declares its
    # rows' types, so every GroupByKey/CombinePerKey input is encoded by TupleRowCoder.
    from multiref.output.beam_writer import TupleRowCoder

    registry = beam.coders.registry
    p = beam.Pipeline(options=pipeline_options([]))
    posts = (p | t.Read(CONFIG, source=[_comment("a", "hi")]))["posts"]
    final = (posts | t.Threads())["threads"] | t.Clean(CONFIG) | "V" >> t.Vocabulary(CONFIG)
    pairs = (final["threads"] | t.Pairs(CONFIG))["rows"]
    convs = (final["threads"] | t.Conversations(CONFIG))["rows"]
    split = ({"single_turn": pairs, "multi_turn": convs} | t.Dedup())["rows"] | t.Split(0.1)
    assert registry.get_coder(posts.element_type).coders()[1] == TupleRowCoder(Post)
    assert registry.get_coder(final["threads"].element_type) == TupleRowCoder(Thread)
    assert registry.get_coder(pairs.element_type) == TupleRowCoder(SingleTurnRow)
    assert registry.get_coder(split["multi_turn"].element_type).coders()[3] == TupleRowCoder(MultiTurnRow)
    row, count = t.KeepSmallestId(SingleTurnRow).get_accumulator_coder().coders()
    assert row == beam.coders.NullableCoder(TupleRowCoder(SingleTurnRow)) and count == beam.coders.VarIntCoder()
