"""The praw crawler (lsdscc/crawl/crawler.py, GitHub issue #3), driven through REAL praw/prawcore
against the fake Reddit server of tests/fake_reddit.py on 127.0.0.1.

Expected records come from the fixture the server serves (the ground truth), from a
hand-written worked example (tests/data/crawl/tiny_thread.json -> expected_*.jsonl), and
from an uninterrupted crawl for the resume tests (same clock -> byte-identical files).
"""

from __future__ import annotations

import json
import logging
import os
import random

import pytest

from lsdscc.crawl import crawler as C
from multiref_cli import main
from multiref.util.errors import UserError
from tests.fake_reddit import (ACCESS_TOKEN, CLIENT_ID, CLIENT_SECRET, FakeReddit, Thread, make_threads)
from tests.helpers import data_path

NOW = 1_800_000_000
FAST = C.RetryPolicy(max_retries=3, backoff=0.01, seed=0)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Credentials in the environment only; no praw.ini anywhere praw looks; a fresh praw config."""
    import praw.config

    for name in ("praw_client_id", "praw_client_secret", "praw_user_agent", "praw_site", "praw_username",
                 "praw_password", "praw_refresh_token"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.delenv("APPDATA", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(praw.config.Config, "CONFIG", None)  # praw caches praw.ini per process
    monkeypatch.setenv("praw_client_id", CLIENT_ID)
    monkeypatch.setenv("praw_client_secret", CLIENT_SECRET)
    monkeypatch.setenv("praw_user_agent", "multiref-tests/0.1 by u/multiref")
    return tmp_path


@pytest.fixture
def threads():
    return make_threads()


def run_crawl(fake, out, **kwargs):
    config_kwargs = {k: kwargs.pop(k) for k in ("listing", "time_filter", "limit", "ids", "subreddit") if k in kwargs}
    config = C.CrawlConfig(output=str(out), **config_kwargs)
    kwargs.setdefault("retry_policy", FAST)
    kwargs.setdefault("progress", None)
    return C.crawl(config, reddit_url=fake.base_url, oauth_url=fake.base_url, clock=lambda: NOW, **kwargs)


def read(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def files_bytes(out):
    return {name: (out / name).read_bytes() for name in ("submissions.jsonl", "comments.jsonl")}


def expected_comment(raw: dict) -> dict:
    """The dump-schema record of a fixture comment, per docs/corpus.md#dump-schema-by-era."""
    rec = {
        "id": raw["id"], "name": "t1_" + raw["id"], "parent_id": raw["parent_id"], "link_id": raw["link_id"],
        "body": raw["body"], "author": raw["author"], "created_utc": int(raw["created_utc"]),
        "subreddit": "movies", "subreddit_id": "t5_2qh3s", "score": raw["score"],
        "distinguished": raw["distinguished"], "stickied": raw["stickied"],
        "edited": raw["edited"] if raw["edited"] is False else int(raw["edited"]),
        "controversiality": raw["controversiality"], "retrieved_on": NOW,
    }
    if "author_fullname" in raw:
        rec["author_fullname"] = raw["author_fullname"]
    return rec


# ----------------------------------------------------------------------------- full crawls


def test_listing_crawl_writes_every_comment_including_those_behind_more(env, threads):
    out = env / "out"
    with FakeReddit(threads) as fake:
        stats = run_crawl(fake, out, listing="top", time_filter="year", limit=None)
        paths = [p for _, p, _ in fake.requests]
        listing_params = [q for _, p, q in fake.requests if p == "/r/movies/top"]
    # The fixture needs every expansion praw has: morechildren and "continue this thread".
    assert paths.count("/api/morechildren/") >= 3
    assert any(p.startswith("/comments/big001/_/") for p in paths)
    assert len(listing_params) == 3 and all(q["t"] == "year" for q in listing_params)  # paged with after
    assert [q.get("after") for q in listing_params] == [None, "t3_rnd004", "t3_del003"]

    subs = read(out / "submissions.jsonl")
    # top listing order of the fake: score descending
    assert [s["id"] for s in subs] == ["big001", "rnd004", "rnd005", "del003", "emp002"]
    comments = read(out / "comments.jsonl")
    by_thread = {t.submission["id"]: t for t in threads}
    want = [expected_comment(c) for sid in [s["id"] for s in subs] for c in
            sorted(by_thread[sid].comments, key=lambda c: (int(c["created_utc"]), int(c["id"], 36)))]
    assert comments == want
    assert len(comments) == 87 and len({c["id"] for c in comments}) == 87
    assert stats.threads_crawled == 5 and stats.comments == 87 and stats.threads_skipped == 0


