"""Context rules of MultiRef-DD and DD++ (dailydialog_pp/contexts.py; docs/algorithms.md sections 4, 5)."""

import pytest

from dailydialog_pp.contexts import (
    ChunkOptions, chunk_spans, cluster_duplicates, ddpp_contexts, multiref_contexts, multiref_matches, pick_released)
from dailydialog_pp.normalize import TextOptions
from dailydialog_pp.readers import Dialogue, MultirefDialogue, ReleasedContext

# Golden spans: the (dialogue length, chunk start, context length) triples most frequent in the
# released DD++ dev/test files when matched back to DailyDialog (see the report / provenance):
# 9 turns -> contexts at 0 (3 turns) and 4 (4 turns); 10 -> 0, 4, 7 (2 turns); 11 -> 0, 4, 8 (2);
# 12 -> 0, 4, 8; 13 -> 0, 4, 8 (4); 14 -> 0, 4, 8, 11 (2). Dialogues under 8 turns: one context.
SPANS = [
    (0, [], ChunkOptions()),
    (1, [], ChunkOptions()),
    (2, [(0, 2)], ChunkOptions()),
    (7, [(0, 7)], ChunkOptions()),
    (8, [(0, 4), (4, 8)], ChunkOptions()),
    (9, [(0, 4), (4, 9)], ChunkOptions()),
    (10, [(0, 4), (4, 8), (7, 10)], ChunkOptions()),
    (11, [(0, 4), (4, 8), (8, 11)], ChunkOptions()),
    (12, [(0, 4), (4, 8), (8, 12)], ChunkOptions()),
    (13, [(0, 4), (4, 8), (8, 13)], ChunkOptions()),
    (14, [(0, 4), (4, 8), (8, 12), (11, 14)], ChunkOptions()),
    (7, [(0, 3), (3, 6), (4, 7)], ChunkOptions(long_dialogue=6, chunk_length=3, min_chunk=3, max_chunk=3)),
    (9, [(0, 6), (6, 9)], ChunkOptions(chunk_length=6, min_chunk=3, max_chunk=8)),
    (20, [(0, 20)], ChunkOptions(long_dialogue=21)),
]


@pytest.mark.parametrize("n,spans,options", SPANS)
def test_chunk_spans(n, spans, options):
    assert chunk_spans(n, options) == spans


@pytest.mark.parametrize("kwargs", [dict(chunk_length=1), dict(min_chunk=5), dict(max_chunk=3), dict(long_dialogue=1)])
def test_chunk_options_reject_bad_values(kwargs):
    with pytest.raises(ValueError):
        ChunkOptions(**kwargs)


def _dialogue(turns, split="test", index=0):
    return Dialogue(f"{split}_{index}", split, index, tuple(turns), (1,) * len(turns), (0,) * len(turns))


def test_multiref_contexts_cut_after_each_turn_but_the_last():
    d = _dialogue(["Hi ?", "Yes .", "Ok ."], index=4)
    rows = multiref_contexts(d)
    assert [r["id"] for r in rows] == ["4_0", "4_1"]
    assert rows[0]["context"] == ["Hi ?"] and rows[0]["references"] == ["Yes ."]
    assert rows[1]["context"] == ["Hi ?", "Yes ."] and rows[1]["references"] == ["Ok ."]
    assert all(r["dialogue_id"] == "test_4" for r in rows)


def test_multiref_contexts_join_released_references():
    d = _dialogue(["It ’ s late .", "Go home .", "Ok ."])
    rel = MultirefDialogue(0, ("It's late.", "Go home .", "Ok ."),
                           (("go home .", "r1", "  r2   x ", "", "r4"), ("ok .", "s1", "s2", "s3", "s4")))
    assert multiref_matches(d, rel)
    rows = multiref_contexts(d, rel, TextOptions(curly_quotes=True))
    assert rows[0]["context"] == ["It ' s late ."]
    assert rows[0]["references"] == ["Go home .", "r1", "r2 x", "r4"]  # empty dropped, spaces collapsed
    assert rows[1]["references"] == ["Ok .", "s1", "s2", "s3", "s4"]


def test_multiref_matches_rejects_other_text_and_length():
    d = _dialogue(["A .", "B ."])
    assert not multiref_matches(d, MultirefDialogue(0, ("A .", "C ."), (("c",),)))
    assert not multiref_matches(d, MultirefDialogue(0, ("A .",), ()))


