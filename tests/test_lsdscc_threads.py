"""Thread rebuilding, single-turn pairs and multi-turn conversations (docs/algorithms.md#corpus-pairs-and-conversations)."""

import pytest

from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import Post
from lsdscc.corpus.threads import SingleTurnRow, add_response_numbers, prepare_thread, shard_of, split_of, thread_examples
from lsdscc.corpus.vocab import build_vocabulary

CONFIG = CorpusConfig(max_query_tokens=8, max_response_tokens=5, min_turns=3)


def _posts():
    # t3_s: "Best movie?"; c1 -> s; c2 -> c1; c3 -> c1; c4 -> s (leaf); c5 -> missing parent; c6 -> c5
    return [
        Post("t3", "t3_s", "t3_s", "", 100, "Best movie?"),
        Post("t1", "t1_c1", "t3_s", "t3_s", 101, "Inception :)"),
        Post("t1", "t1_c2", "t3_s", "t1_c1", 102, "Agreed!"),
        Post("t1", "t1_c3", "t3_s", "t1_c1", 103, "No way, Heat is better and longer and much more fun"),
        Post("t1", "t1_c4", "t3_s", "t3_s", 104, "Heat"),
        Post("t1", "t1_c5", "t3_s", "t1_gone", 105, "Orphan reply"),
        Post("t1", "t1_c6", "t3_s", "t1_c5", 106, "Reply to orphan"),
        Post("t1", "t1_c2", "t3_s", "t1_c1", 102, "Agreed!"),  # a repeated record
    ]


def _vocab(nodes):
    from collections import Counter

    counts = Counter(t for n in nodes for t in n.text.split())
    return build_vocabulary(counts, vocab_size=1000, rare_max_count=0, piece_min_count=1, min_split_length=99)


def test_prepare_thread_dedups_ids_and_tokenizes_once():
    nodes, counts = prepare_thread("t3_s", _posts(), CONFIG)
    assert [n.id for n in nodes] == ["t1_c1", "t1_c2", "t1_c3", "t1_c4", "t1_c5", "t1_c6", "t3_s"]
    assert counts["dropped-duplicate-id"] == 1
    assert dict((n.id, n.text) for n in nodes)["t1_c1"] == "inception happy"


def test_missing_submission_is_counted():
    _, counts = prepare_thread("t3_s", _posts()[1:3], CONFIG)
    assert counts["threads-without-submission"] == 1


def test_pairs_and_conversations():
    nodes, _ = prepare_thread("t3_s", _posts(), CONFIG)
    out = list(thread_examples("t3_s", nodes, _vocab(nodes), CONFIG))
    pairs = {o.value.id: o.value._asdict() for o in out if isinstance(o, Kept) and o.value.config == "single_turn"}
    convs = {o.value.id: o.value._asdict() for o in out if isinstance(o, Kept) and o.value.config == "multi_turn"}
    drops = sorted(o.reason for o in out if isinstance(o, Dropped))
    # query = parent text; top-level comments answer the submission's title
    assert pairs["t1_c1"]["query"] == "best movie ?" and pairs["t1_c1"]["response"] == "inception happy"
    assert pairs["t1_c2"]["query_id"] == "t1_c1" and pairs["t1_c2"]["response"] == "agreed !"
    assert pairs["t1_c6"]["query"] == "orphan reply"  # an orphan can still be a query
    assert set(pairs) == {"t1_c1", "t1_c2", "t1_c4", "t1_c6"}
    # c3's response has 12 tokens > 5; c5's parent is missing
    assert drops == sorted([
        "dropped-response-too-long", "dropped-missing-parent",
        "multi-turn-dropped-too-long",  # s -> c1 -> c3 (c3 too long)
        "multi-turn-dropped-too-few-turns",  # s -> c4
        "multi-turn-dropped-broken-chain",  # c6 -> c5 -> (gone)
    ])
    assert convs == {
        "t1_c2": {"id": "t1_c2", "thread_id": "t3_s", "comment_ids": ["t3_s", "t1_c1", "t1_c2"],
                  "turns": ["best movie ?", "inception happy", "agreed !"], "created_utc": 102}
    }


def test_empty_after_cleaning_is_dropped():
    posts = [Post("t3", "t3_s", "t3_s", "", 1, "Title"), Post("t1", "t1_a", "t3_s", "t3_s", 2, "**   **")]
    nodes, _ = prepare_thread("t3_s", posts, CONFIG)
    out = list(thread_examples("t3_s", nodes, _vocab(nodes), CONFIG))
    assert Dropped("dropped-empty-after-cleaning") in out
    assert not [o for o in out if isinstance(o, Kept) and o.value.config == "single_turn"]


def test_query_too_long():
    posts = [Post("t3", "t3_s", "t3_s", "", 1, "one two three four five six seven eight nine"),
             Post("t1", "t1_a", "t3_s", "t3_s", 2, "short")]
    nodes, _ = prepare_thread("t3_s", posts, CONFIG)
    out = list(thread_examples("t3_s", nodes, _vocab(nodes), CONFIG))
    assert Dropped("dropped-query-too-long") in out


def test_response_numbers_count_kept_responses_per_query():
    rows = [SingleTurnRow(i, "t3_s", q, i, "q", "r", 1) for i, q in (("t1_b", "t3_s"), ("t1_a", "t3_s"), ("t1_c", "t1_a"))]
    out = add_response_numbers(rows)
    assert [(r.id, r.response_number) for r in out] == [("t1_a", 2), ("t1_b", 2), ("t1_c", 1)]