def test_comments_sorted_by_time_then_id_within_each_thread(env, threads):
    out = env / "out"
    with FakeReddit(threads) as fake:
        run_crawl(fake, out, listing="new", limit=None)
    comments = read(out / "comments.jsonl")
    thread_order = []
    for c in comments:
        if not thread_order or thread_order[-1] != c["link_id"]:
            thread_order.append(c["link_id"])
    assert len(thread_order) == len(set(thread_order))  # each thread's comments are contiguous
    for link in thread_order:
        keys = [(c["created_utc"], int(c["id"], 36)) for c in comments if c["link_id"] == link]
        assert keys == sorted(keys)
    # ties in created_utc exist in the fixture, so the id really breaks them
    times = [c["created_utc"] for c in comments if c["link_id"] == "t3_big001"]
    assert len(times) > len(set(times))
    for line in (out / "comments.jsonl").read_text(encoding="utf-8").splitlines():
        assert list(json.loads(line)) == sorted(json.loads(line))  # keys sorted


def test_golden_tiny_thread_matches_hand_written_records(env):
    raw = json.loads(data_path("crawl", "tiny_thread.json").read_text(encoding="utf-8"))
    out = env / "out"
    with FakeReddit([Thread(raw["submission"], raw["comments"])]) as fake:
        run_crawl(fake, out, ids=("tiny01",))
    assert (out / "submissions.jsonl").read_bytes() == data_path("crawl", "expected_submissions.jsonl").read_bytes()
    assert (out / "comments.jsonl").read_bytes() == data_path("crawl", "expected_comments.jsonl").read_bytes()


def test_ids_file_in_file_order_with_prefixes_urls_duplicates_and_missing(env, threads):
    ids = C.read_ids(str(data_path("crawl", "ids.txt")))
    assert ids == ("del003", "emp002", "rnd004", "gone99")
    out = env / "out"
    with FakeReddit(threads) as fake:
        stats = run_crawl(fake, out, ids=ids)
        assert not any(p.startswith("/r/") for _, p, _ in fake.requests)  # no listing
    assert [s["id"] for s in read(out / "submissions.jsonl")] == ["del003", "emp002", "rnd004"]
    assert read(out / "crawl_state" / "skipped.jsonl") == [{"id": "gone99", "reason": "http-404"}]
    assert stats.threads_skipped == 1 and stats.threads_crawled == 3
    deleted = [c for c in read(out / "comments.jsonl") if c["link_id"] == "t3_del003"]
    assert [c["body"] for c in deleted][:3] == ["[deleted]", "Replying to a deleted comment still counts. Très bien!",
                                                "[removed]"]
    assert deleted[0]["author"] == "[deleted]" and "author_fullname" not in deleted[0]
    sub = read(out / "submissions.jsonl")[0]
    assert sub["author"] == "[deleted]" and sub["edited"] == 1_700_007_300 and "author_fullname" not in sub


@pytest.mark.parametrize("line, message", [
    ("abc!", "ids.txt:2: not a submission id: 'abc!'"),
    ("t1_abc", "ids.txt:2: not a submission id: 't1_abc'"),
])
def test_ids_file_bad_line_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "ids.txt"
    path.write_text(f"abc123\n{line}\n", encoding="utf-8")
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        C.read_ids(str(path))


def test_ids_file_missing_or_empty(tmp_path):
    with pytest.raises(UserError, match="ids file not found"):
        C.read_ids(str(tmp_path / "nope.txt"))
    (tmp_path / "empty.txt").write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(UserError, match="no submission ids"):
        C.read_ids(str(tmp_path / "empty.txt"))