def test_ddpp_contexts_one_per_chunk():
    d = _dialogue([f"u{i} ." for i in range(10)], split="train", index=3)
    rows = ddpp_contexts(d)
    assert [r["id"] for r in rows] == ["train_3_0", "train_3_1", "train_3_2"]
    assert rows[0]["context"] == ["u0 .", "u1 .", "u2 ."] and rows[0]["response"] == "u3 ."
    assert rows[2]["context"] == ["u7 .", "u8 ."] and rows[2]["response"] == "u9 ."
    short = ddpp_contexts(_dialogue(["a", "b", "c"]))
    assert len(short) == 1 and short[0]["context"] == ["a", "b"] and short[0]["response"] == "c"
    assert ddpp_contexts(_dialogue(["alone"])) == []


def test_pick_representative_keeps_first_in_release_order():
    a, b, c = _dialogue(["x"], "test", 0), _dialogue(["x"], "train", 5), _dialogue(["x"], "train", 2)
    ((kept, removed),) = cluster_duplicates([a, b, c])  # one group: the same key
    assert kept.dialogue_id == "train_2"
    assert [d.dialogue_id for d in removed] == ["train_5", "test_0"]


def test_pick_released_prefers_files_with_negatives():
    pos = ReleasedContext("ddpp_positives", 1, ("a",), ("p",), line=1)
    dev = ReleasedContext("ddpp_dev", 9, ("a",), ("p",), ("n",), ("r",), line=10)
    assert pick_released([pos, dev]) is dev


def test_multiref_first_reference_from_release():
    d = _dialogue(["It ’ s late .", "Go home ."])
    rel = MultirefDialogue(0, ("It's late.", "Go home ."), (("go home .", "r1"),))
    assert multiref_contexts(d, rel, released_first=True)[0]["references"] == ["go home .", "r1"]
    assert multiref_contexts(d, None, released_first=True)[0]["references"] == ["Go home ."]


def test_cluster_duplicates_exact_and_near():
    a = _dialogue(["I have 2 cats .", "What colour are they ?", "Grey ."], "train", 1)
    b = _dialogue(["I have two cats .", "What color are they ?", "Gray ."], "train", 0)
    c = _dialogue(["I have 2 cats .", "What colour are they , then ?", "Grey ."], "test", 0)  # edited copy
    d = _dialogue(["Something else entirely .", "Yes ."], "train", 2)
    exact = cluster_duplicates([a, b, c, d])
    assert [(k.dialogue_id, [r.dialogue_id for r in rm]) for k, rm in exact] == [
        ("train_0", ["train_1"]), ("train_2", []), ("test_0", [])]
    near = cluster_duplicates([a, b, c, d], near_ratio=0.8)
    assert [(k.dialogue_id, [r.dialogue_id for r in rm]) for k, rm in near] == [
        ("train_0", ["train_1", "test_0"]), ("train_2", [])]
    assert len(cluster_duplicates([a, b, c, d], near_ratio=0.99)) == 3


@pytest.mark.parametrize("turns, expected", [
    ((), []),
    (("only",), []),
    (("a ’ b", "c", "d"), [("7_0", ["a ’ b"], "c"), ("7_1", ["a ’ b", "c"], "d")]),
])
def test_context_pairs_cut_after_each_turn(turns, expected):
    from dailydialog_pp.contexts import context_pairs

    dialogue = Dialogue("train_7", "train", 7, turns)
    rows = context_pairs(dialogue)
    assert [(r["id"], r["context"], r["response"]) for r in rows] == expected


def test_context_pairs_apply_the_text_options_and_the_step_counts_by_split():
    from dailydialog_pp.contexts import context_pairs
    from dailydialog_pp.steps import dialogue_pairs

    dialogue = Dialogue("test_3", "test", 3, ("It ’ s ok", "Yes ."))
    assert context_pairs(dialogue, TextOptions(curly_quotes=True, lowercase=True))[0]["context"] == ["it ' s ok"]
    outcome = dialogue_pairs(dialogue, TextOptions())
    assert outcome.counts == {"contexts/pairs-test": 1} and outcome.rows[0]["split"] == "test"
    assert outcome.rejected == []
