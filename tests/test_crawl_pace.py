"""The crawler keeps Reddit's current limit, 100 requests per minute per OAuth client
(issue 21 item 8): the pacer alone on a fake clock, then real praw against the local fake
Reddit (tests/fake_reddit.py) with a small window so the test stays fast."""

from __future__ import annotations

import pytest

from lsdscc.crawl import crawler as C
from lsdscc.crawl.pace import REQUESTS_PER_MINUTE, RequestPacer
from multiref_cli import main
from tests.fake_reddit import FakeReddit, make_threads
from tests.test_crawl import FAST, NOW, env  # noqa: F401  (the credentials fixture)


class FakeClock:
    def __init__(self):
        self.now = 1000.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def test_default_is_reddits_free_tier_limit():
    pacer = RequestPacer()
    assert REQUESTS_PER_MINUTE == 100 and pacer.per_window == 100 and pacer.window == 60.0


def test_the_101st_request_in_a_minute_waits_for_the_window():
    clock = FakeClock()
    pacer = RequestPacer(clock=clock, sleep=clock.sleep)
    for i in range(100):
        assert pacer.wait() == 0.0
        clock.now += 0.1  # 100 requests in 10 s
    assert pacer.wait() == pytest.approx(50.0)  # the first one leaves the window at 60 s
    assert clock.now == pytest.approx(1060.0)
    assert pacer.wait() == pytest.approx(0.1)  # then one more as each old one leaves
    clock.now += 3600
    assert pacer.wait() == 0.0


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_bad_limits_are_value_errors(bad):
    with pytest.raises(ValueError):
        RequestPacer(bad)


def test_crawl_against_the_fake_reddit_keeps_the_limit(env):  # noqa: F811
    """At most 3 requests in any 0.5 s, on the server's own clock."""
    out = env / "out"
    with FakeReddit(make_threads()) as fake:
        C.crawl(C.CrawlConfig(output=str(out), ids=("big001", "del003", "emp002")), reddit_url=fake.base_url,
                oauth_url=fake.base_url, clock=lambda: NOW, retry_policy=FAST, progress=None,
                pacer=RequestPacer(3, 0.5))
        times = list(fake.request_times)
    assert len(times) >= 8
    for first, fourth in zip(times, times[3:]):
        assert fourth - first >= 0.45, times  # a little slack for the server's own timestamps


def test_without_a_pacer_the_same_crawl_runs_faster(env):  # noqa: F811
    """The check above can fail: unpaced, the requests come closer together."""
    out = env / "out2"
    with FakeReddit(make_threads()) as fake:
        C.crawl(C.CrawlConfig(output=str(out), ids=("big001", "del003", "emp002")), reddit_url=fake.base_url,
                oauth_url=fake.base_url, clock=lambda: NOW, retry_policy=FAST, progress=None,
                pacer=RequestPacer(1000, 0.5))
        times = list(fake.request_times)
    assert any(fourth - first < 0.45 for first, fourth in zip(times, times[3:]))


def test_cli_flag_default_and_bounds(env, capsys):  # noqa: F811
    from multiref_cli import build_parser

    args = build_parser().parse_args(["lsdscc", "crawl", "--output", "o"])
    assert args.requests_per_minute == 100
    with pytest.raises(SystemExit) as exc:
        main(["lsdscc", "crawl", "--output", "o", "--requests-per-minute", "0"])
    assert exc.value.code == 2 and "--requests-per-minute" in capsys.readouterr().err