# ----------------------------------------------------------------------------- resume


def _reference(env, threads, **kwargs):
    ref = env / "reference"
    with FakeReddit(threads) as fake:
        run_crawl(fake, ref, **kwargs)
    return files_bytes(ref)


class Crash(Exception):
    pass


def test_resume_after_interruption_between_threads_never_refetches(env, threads):
    want = _reference(env, threads, listing="top", limit=None)
    out = env / "out"

    def crash_after_two(sid, n_done):
        if n_done == 2:
            raise Crash()

    with FakeReddit(threads) as fake:
        with pytest.raises(Crash):
            run_crawl(fake, out, listing="top", limit=None, on_thread_done=crash_after_two)
        first = dict(fake.thread_requests)
    assert set(first) == {"big001", "rnd004"}
    with FakeReddit(threads) as fake:
        stats = run_crawl(fake, out, listing="top", limit=None)
        second = dict(fake.thread_requests)
    assert "big001" not in second and "rnd004" not in second  # finished threads not fetched again
    assert set(second) == {"rnd005", "del003", "emp002"}
    assert stats.threads_already_done == 2 and stats.threads_crawled == 3
    assert files_bytes(out) == want  # nothing lost, nothing duplicated
    runs = read(out / "crawl_state" / "runs.jsonl")
    assert len(runs) == 2 and runs[0]["listing"] == "top" and runs[0]["limit"] is None


def test_resume_discards_records_of_a_thread_whose_commit_did_not_happen(env, threads, monkeypatch, caplog):
    want = _reference(env, threads, listing="top", limit=None)
    out = env / "out"
    real_commit = C.CrawlState._commit
    calls = []

    def dying_commit(self):
        calls.append(1)
        if len(calls) == 4:  # 1: folder created, 2-3: threads 1-2, 4: thread 3's records are on disk
            raise Crash()
        real_commit(self)

    monkeypatch.setattr(C.CrawlState, "_commit", dying_commit)
    with FakeReddit(threads) as fake:
        with pytest.raises(Crash):
            run_crawl(fake, out, listing="top", limit=None)
    monkeypatch.setattr(C.CrawlState, "_commit", real_commit)
    assert len(read(out / "submissions.jsonl")) == 3  # thread 3 was appended but never committed
    with FakeReddit(threads) as fake:
        with caplog.at_level(logging.WARNING, logger="lsdscc.crawl.crawler"):
            stats = run_crawl(fake, out, listing="top", limit=None)
        assert set(fake.thread_requests) == {"rnd005", "del003", "emp002"}
    assert "discarding" in caplog.text and "unfinished thread" in caplog.text
    assert stats.threads_already_done == 2
    assert files_bytes(out) == want


def test_resume_after_a_request_failed_mid_thread(env, threads):
    want = _reference(env, threads, listing="top", limit=None)
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(500, path="^/api/morechildren", after=1, times=99)  # the big thread's 2nd morechildren
        with pytest.raises(UserError, match=r"gave up: HTTP 500 from POST /api/morechildren/ after 0 retries"):
            run_crawl(fake, out, listing="top", limit=None, retry_policy=C.RetryPolicy(max_retries=0))
    assert (out / "submissions.jsonl").read_bytes() == b""  # the half-fetched thread left nothing
    with FakeReddit(threads) as fake:
        run_crawl(fake, out, listing="top", limit=None)
    assert files_bytes(out) == want


def test_resume_refuses_a_folder_changed_behind_its_back(env, threads):
    out = env / "out"
    with FakeReddit(threads) as fake:
        run_crawl(fake, out, ids=("del003",))
    (out / "comments.jsonl").write_bytes(b"")
    with FakeReddit(threads) as fake, pytest.raises(UserError, match="shorter .* than its committed size"):
        run_crawl(fake, out, ids=("del003",))
    other = env / "other"
    other.mkdir()
    (other / "comments.jsonl").write_text("{}\n", encoding="utf-8")
    with FakeReddit(threads) as fake, pytest.raises(UserError, match="exists but .*state.json does not"):
        run_crawl(fake, other, ids=("del003",))