def test_split_and_shard_hash_the_thread_id():
    ids = [f"t3_{i:05d}" for i in range(2000)]
    splits = [split_of(i, 0.15) for i in ids]
    assert splits == [split_of(i, 0.15) for i in ids]  # stable
    assert 0.12 < splits.count("validation") / len(ids) < 0.18
    assert all(split_of(i, 0.0) == "train" for i in ids[:50])
    assert {shard_of(i, 4) for i in ids} == {0, 1, 2, 3} and shard_of("t3_x", 1) == 0


@pytest.mark.parametrize("bad", [{"vocab_size": 0}, {"validation_fraction": 1.0}, {"tokenizer": "spacy"}, {"subreddits": ()},
                                 {"unk_token": ""}, {"unk_token": "un k"}, {"unk_token": "<unk>\n"}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        CorpusConfig(**bad)


def test_pack_rows_round_trip_keeps_each_text_once():
    from lsdscc.corpus.threads import MultiTurnRow, SingleTurnRow, pack_rows, unpack_rows

    pairs = [SingleTurnRow("t1_b", "t3_s", "t3_s", "t1_b", "best movie", "heat", 7),
             SingleTurnRow("t1_a", "t3_s", "t3_s", "t1_a", "best movie", "alien", 5),
             SingleTurnRow("t1_c", "t3_s", "t1_a", "t1_c", "alien", "agreed", 9)]
    convs = [MultiTurnRow("t1_c", "t3_s", ["t3_s", "t1_a", "t1_c"], ["best movie", "alien", "agreed"], 9),
             MultiTurnRow("t1_d", "t3_s", ["t3_s", "t1_a", "t1_d"], ["best movie", "alien", ""], 11)]
    for config, rows in (("single_turn", pairs), ("multi_turn", convs)):
        packed = pack_rows("t3_s", rows)
        assert unpack_rows(config, packed) == rows
        assert sorted(packed[1]) == sorted({i for r in rows for i in (r[0], *(r[2:4] if config == "single_turn" else r[2]))})
        assert sum(t == "best movie" for t in packed[2]) == 1  # a shared post's text travels once
    assert unpack_rows("single_turn", pack_rows("t3_s", [])) == []


def test_smallest_ref_keeps_the_row_smallest_id_keeps():
    from functools import reduce

    from lsdscc.corpus.threads import SingleTurnRow, smallest_id, smallest_ref

    # rows sharing a content key: same text; an id may repeat across threads (hostile dumps)
    rows = [SingleTurnRow(i, th, "t1_p", i, "q", "r", n)
            for i, th, n in (("t1_b", "t3_a", 1), ("t1_a", "t3_z", 2), ("t1_a", "t3_c", 3), ("t1_c", "t3_b", 0))]
    for order in (rows, rows[::-1], rows[1:] + rows[:1]):
        kept = reduce(smallest_id, order, None)
        assert smallest_ref([(r.id, r.thread_id) for r in order]) == (kept.id, kept.thread_id) == ("t1_a", "t3_c")


def test_final_texts_are_counted_as_their_split():
    # thread_pairs / thread_conversations count a final text's tokens without splitting it:
    # apply_vocabulary's texts are tokens joined by single spaces, whatever the cleaned text
    # and the vocabulary (splits, non-ASCII tokens dropped, <unk>).
    import random

    from lsdscc.corpus.threads import Node, apply_vocabulary, token_count
    from lsdscc.corpus.vocab import Vocabulary

    rng = random.Random(3)
    words = ["a", "bb", "ccc", "é", "naïve", "<unk>", "xy", "!", "--", "''"]
    vocabulary = Vocabulary(splits={"ccc": ("c", "cc"), "xy": ("é",)}, kept=frozenset({"a", "bb", "c", "!"}),
                            unk_token="<unk>", counts={})
    for i in range(500):
        text = rng.choice(["", " ", "\t"]).join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        (node,) = apply_vocabulary([Node(f"t1_{i}", "", 0, text)], vocabulary)
        assert token_count(node.text) == len(node.text.split()), repr(node.text)


def test_pairs_and_conversations_of_one_thread_after_another_see_their_own_texts():
    # the two steps share the last thread's index (by identity, tuples only): another tuple, or a
    # list changed in place between two calls, is indexed again
    from lsdscc.corpus.threads import Node, thread_conversations, thread_pairs

    config = CorpusConfig(min_turns=2)

    def nodes(reply):
        return (Node("t3_a", "", 1, "what do you think"), Node("t1_b", "t3_a", 2, reply))

    def responses(outcomes):
        return [o.value.response for o in outcomes if isinstance(o, Kept)]

    first, second = nodes("great film"), nodes("boring film honestly")
    assert responses(thread_pairs("t3_a", first, config)) == ["great film"]
    assert responses(thread_pairs("t3_a", second, config)) == ["boring film honestly"]
    turns = [o.value.turns for o in thread_conversations("t3_a", second, config) if isinstance(o, Kept)]
    assert turns == [["what do you think", "boring film honestly"]]
    changing = list(first)
    assert responses(thread_pairs("t3_a", changing, config)) == ["great film"]
    changing[1] = Node("t1_b", "t3_a", 2, "a " * 400)  # now too long a response
    assert responses(thread_pairs("t3_a", changing, config)) == []
