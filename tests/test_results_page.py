"""The results page (``multiref score --format html``): one self-contained file, the same bytes
for the same inputs, input text shown as text; and in Debian's chromium, headless (skipped, with
the reason, where chromium or Playwright is missing; ``.ci/run`` installs chromium): the table
sorts, an item opens to its context, references, outputs and per-item scores, the filter
narrows the items, and the page logs no error."""

from __future__ import annotations

import json
import os
import re

import pytest

from multiref.output.results_page import PAGE_SIZE, page_data, render

HOSTILE = "good </script><img src=x onerror=\"document.title='pwned'\"> & <b>bold</b>"


def _results():
    sig = {"bleu": "nrefs:2|conv:nltk", "rouge_l": "rouge_l|beta:1.2"}
    rows = {"echo": {"bleu": (0.25, (0.2, 0.3), None), "rouge_l": (0.4, (0.35, 0.45), None)},
            "first-turn": {"bleu": (0.125, (0.1, 0.15), 0.0004), "rouge_l": (0.5, (0.45, 0.55), 0.2)}}
    return [(name, {m: {"score": s, "ci": list(ci), "p_value": p, "signature": sig[m]} for m, (s, ci, p) in r.items()})
            for name, r in rows.items()]


def _items(n=120):
    return [{"id": f"t1_{i:04d}", "context": ["hello there", f"what now {i}?"],
             "references": ["fine", HOSTILE] if i == 7 else ["fine", f"ref {i}"], "groups": None, "group_ids": None,
             "outputs": [["fine thanks"], [f"out {i}"]], "scores": [[(i % 10) / 10, 0.5], [0.3, None]]}
            for i in range(n)]


def _page(items=None) -> str:
    data = page_data(_results(), _items() if items is None else items, legend="* p < 0.05 against the baseline echo "
                     "(approximate randomization, 1000 trials, seed 12345)", alpha=0.05, mark="*")
    return render(data, subtitle="test set: 120 items")


def test_page_is_reproducible_and_self_contained():
    page = _page()
    assert page == _page()
    assert page.startswith("<!DOCTYPE html>")
    code = re.sub(r'<script id="data" type="application/json">.*?</script>', "", page, flags=re.S)
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", code), "an external asset"
    assert "http://" not in page and "https://" not in page
    # the hostile reference cannot close the data's script element: only the page's two scripts close
    assert page.count("</script>") == 2
    assert "\\u003c/script\\u003e\\u003cimg" in page


def test_non_finite_scores_become_null():
    items = _items(3)
    items[0]["scores"][0][0] = float("nan")
    items[1]["scores"][1][1] = float("inf")
    page = _page(items)
    assert "NaN" not in page and "Infinity" not in page.replace("-Infinity", "")


CHROMIUM = os.environ.get("MULTIREF_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser_page():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"browser test skipped: no chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="browser test skipped: playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 1000})
        page.set_default_timeout(30_000)
        yield page
        browser.close()


def test_the_page_in_a_browser(browser_page, tmp_path):
    path = tmp_path / "page.html"
    path.write_text(_page(), encoding="utf-8")
    page, errors = browser_page, []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    first_column = "#results tr td:first-child"
    assert page.locator(first_column).all_inner_texts()[0].startswith("echo")
    page.click("#results th[data-metric='1']")  # rouge_l, highest first: first-turn (0.5) before echo (0.4)
    assert page.locator(first_column).all_inner_texts()[0].startswith("first-turn")
    page.click("#results th[data-metric='1']")  # again: lowest first
    assert page.locator(first_column).all_inner_texts()[0].startswith("echo")
    assert "0.1250*" in page.inner_text("#results") and "p = 0.0004" in page.inner_text("#results")
    assert "approximate randomization" in page.inner_text("#legend")
    assert page.locator("#items tr.item").count() == PAGE_SIZE
    page.click("#items tr.item >> nth=7")
    detail = page.inner_text("#items tr.detail")
    assert "what now 7?" in detail and "out 7" in detail and "fine thanks" in detail
    assert HOSTILE.replace("\\", "") in detail  # shown as text ...
    assert page.locator("img").count() == 0 and page.locator("#items b").count() == 0  # ... never as markup
    assert page.title() == "multiref score"
    page.fill("#filter", "what now 11")
    assert page.inner_text("#count").startswith("11 of 120")  # 11, 110..119
    page.select_option("#order", "desc")
    page.fill("#filter", "")
    assert page.locator("#items tr.item td:last-child").all_inner_texts()[0] == "0.9000"
    shot = tmp_path / "page.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    assert errors == []


def test_score_writes_a_page_naming_both_systems(tmp_path, browser_page):
    """``multiref score -r R -H a b --confidence --paired-ar --format html --output page.html``
    on the small LSDSCC fixture (grouped references): the page names both systems, opens an item
    to its groups, and its legend names the test."""
    from multiref_cli import main
    from tests.helpers import data_path

    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("alpha beta gamma delta\na b c d\n", encoding="utf-8")
    b.write_text("one two three\nx y z\n", encoding="utf-8")
    out = tmp_path / "page.html"
    code = main(["score", "-r", str(data_path("score", "lsdscc_small.json")), "-H", str(a), str(b), "--confidence",
                 "--paired-ar", "--paired-ar-n", "200", "--format", "html", "--output", str(out), "-q"])
    assert code == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    data = json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S).group(1))
    assert data["systems"] == [str(a), str(b)] and len(data["items"]) == 2
    page, errors = browser_page, []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(out.as_uri())
    table = page.inner_text("#results")
    assert str(a) in table and str(b) in table and "maxbleu" in table
    assert "approximate randomization, 200 trials" in page.inner_text("#legend")
    page.click("#items tr.item >> nth=0")
    detail = page.inner_text("#items tr.detail")
    assert "group 1" in detail and "alpha beta gamma epsilon" in detail and "one two three" in detail
    assert errors == []