# ----------------------------------------------------------------------------- rate limits and retries


def _gap_before_retry(fake, path):
    times = [t for (m, p, q), t in zip(fake.requests, fake.request_times) if p == path]
    return times[1] - times[0]


def test_429_then_success_waits_the_logged_backoff(env, threads, caplog):
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(429, path="^/comments/del003/$")
        with caplog.at_level(logging.WARNING, logger="lsdscc.crawl.crawler"):
            stats = run_crawl(fake, out, ids=("del003",), retry_policy=C.RetryPolicy(max_retries=3, backoff=0.05))
        gap = _gap_before_retry(fake, "/comments/del003/")
    assert stats.retries == 1 and stats.threads_crawled == 1
    assert "HTTP 429 from GET /comments/del003/; waiting" in caplog.text
    waited = float(caplog.text.split("waiting ")[1].split(" s")[0])
    assert 0.05 <= waited < 0.05 * 1.25 + 0.01  # first retry: backoff * [1, 1.25)
    assert gap >= 0.05
    assert len(read(out / "comments.jsonl")) == 6


def test_429_retry_after_header_is_honoured(env, threads, caplog):
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(429, path="^/comments/emp002/$", headers={"Retry-After": "0.3"})
        with caplog.at_level(logging.WARNING, logger="lsdscc.crawl.crawler"):
            run_crawl(fake, out, ids=("emp002",), retry_policy=C.RetryPolicy(max_retries=2, backoff=0.01))
        gap = _gap_before_retry(fake, "/comments/emp002/")
    assert "waiting 0.30 s before retry 1 of 2" in caplog.text
    assert gap >= 0.3


def test_500_then_success_on_morechildren(env, threads, caplog):
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(500, path="^/api/morechildren", after=2)
        with caplog.at_level(logging.WARNING, logger="lsdscc.crawl.crawler"):
            stats = run_crawl(fake, out, ids=("big001",))
        calls = [q["children"] for _, p, q in fake.requests if p == "/api/morechildren/"]
    assert "HTTP 500 from POST /api/morechildren/" in caplog.text
    assert stats.retries == 1
    assert calls[2] == calls[3]  # the same request retried, not the whole thread
    assert [c["id"] for c in read(out / "comments.jsonl")] == [
        c["id"] for c in sorted(threads[0].comments, key=lambda c: (int(c["created_utc"]), int(c["id"], 36)))]


def test_dropped_connection_is_retried(env, threads, caplog):
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(0, path="^/comments/rnd004/$")
        with caplog.at_level(logging.WARNING, logger="lsdscc.crawl.crawler"):
            run_crawl(fake, out, ids=("rnd004",))
    assert "network error" in caplog.text
    assert len(read(out / "comments.jsonl")) == 14


def test_exhausted_retries_give_a_clear_error_and_a_resumable_folder(env, threads):
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(503, path="^/comments/rnd004/$", times=10)
        with pytest.raises(UserError) as err:
            run_crawl(fake, out, ids=("del003", "rnd004"), retry_policy=C.RetryPolicy(max_retries=2, backoff=0.01))
        assert sum(p == "/comments/rnd004/" for _, p, _ in fake.requests) == 3  # 1 try + 2 retries, no more
    assert str(err.value) == ("gave up: HTTP 503 from GET /comments/rnd004/ after 2 retries; "
                              "rerun the same command to resume (finished threads are kept)")
    assert [s["id"] for s in read(out / "submissions.jsonl")] == ["del003"]


@pytest.mark.parametrize("attempt, low, high", [(0, 1.0, 1.25), (1, 2.0, 2.5), (2, 4.0, 5.0), (3, 8.0, 10.0),
                                                 (10, 300.0, 375.0)])
def test_backoff_schedule(attempt, low, high):
    policy = C.RetryPolicy(backoff=1.0, max_delay=300.0, jitter=0.25, seed=3)
    wait = policy.delay(attempt, random.Random(3))
    assert low <= wait < high
    assert wait == policy.delay(attempt, random.Random(3))  # seeded: reproducible
    assert policy.delay(attempt, random.Random(3), server_wait=1000.0) == 1000.0


