"""The annotation and browse pages in a real browser: Debian's chromium, headless, driven by
Playwright for Python with ``executable_path`` (no browser download, no network beyond
127.0.0.1).

Skipped, with the reason, when chromium is missing (``MULTIREF_CHROMIUM`` names another
binary; default ``/usr/bin/chromium``) or Playwright is not installed; ``.ci/run`` installs
chromium so that CI runs them.

Data: the hand-made ``test_candidates`` of tests/data/testset/candidates.json (t3_qa:
5 candidates, proposed groups 1 1 2 3 4; t1_qb: 3, proposed 1 1 2; t1_qc: 2). The keys pressed
below, and the groups ``annotate import`` must make of them with one annotator, are written
next to each other.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading

import pytest

from tests.test_annotate_server import read_csv
from tests.test_annotation import make_candidates

CHROMIUM = os.environ.get("MULTIREF_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

if not os.access(CHROMIUM, os.X_OK):
    pytest.skip(f"browser tests skipped: no chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="browser tests skipped: playwright is not installed "
                               "(pip install -e '.[test]')")


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as pw:
        with tempfile.TemporaryDirectory() as profile:
            context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                            args=CHROMIUM_ARGS)
            yield context
            context.close()


@pytest.fixture()
def page(browser):
    page = browser.new_page()
    page.set_default_timeout(30_000)
    yield page
    page.close()


@pytest.fixture()
def served(tmp_path):
    """Start an annotate or browse server in this process: ``start(app) -> url``."""
    from lsdscc.annotation.server import make_server, url_of

    servers = []

    def start(app):
        server = make_server(app, "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append((server, app))
        return url_of(server)

    yield start
    for server, app in servers:
        server.shutdown()
        server.server_close()
        if app.page == "annotate":
            app.session.close()


def _session(tmp_path):
    from lsdscc.annotation.server import AnnotateApp
    from lsdscc.annotation.session import AnnotationSession

    folder = tmp_path / "corpus"
    make_candidates(folder)
    out = tmp_path / "ann" / "dana.csv"
    return str(folder), str(out), AnnotateApp(AnnotationSession.open(str(folder), str(out), annotator="dana"))


def keys(page, *names):
    for name in names:
        page.keyboard.press(name)


def labels_of(page):
    cands = page.locator("li.cand")
    return [(cands.nth(i).get_attribute("data-relevant"), cands.nth(i).get_attribute("data-group"))
            for i in range(cands.count())]


def wait_saved(page):
    page.evaluate("() => settled()")


def test_annotate_by_keyboard_then_import(page, tmp_path, served):
    import datasets

    from lsdscc.annotation.roundtrip import import_annotations

    folder, out, app = _session(tmp_path)
    url = served(app)
    page.goto(url)
    page.wait_for_selector("li.cand")
    assert page.inner_text("#query") == "what is the best batman movie"
    assert page.inner_text("#progress-text") == "0 of 3 queries done"
    assert "· t3_qa ·" in page.inner_text("#query-meta")  # the id as stored, not upper-cased by the label style
    # t3_qa: #1 group 1, #2 group 1, #3 group 2, #4 Space (takes its proposed group 3), #5 not relevant
    keys(page, "1", "j", "1", "ArrowDown", "2", "j", "Space", "j", "x")
    wait_saved(page)
    assert labels_of(page) == [("1", "1"), ("1", "1"), ("1", "2"), ("1", "3"), ("0", "")]
    keys(page, "u")  # undo: #5 unmarked again; "x" again
    wait_saved(page)
    assert labels_of(page)[4] == ("", "")
    assert read_csv(out)[4]["relevant"] == ""
    keys(page, "x", "Enter")  # done, next query
    page.wait_for_function("() => document.querySelector('#query').textContent === 'favorite horror movie'")
    assert page.inner_text("#progress-text") == "1 of 3 queries done"
    # t1_qb: #1 Space (proposed 1), #2 Space (proposed 1); reload; #3 g (a new group: 2); Enter
    keys(page, "Space", "j", "Space")
    wait_saved(page)
    page.reload()  # reopening resumes at the first query not done
    page.wait_for_selector("li.cand")
    assert page.inner_text("#query") == "favorite horror movie"
    assert labels_of(page) == [("1", "1"), ("1", "1"), ("", "")]
    keys(page, "k", "j", "j", "j", "g")
    wait_saved(page)
    assert labels_of(page) == [("1", "1"), ("1", "1"), ("1", "2")]
    keys(page, "Enter")
    page.wait_for_function("() => document.querySelector('#query').textContent === 'is popcorn good'")
    keys(page, "Enter")  # t1_qc: nothing relevant
    page.wait_for_function("() => document.querySelector('#status').textContent.startsWith('all 3 queries done')")
    assert page.inner_text("#progress-text") == "3 of 3 queries done"
    assert page.locator("#strip span.done").count() == 3
    keys(page, "ArrowLeft")  # back to the previous query, its labels as saved
    page.wait_for_function("() => document.querySelector('#query').textContent === 'favorite horror movie'")
    assert labels_of(page) == [("1", "1"), ("1", "1"), ("1", "2")]

    counts = import_annotations(folder, [out], str(tmp_path / "public"))
    assert counts["queries"] == 2 and counts["queries_without_relevant"] == 1
    grouped = datasets.load_dataset(folder, "test_grouped", split="test")
    assert grouped["id"] == ["t3_qa", "t1_qb"]
    assert grouped["groups"] == [
        [["the dark knight for sure", "the dark knight obviously"], ["batman begins"], ["mask of the phantasm"]],
        [["the thing", "the thing by carpenter"], ["hereditary"]],
    ]


def test_mouse_works_too(page, tmp_path, served):
    folder, out, app = _session(tmp_path)
    page.goto(served(app))
    page.wait_for_selector("li.cand")
    page.locator("li.cand").nth(2).locator("button.rel").click()  # relevant, proposed group 2
    page.locator("li.cand").nth(3).locator("button.chip", has_text="1").click()  # group 1
    page.locator("li.cand").nth(4).locator("button.chip", has_text="+").click()  # a new group: 3
    wait_saved(page)
    assert labels_of(page)[2:] == [("1", "2"), ("1", "1"), ("1", "3")]
    page.click("#undo")
    wait_saved(page)
    assert [(r["relevant"], r["group"]) for r in read_csv(out)[2:5]] == [("1", "2"), ("1", "1"), ("", "")]
    page.click("#done")
    page.wait_for_function("() => document.querySelector('#query').textContent === 'favorite horror movie'")
    page.click("#prev")
    page.wait_for_function("() => document.querySelector('#query').textContent === 'what is the best batman movie'")
    assert labels_of(page) == [("0", ""), ("0", ""), ("1", "2"), ("1", "1"), ("0", "")]


def test_browse_shows_groups_hypotheses_and_maxbleu(page, tmp_path, served):
    from lsdscc.annotation.browse import browse_document
    from lsdscc.annotation.server import BrowseApp
    from tests.test_annotate_server import _write_public

    refs, hyps = _write_public(tmp_path)
    doc = browse_document(references=refs, hypotheses=hyps)
    page.goto(served(BrowseApp(doc)))
    page.wait_for_selector(".group")
    assert page.inner_text("#maxbleu") == f"{doc['maxbleu']['score']:.4f}"
    assert page.inner_text("#item-maxbleu") == f"{doc['items'][0]['maxbleu']:.4f}"
    assert page.locator(".group").count() == 3 and page.locator("table.hyps tr").count() == 3
    keys(page, "j")
    assert page.inner_text("#query") == "favorite horror movie"
    keys(page, "/")
    page.keyboard.type("batman begins")
    assert page.locator("#items li").count() == 1 and page.inner_text("#count") == "1 of 2 queries"
    assert page.inner_text("#query") == "what is the best batman movie"
    assert json.loads(json.dumps(doc)) == page.evaluate("() => B.doc")  # the page shows the server's document


def test_fast_keys_are_not_lost(page, tmp_path, served):
    folder, out, app = _session(tmp_path)
    page.goto(served(app))
    page.wait_for_selector("li.cand")
    keys(page, "Enter", "Enter", "Enter")  # each waits for the query before it to load
    wait_saved(page)
    assert page.inner_text("#progress-text") == "3 of 3 queries done"
    assert [r["relevant"] for r in read_csv(out)] == ["0"] * 10
