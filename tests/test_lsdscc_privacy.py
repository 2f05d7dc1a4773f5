"""Deletion wins; no usernames, removal markers or partial addresses in anything published
(issue 35, faults 16-20).

- A post deleted or removed in any copy (a removal marker of any era as its body or title, a
  field of the first retrieval, ``_meta``) is dropped before any check that could make it a
  dead letter, and its tombstone leaves out every other copy of it, whatever the order of the
  files: checked per record (``normalize``, ``ReadPosts``), per thread (``resolve_thread`` in
  every order) and in two real builds with the files in both orders.
- Usernames in every form (``u/``, ``/u/``, ``/user/``, any case, escaped, with markdown or
  entities around or in them) leave neither the published text, with or without the C fast
  path, nor the dead letters.
- Dead letters show no post's text, and their excerpt is redacted before it is cut.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest

from lsdscc.corpus import cleaning
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import DELETED, TITLE_ONLY, Post, dead_letter, normalize, redact
from lsdscc.corpus.threads import resolve_thread
from tests.test_lsdscc_hostile import read_file

CONFIG = CorpusConfig()


def _comment(cid="c", body="a reply", **extra):
    return dict({"id": cid, "body": body, "author": "x", "parent_id": "t3_s", "link_id": "t3_s",
                 "subreddit": "movies", "created_utc": 1500000000}, **extra)


def _submission(sid="s", title="A title", selftext="", **extra):
    return dict({"id": sid, "title": title, "selftext": selftext, "author": "x", "subreddit": "movies",
                 "created_utc": 1500000000}, **extra)


# --- removal markers of every era -------------------------------------------------------------
MARKERS = {  # marker -> drop reason
    "[deleted]": "deleted", "[removed]": "removed", "[deleted by user]": "deleted",
    "[removed by reddit]": "removed", "[ Removed by Reddit ]": "removed", "  [Deleted]\n": "deleted",
    "[REMOVED]": "removed",
    "[ Removed by Reddit on account of violating the [content policy](/help/contentpolicy). ]": "removed",
    "[ Removed by reddit in response to a copyright notice. ]": "removed",
}


@pytest.mark.parametrize("marker", sorted(MARKERS))
def test_a_removal_marker_of_any_era_drops_the_post_and_leaves_a_tombstone(marker):
    reason = MARKERS[marker]
    assert normalize(_comment(body=marker), CONFIG) == Dropped(reason, Post(DELETED, "t1_c", "t3_s", "", 0, ""))
    assert normalize(_submission(title=marker), CONFIG) == Dropped(reason, Post(DELETED, "t3_s", "t3_s", "", 0, ""))
    # a submission whose self-text is gone keeps its title only, marked so that it wins over other copies
    assert normalize(_submission(selftext=marker), CONFIG) == Kept(Post(TITLE_ONLY, "t3_s", "t3_s", "", 1500000000,
                                                                       "A title"))


@pytest.mark.parametrize("body", ["[removed] but I saw it first", "[deleted]s", "removed", "[x] [deleted]",
                                  "I [deleted] my old account"])
def test_a_text_that_only_mentions_a_marker_is_kept(body):
    assert normalize(_comment(body=body), CONFIG) == Kept(Post("t1", "t1_c", "t3_s", "t3_s", 1500000000, body))


FIELD_MARKERS = [  # fields of the first retrieval (the dumps' schema statistics per era)
    ({"removed_by_category": "moderator"}, "removed"), ({"removed_by_category": "reddit"}, "removed"),
    ({"removed_by_category": "deleted"}, "deleted"), ({"removed_by_category": "author"}, "deleted"),
    ({"removed_by_category": "automod_filtered"}, "removed"), ({"removal_reason": "legal"}, "removed"),
    ({"collapsed_reason_code": "DELETED"}, "deleted"), ({"removed": True}, "removed"),
    ({"_meta": {"was_deleted_later": True}}, "deleted-later"), ({"_meta": {"removal_type": "reddit"}}, "removed-later"),
    ({"_meta": {"was_initially_deleted": True}}, "initially-deleted"),
]


@pytest.mark.parametrize("fields, reason", FIELD_MARKERS, ids=[str(f) for f, _ in FIELD_MARKERS])
def test_a_field_saying_the_post_was_taken_down_drops_it(fields, reason):
    assert normalize(_comment(**fields), CONFIG) == Dropped(reason, Post(DELETED, "t1_c", "t3_s", "", 0, ""))
    assert normalize(_submission(**fields), CONFIG).reason == reason


@pytest.mark.parametrize("fields", [{"removed_by_category": None}, {"removal_reason": None}, {"removed": False},
                                    {"collapsed_reason_code": "LOW_SCORE"}, {"_meta": {"was_deleted_later": False}}])
def test_the_same_fields_saying_nothing_keep_the_post(fields):
    assert type(normalize(_comment(**fields), CONFIG)) is Kept


# --- fault 16: deletion is checked before rejection -----------------------------------------
BAD = {"created-utc-text": {"created_utc": "yesterday"}, "created-utc-nan": {"created_utc": float("nan")},
       "created-utc-ms": {"created_utc": 1500000000000}, "author-number": {"author": 7},
       "body-too-long": {"body": "secret text " * 4000}, "parent-not-an-id": {"parent_id": "not an id!"}}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_deleted_record_is_dropped_not_a_dead_letter(tmp_path, case):
    record = _comment(body="secret text", **{"_meta": {"was_deleted_later": True}})
    record.update(BAD[case])
    path = tmp_path / "RC_deleted.jsonl"
    path.write_text(json.dumps(record) + "\n" + json.dumps(_comment("ok", "fine")) + "\n")
    posts, letters, counts = read_file(path)
    assert letters == [] and counts["dropped-deleted-later"] == 1 and "secret" not in json.dumps(posts)
    assert [post[0] for _, post in posts] == ["deleted", "t1"]  # its tombstone, and the other comment
    # kept on purpose (--keep-deleted-later), a malformed one is a dead letter, without its text
    posts, letters, counts = read_file(path, CorpusConfig(drop_deleted_later=False))
    assert len(letters) == 1 and "secret" not in json.dumps(letters)


# --- fault 17: one deleted copy removes every copy, whatever the order ------------------------
def test_resolve_thread_deletion_wins_in_every_order():
    sub = Post("t3", "t3_s", "t3_s", "", 1, "title")
    copies = [Post("t1", "t1_a", "t3_s", "t3_s", 5, "secret first copy"),
              Post("t1", "t1_a", "t3_s", "t3_s", 9, "secret later copy, longer"),
              Post(DELETED, "t1_a", "t3_s", "", 0, ""),
              Post("t1", "t1_b", "t3_s", "t1_a", 6, "a reply"),
              Post("t3", "t3_s", "t3_s", "", 3, "title\n\nsecret self-text"),
              Post(TITLE_ONLY, "t3_s", "t3_s", "", 2, "title")]
    results = set()
    for order in itertools.permutations(copies + [sub]):
        posts, counts, rejected = resolve_thread("t3_s", order)
        results.add((posts, tuple(sorted(counts.items()))))
    ((posts, counts),) = results
    assert [p.id for p in posts] == ["t1_b", "t3_s"] and "secret" not in repr(posts)
    assert posts[1].text == "title" and dict(counts)["dropped-deleted-in-another-copy"] == 1


def test_a_thread_of_tombstones_only_is_no_thread():
    from pipelines.lsdscc.transforms import ResolveThread

    dofn = ResolveThread(encoded=False)
    dofn.start_bundle()
    assert list(dofn.process(("t3_s", [Post(DELETED, "t1_a", "t3_s", "", 0, "")]))) == []
    assert list(dofn.process(("t3_s", [Post("t1", "t1_a", "t3_s", "t3_s", 1, "x")])))[-1] == (
        "t3_s", (Post("t1", "t1_a", "t3_s", "t3_s", 1, "x"),))


def _dumps(folder):
    """Two dump files: each deleted post is deleted in one file and has its text in the other,
    in both directions; thread s2's self-text is deleted in one file only."""
    a = [_submission("s1", "Which movie surprised you"), _submission("s2", "Best sequel ever made",
                                                                   "secret self text about sequels"),
         _comment("c1", "secret alpha reply text"), _comment("c2", "[deleted]"),
         _comment("c3", "secret gamma reply text"), _comment("c4", "the ending surprised me a lot"),
         _comment("c5", "me too the ending was great", parent_id="t1_c4"),
         _comment("c6", "secret delta text", created_utc="yesterday"),
         _comment("c7", "sequels are usually worse", link_id="t3_s2", parent_id="t3_s2")]
    b = [_comment("c1", "[deleted]", author="[deleted]"),
         _comment("c2", "secret beta reply text"),
         _comment("c3", "secret gamma reply text", _meta={"was_deleted_later": True}),
         _comment("c6", "[ Removed by Reddit ]"),
         _submission("s2", "Best sequel ever made", "[deleted]"),
         _comment("c8", "no sequel is better than the first", link_id="t3_s2", parent_id="t3_s2"),
         _comment("c9", "[ Removed by Reddit ]", parent_id="t1_c4"),
         _comment("c9", "secret epsilon under c4", parent_id="t1_c4")]
    folder.mkdir()
    for name, records in (("RC_a.jsonl", a), ("RC_b.jsonl", b)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    return [str(folder / "RC_a.jsonl"), str(folder / "RC_b.jsonl")]


@pytest.fixture(scope="module")
def two_orders(tmp_path_factory):
    root = tmp_path_factory.mktemp("deletion")
    inputs = _dumps(root / "in")
    outs = []
    for name, order in (("ab", inputs), ("ba", inputs[::-1])):
        out = root / name
        done = subprocess.run([sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--skip-testset",
                               "--validation-fraction", "0", "--output", str(out), "--input", order[0],
                               "--input", order[1]],
                              capture_output=True, text=True, timeout=300, env={**os.environ, "MULTIREF_DEBUG": ""})
        assert done.returncode == 0, done.stderr[-3000:]
        outs.append(out)
    return outs


def _published(out) -> str:
    import pyarrow.parquet as pq

    texts = [json.dumps(pq.read_table(path).to_pylist()) for path in sorted(out.rglob("*.parquet"))]
    return "\n".join(texts) + (out / "rejected" / "rejected.jsonl").read_text()


def test_a_deleted_copy_in_either_file_removes_the_post_from_the_build(two_orders):
    for out in two_orders:
        published = _published(out)
        assert "secret" not in published  # c1, c2, c3, c6, c9's text, s2's self-text
        for gone in ("t1_c1", "t1_c2", "t1_c3", "t1_c6", "t1_c9"):
            assert gone not in published
        assert "t1_c5" in published and "t1_c7" in published and "sequel" in published  # the rest is there
        counts = json.loads((out / "stats.json").read_text())["counts"]
        assert counts["dropped-deleted-in-another-copy"] == 4  # c1, c2, c3, c9 (c6's other copy is a dead letter)
        assert "in another: 4 left out (any deleted copy wins)" in (out / "README.md").read_text()  # the card
        letters = [json.loads(x) for x in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
        assert [(x["reason"], x["line"]) for x in letters] == [("wrong-type", 8)]


def test_the_order_of_the_files_changes_no_byte(two_orders):
    ab, ba = two_orders
    files = sorted(p.relative_to(ab) for p in ab.rglob("*") if p.suffix in (".parquet", ".jsonl"))
    assert files and files == sorted(p.relative_to(ba) for p in ba.rglob("*") if p.suffix in (".parquet", ".jsonl"))
    for name in files:
        assert (ab / name).read_bytes() == (ba / name).read_bytes(), name


# --- fault 18 and 20: usernames in any form -------------------------------------------------
FORMS = ["u/SecretUserGamma", "/u/SecretUserGamma", "/user/SecretUserGamma", "U/SECRETUSERGAMMA", "User/SecretUserGamma",
         "_u/SecretUserGamma_", "**u/SecretUserGamma**", "*/u/SecretUserGamma*", "~~u/SecretUserGamma~~",
         "u\\/SecretUserGamma", "u/Secret\\_User\\_Gamma", "(u/SecretUserGamma)", "reddit.com/user/SecretUserGamma",
         "[u/SecretUserGamma](https://www.reddit.com/u/SecretUserGamma)", "u&#47;SecretUserGamma",
         "&#117;/SecretUserGamma", "u&amp;#x2F;SecretUserGamma", "u**/**SecretUserGamma", "^(u)/SecretUserGamma",
         "&gt; quoting u/SecretUserGamma", "__u__/SecretUserGamma"]


def _flat(tokens) -> str:
    return "".join(tokens).lower()


@pytest.mark.parametrize("native", [True, False], ids=["c-fast-path", "python"])
@pytest.mark.parametrize("convention", ["lsdscc", "treebank"])
def test_no_username_form_survives_cleaning(native, convention):
    for form in FORMS:
        tokens = cleaning.clean_and_tokenize(f"ask {form} about it", convention=convention, native=native)
        assert "secret" not in _flat(tokens) and "gamma" not in _flat(tokens), (form, tokens)
        assert tokens[0] == "ask" and tokens[-2:] == ["about", "it"], (form, tokens)
        assert "secret" not in cleaning.clean_text(f"ask {form} about it", convention).lower()


def test_words_that_only_look_like_a_username_stay():
    for text, kept in [("menu/item", "item"), ("you/they", "they"), ("thank u! and u.", "u"), ("emu/x", "emu")]:
        assert kept in cleaning.clean_and_tokenize(text), text


@pytest.mark.parametrize("form", [f for f in FORMS if "&" not in f and "**/**" not in f and "(u)" not in f
                                  and "__u__" not in f])  # (a letter shows no text; these are mentions once rendered)
def test_no_username_form_survives_a_dead_letter(form):
    letter = dead_letter("/data/RC_x.jsonl", 1, "wrong-type", f"'subreddit' is {form}, not a name",
                         {"subreddit": form, "id": "c1", "body": f"ask {form}"})
    assert "secret" not in json.dumps(letter).lower() and "<user>" in letter["detail"], letter


# --- fault 20: redaction runs before the cut ------------------------------------------------
FILLER = "u/" + "n" * 40 + " "  # 43 characters that redaction makes 7 ("<user> "): what is read shrinks


def _straddling(secret: str, start: int) -> str:
    """``secret`` at ``start``, after mentions (so the redacted excerpt reaches that far), then more words."""
    head = FILLER * (start // len(FILLER))
    head += "a" * (start - len(head))
    return head + " " * (head[-1:] == "a") + secret + " and more words" * 20


@pytest.mark.parametrize("secret", ["first.last@example-mail.com", "u/SecretUserGamma", "/user/SecretUserGamma",
                                    "x" * 700 + "@example.com"], ids=["email", "mention", "user", "email-of-700"])
def test_nothing_private_straddles_the_cut(secret):
    for start in range(1990 - len(secret), 2005):
        text = _straddling(secret, start)
        for out in (redact(text, fields_removed=True), redact(text, 300, fields_removed=True)):
            assert "example" not in out and "first" not in out and "xxxxx" not in out, (start, out[-60:])
            assert "SecretUser" not in out and "/Secret" not in out and "/user" not in out, (start, out[-60:])
    assert "<email>" in redact(_straddling("first.last@example-mail.com", 1990), fields_removed=True)
    detail = _straddling("first.last@example-mail.com", 1190)  # a detail's excerpt: 1,200 characters read
    assert "first" not in dead_letter(None, None, "too-long", detail, {})["detail"]