def test_server_wait_reads_retry_after_and_an_empty_ratelimit_window():
    assert C._server_wait({"retry-after": "7"}) == 7.0
    assert C._server_wait({"x-ratelimit-remaining": "0.0", "x-ratelimit-reset": "42"}) == 42.0
    assert C._server_wait({"x-ratelimit-remaining": "10", "x-ratelimit-reset": "42"}) == 0.0
    assert C._server_wait({}) == 0.0


def test_prawcore_rate_limit_headers_are_respected(env, threads):
    """When the server says the window is used up (remaining 0, reset 1 s), praw waits before the next call."""
    out = env / "out"
    with FakeReddit(threads, ratelimit=("0.0", "600", "1")) as fake:
        run_crawl(fake, out, ids=("del003", "emp002"))
        api_times = [t for (m, p, q), t in zip(fake.requests, fake.request_times) if p.startswith("/comments/")]
    assert len(api_times) == 2 and api_times[1] - api_times[0] >= 0.9


# ----------------------------------------------------------------------------- credentials and CLI


def cli(fake, *args):
    return main(["lsdscc", "crawl", "--reddit-url", fake.base_url, "--oauth-url", fake.base_url, *args])


def test_missing_credentials_one_line_error(env, threads, monkeypatch, capsys):
    monkeypatch.delenv("praw_client_id")
    with FakeReddit(threads) as fake:
        assert cli(fake, "--output", str(env / "out"), "--ids", str(data_path("crawl", "ids.txt"))) == 1
        assert fake.requests == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("multiref: error: Reddit API credentials missing (client_id is not set): put client_id, "
                          "client_secret and user_agent in the [multiref] section of praw.ini")
    assert "praw_client_id" in err


def test_praw_ini_site_is_used_and_unknown_site_is_an_error(env, threads, monkeypatch, capsys):
    for name in ("praw_client_id", "praw_client_secret", "praw_user_agent"):
        monkeypatch.delenv(name)
    (env / "praw.ini").write_text(f"[multiref]\nclient_id={CLIENT_ID}\nclient_secret={CLIENT_SECRET}\n"
                                  "user_agent=multiref-tests/0.1 by u/multiref\n", encoding="utf-8")
    with FakeReddit(threads) as fake:
        assert cli(fake, "--output", str(env / "out"), "--ids", str(data_path("crawl", "ids.txt")), "--quiet") == 0
        assert fake.tokens_issued == 1
        assert cli(fake, "--output", str(env / "out2"), "--listing", "hot", "--site", "nosuchsite") == 1
    assert len(read(env / "out" / "submissions.jsonl")) == 3
    err = capsys.readouterr().err
    assert "multiref: error: praw.ini has no section [nosuchsite]" in err


def test_wrong_secret_is_reported_without_echoing_it(env, threads, monkeypatch, capsys):
    monkeypatch.setenv("praw_client_secret", "wrong-secret-3b9d")
    with FakeReddit(threads) as fake:
        assert cli(fake, "--output", str(env / "out"), "--listing", "hot") == 1
    err = capsys.readouterr().err
    assert "multiref: error: Reddit rejected the credentials (HTTP 401 from the token endpoint)" in err
    assert "wrong-secret-3b9d" not in err


def test_no_secret_in_outputs_or_logs(env, threads, capsys, caplog):
    out = env / "out"
    with FakeReddit(threads) as fake:
        fake.fail(429, path="^/comments/", after=1)
        fake.fail(502, path="^/api/morechildren", after=1)
        with caplog.at_level(logging.DEBUG):  # prawcore's and urllib3's debug logs too
            assert cli(fake, "--output", str(out), "--listing", "top", "--limit", "0", "--backoff", "0.01") == 0
    captured = capsys.readouterr()
    texts = [captured.out, captured.err, caplog.text]
    for root, _, names in os.walk(out):
        texts += [open(os.path.join(root, n), encoding="utf-8").read() for n in names]
    assert "waiting" in captured.err and "[5/5]" in captured.err  # the logs we scanned are the real ones
    for text in texts:
        assert CLIENT_SECRET not in text and ACCESS_TOKEN not in text


