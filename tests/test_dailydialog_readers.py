"""Readers of the three releases (dailydialog_pp/readers.py), on hand-made files in tests/data/dailydialog."""

import pytest

from dailydialog_pp.readers import (
    RawLine, RejectedRecord, parse_ddpp, parse_dialogue, parse_multiref, read_dailydialog, read_ddpp, read_multiref,
    split_utterances)
from multiref.util.errors import UserError
from tests.helpers import data_path

DD = data_path("dailydialog", "dd")


def _parse_all(lines, parse):
    ok, bad = [], []
    for raw in lines:
        try:
            ok.append(parse(raw))
        except RejectedRecord as rej:
            bad.append(rej)
    return ok, bad


def test_split_utterances():
    assert split_utterances("A ? __eou__ B . __eou__") == ["A ?", "B ."]
    assert split_utterances("A ? __eou__ B .") == ["A ?", "B ."]


def test_read_dailydialog_parses_acts_emotions_and_rejects_label_mismatch():
    lines = read_dailydialog(str(DD))
    assert [(r.extra[0], r.extra[1]) for r in lines][:4] == [("train", 0), ("train", 1), ("train", 2), ("train", 3)]
    ok, bad = _parse_all(lines, parse_dialogue)
    assert len(ok) == 8
    assert [r.reason for r in bad] == ["act-count-mismatch"]
    assert bad[0].dead_letter()["line"] == 5 and bad[0].dead_letter()["file"].endswith("dialogues_train.txt")
    where = {d.dialogue_id: d for d in ok}
    assert where["test_1"].turns == ("Where is the bank ?", "It ’ s on Main Street .", "Thanks !", "You ’ re welcome .")
    assert where["test_1"].acts == (2, 1, 1, 1) and where["test_1"].emotions == (0, 0, 4, 4)


@pytest.mark.parametrize("text,act,emotion,reason", [
    ("A . __eou__ B . __eou__", "1 ", "0 0 ", "act-count-mismatch"),
    ("A . __eou__ B . __eou__", "1 1 ", "0 ", "emotion-count-mismatch"),
    ("A . __eou__ B . __eou__", "1 x ", "0 0 ", "bad-act-label"),
    ("A . __eou__ B . __eou__", "1 9 ", "0 0 ", "bad-act-label"),
    ("A . __eou__ B . __eou__", "1 1 ", "0 8 ", "bad-emotion-label"),
    ("A . __eou__ B . __eou__", None, "0 0 ", "missing-act-line"),
    ("", "", "", "empty-dialogue"),
    ("A . __eou__  __eou__ B . __eou__", "1 1 1 ", "0 0 0 ", "empty-utterance"),
])
def test_parse_dialogue_rejections(text, act, emotion, reason):
    with pytest.raises(RejectedRecord) as info:
        parse_dialogue(RawLine("f.txt", 3, text, "dailydialog", ("train", 2, act, emotion)))
    assert info.value.reason == reason


def test_read_dailydialog_errors():
    with pytest.raises(UserError, match="not found"):
        read_dailydialog(str(DD / "nope"))
    with pytest.raises(UserError, match="no DailyDialog split files"):
        read_dailydialog(str(data_path("dailydialog", "ddpp")))


def test_read_multiref_and_reject_bad_line():
    lines = read_multiref(str(data_path("dailydialog", "multiref.jsonl")))
    ok, bad = _parse_all([(i, r) for i, r in enumerate(lines)], lambda item: parse_multiref(item[1], item[0]))
    assert [m.index for m in ok] == [0, 1, 2]
    assert ok[0].responses[0][0] == "fine , thanks . and you ?" and len(ok[0].responses) == 2
    assert [(r.reason, r.raw.line) for r in bad] == [("invalid-json", 4)]


@pytest.mark.parametrize("text,reason", [
    ('[1, 2]', "not-an-object"),
    ('{"dialogue": []}', "bad-dialogue"),
    ('{"dialogue": [{"text": "a"}, {"text": "b"}]}', "bad-responses"),
    ('{"dialogue": [{"text": "a"}], "index": -1}', "bad-index"),
])
def test_parse_multiref_rejections(text, reason):
    with pytest.raises(RejectedRecord) as info:
        parse_multiref(RawLine("m.json", 1, text, "multiref"), 0)
    assert info.value.reason == reason


def test_read_ddpp_id_and_dialog_id():
    lines = read_ddpp(str(data_path("dailydialog", "ddpp")))
    ok, bad = _parse_all(lines, parse_ddpp)
    got = sorted((r.source, r.release_id, r.context[0]) for r in ok)
    assert got == [("ddpp_dev", 0, "A1."), ("ddpp_dev", 1, "Not in DailyDialog"),
                   ("ddpp_positives", 0, "I have 2 cats.")]
    dev0 = [r for r in ok if r.source == "ddpp_dev" and r.release_id == 0][0]
    assert dev0.adversarial_negative_responses == ("a1", "a2", "a3", "a4", "a5")
    assert [r.reason for r in bad] == ["bad-context"]


def test_parse_ddpp_requires_negatives_outside_positives_file():
    raw = RawLine("dev.json", 1, '{"id": 1, "context": ["a"], "positive_responses": ["p"]}', "ddpp_dev")
    with pytest.raises(RejectedRecord) as info:
        parse_ddpp(raw)
    assert info.value.reason == "bad-adversarial_negative_responses"
    raw = RawLine("p.json", 1, '{"dialog_id": "x", "context": ["a"], "positive_responses": ["p"]}', "ddpp_positives")
    with pytest.raises(RejectedRecord, match="bad-id"):
        parse_ddpp(raw)


def test_read_ddpp_errors():
    with pytest.raises(UserError, match="no DailyDialog\\+\\+ files"):
        read_ddpp(str(DD))