def test_cli_progress_and_counts_on_stderr(env, threads, capsys):
    with FakeReddit(threads) as fake:
        assert cli(fake, "--output", str(env / "out"), "--listing", "new", "--limit", "3") == 0
        assert [q["limit"] for _, p, q in fake.requests if p == "/r/movies/new"] == ["3", "3"]
    err = capsys.readouterr().err
    assert "crawl: r/movies/new, limit 3: 3 threads, 0 already done, 3 to fetch" in err
    assert "crawl: [3/3] t3_" in err
    assert len(read(env / "out" / "submissions.jsonl")) == 3
    with FakeReddit(threads) as fake:  # rerun: everything already done, nothing fetched
        assert cli(fake, "--output", str(env / "out"), "--listing", "new", "--limit", "3") == 0
        assert fake.thread_requests == {}
    assert "3 threads, 3 already done, 0 to fetch" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--listing", "hot", "--time-filter", "week"], "--time-filter applies to the top and controversial listings only"),
    (["--ids", "IDS", "--limit", "5"], "--limit applies to a listing and cannot be used with --ids"),
    (["--ids", "IDS", "--time-filter", "day"], "--time-filter applies to a listing and cannot be used with --ids"),
    (["--ids", "IDS", "--subreddit", "films"], "--subreddit applies to a listing and cannot be used with --ids"),
])
def test_cli_rejects_options_that_would_be_ignored(env, capsys, args, message):
    args = [str(data_path("crawl", "ids.txt")) if a == "IDS" else a for a in args]
    assert main(["lsdscc", "crawl", "--output", str(env / "out"), *args]) == 1
    assert message in capsys.readouterr().err


def test_cli_listing_and_ids_are_exclusive(env):
    with pytest.raises(SystemExit) as exc:
        main(["lsdscc", "crawl", "--output", "o", "--listing", "top", "--ids", "x.txt"])
    assert exc.value.code == 2


def test_unknown_subreddit_is_a_clear_error(env, threads):
    with FakeReddit(threads) as fake, pytest.raises(UserError, match=r"could not list r/nosuchsub/top.*HTTP 404"):
        run_crawl(fake, env / "out", subreddit="nosuchsub", listing="top")


def test_crawl_module_keeps_cli_startup_light():
    import subprocess
    import sys

    code = "import sys, multiref_cli.lsdscc.crawl; print(any(m.startswith(('praw', 'prawcore', 'requests')) for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


# ----------------------------------------------------------------------------- dump schema


SUB_TYPES = {"id": str, "name": str, "title": str, "selftext": str, "author": str, "created_utc": int,
             "subreddit": str, "subreddit_id": str, "num_comments": int, "score": int, "permalink": str, "url": str,
             "is_self": bool, "over_18": bool, "stickied": bool, "distinguished": (str, type(None)),
             "link_flair_text": (str, type(None)), "edited": (bool, int), "retrieved_on": int}
COM_TYPES = {"id": str, "name": str, "parent_id": str, "link_id": str, "body": str, "author": str, "created_utc": int,
             "subreddit": str, "subreddit_id": str, "score": int, "distinguished": (str, type(None)),
             "stickied": bool, "edited": (bool, int), "controversiality": int, "retrieved_on": int}


def test_records_have_the_dump_schema_fields_and_types(env, threads):
    out = env / "out"
    with FakeReddit(threads) as fake:
        run_crawl(fake, out, listing="top", limit=None)
    for path, types, prefix in ((out / "submissions.jsonl", SUB_TYPES, "t3_"), (out / "comments.jsonl", COM_TYPES, "t1_")):
        for rec in read(path):
            assert set(rec) - {"author_fullname"} == set(types)
            for key, typ in types.items():
                assert isinstance(rec[key], typ), (key, rec[key])
                if typ is int:
                    assert not isinstance(rec[key], bool)
            assert rec["name"] == prefix + rec["id"] and rec["subreddit_id"] == "t5_2qh3s"
            if "author_fullname" in rec:
                assert rec["author_fullname"].startswith("t2_") and rec["author"] != "[deleted]"
    for rec in read(out / "comments.jsonl"):
        assert rec["parent_id"][:3] in ("t1_", "t3_") and rec["link_id"].startswith("t3_")


def test_output_reads_through_the_corpus_dump_reader(env, threads):
    """H2's reader (lsdscc.corpus.sources / lsdscc.corpus.records) takes the crawl folder as a dump input."""
    from lsdscc.corpus.config import CorpusConfig
    from lsdscc.corpus.outcomes import Kept
    from lsdscc.corpus.records import normalize
    from lsdscc.corpus.sources import read_items, resolve_inputs

    out = env / "out"
    with FakeReddit(threads) as fake:
        run_crawl(fake, out, listing="top", limit=None)
    files = resolve_inputs([str(out)])
    assert [os.path.basename(f) for f in files] == ["comments.jsonl", "submissions.jsonl"]  # bookkeeping unseen
    posts, dropped = [], []
    for f in files:
        for item in read_items(f):
            assert item[0] == "ok", item
            outcome = normalize(item[2], CorpusConfig())
            if isinstance(outcome, Kept):
                posts.append(outcome.value)
            else:
                dropped.append(outcome.reason)
    comments = [c for t in threads for c in t.comments]
    deleted = [c for c in comments if c["body"] in ("[deleted]", "[removed]")]
    assert sorted(dropped) == sorted("removed" if c["body"] == "[removed]" else "deleted" for c in deleted)
    assert {p.id for p in posts if p.kind == "t1"} == {"t1_" + c["id"] for c in comments if c not in deleted}
    assert {p.id for p in posts if p.kind != "t1"} == {"t3_" + t.submission["id"] for t in threads}  # (t3, t3-title)


def test_fake_server_info_endpoint_speaks_praws_format(env, threads):
    """/api/info (praw's Reddit.info) answers a Listing of the named things, unknown names left out."""
    with FakeReddit(threads) as fake:
        reddit = C.make_reddit(reddit_url=fake.base_url, oauth_url=fake.base_url)
        got = [s.title for s in reddit.info(fullnames=["t3_emp002", "t3_nosuch", "t3_big001"])]
        assert fake.requests[-1][2]["id"] == "t3_emp002,t3_nosuch,t3_big001"
    assert got == ["Trailer: a film nobody has commented on", "What movie surprised you the most this year?"]


def test_a_python_caller_crawls_with_the_commands_config(env, threads):
    # The config the command builds from its flags, built directly: no parsed command line.
    from lsdscc.crawl.config import CrawlOptions

    with FakeReddit(threads) as fake:
        config = CrawlOptions(output=str(env / "out"), listing="new", limit=2, max_retries=1, backoff=0.01,
                              reddit_url=fake.base_url, oauth_url=fake.base_url)
        stats = C.run(config, progress=None)
    assert stats.threads_crawled == 2 and len(read(env / "out" / "submissions.jsonl")) == 2
    (run,) = read(env / "out" / "crawl_state" / "runs.jsonl")
    assert (run["listing"], run["limit"], run["max_retries"], run["backoff"]) == ("new", 2, 1, 0.01)
    recorded = json.dumps(run)  # no credential option, site or API address in what the folder keeps
    assert "site" not in run and fake.base_url not in recorded and CLIENT_ID not in recorded


def test_the_commands_defaults_are_the_librarys():
    from lsdscc.crawl.config import CrawlOptions

    options = CrawlOptions(output="o")
    selected = C.selection(options)
    assert (selected.subreddit, selected.listing, selected.limit, selected.comment_sort) == \
        (C.CrawlConfig(output="o").subreddit, C.CrawlConfig(output="o").listing, C.CrawlConfig(output="o").limit,
         C.CrawlConfig(output="o").comment_sort) == ("movies", "top", 100, "confidence")
    assert (options.max_retries, options.backoff) == (C.RetryPolicy().max_retries, C.RetryPolicy().backoff)
    assert options.requests_per_minute == C.RequestPacer().per_window == 100
    with pytest.raises(UserError, match="--limit applies to a listing"):
        C.selection(CrawlOptions(output="o", ids=str(data_path("crawl", "ids.txt")), limit=3))
