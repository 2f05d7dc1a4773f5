"""The published corpus folder describes itself (issue 31 part 2): after the test set's leak
removal, every number the plots draw and the card states equals the published parquet's
counts, and the survival chart has a step for the leak removal.

The bundled sample is built once by the real pipeline (`multiref lsdscc build`, test set
included: Lucene, Doc2Vec and the Beam leak removal), in a subprocess; the published
``single_turn`` is read back with ``datasets.load_dataset``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(folder, stats.json, dataset_meta.json) of the bundled sample built with its test set."""
    folder = tmp_path_factory.mktemp("published") / "lsdscc"
    done = subprocess.run([sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--output", str(folder), "--quiet"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with open(folder / "stats.json", encoding="utf-8") as fh:
        stats = json.load(fh)
    with open(folder / "dataset_meta.json", encoding="utf-8") as fh:
        meta = json.load(fh)
    return folder, stats, meta


@pytest.fixture(scope="module")
def published(built, tmp_path_factory):
    """The published single_turn as ``datasets`` loads it: pairs per split and per query."""
    import datasets

    folder = built[0]
    loaded = datasets.load_dataset(str(folder), "single_turn", cache_dir=str(tmp_path_factory.mktemp("hf")))
    per_query = Counter()
    for split in loaded.values():
        per_query.update(split["query_id"])
    return {"splits": {s: d.num_rows for s, d in loaded.items()}, "per_query": per_query,
            "histogram": Counter(per_query.values())}


def drawn(draw, stats):
    """The axes a plot function of lsdscc.corpus.outputs draws on (a real matplotlib figure)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure()
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    draw(ax, stats)
    return ax


def test_the_leak_removal_changed_the_corpus(built, published):
    _, stats, meta = built
    removed = meta["configs"]["single_turn"]["counts"]["test_set_leak_removal"]
    assert sum(removed.values()) > 0 and stats["test_set_leak_removal"] == removed
    as_built = sum(int(k) * v for k, v in stats["responses_per_query_as_built"]["histogram"].items())
    assert as_built == sum(published["splits"].values()) + sum(removed.values())


def test_responses_per_query_draws_the_published_counts(built, published):
    from lsdscc.corpus.outputs import _plot_responses_per_query

    _, stats, meta = built
    ax = drawn(_plot_responses_per_query, stats)
    bars = {round(p.get_x() + p.get_width() / 2): round(p.get_height()) for p in ax.patches}
    assert bars == dict(published["histogram"])
    queries, pairs = len(published["per_query"]), sum(published["splits"].values())
    assert f"{queries:,} queries, {pairs:,} pairs" in ax.get_title()
    assert stats["responses_per_query"]["queries"] == queries
    assert stats["splits"]["single_turn"] == {s: published["splits"].get(s, 0) for s in stats["splits"]["single_turn"]}
    multi = meta["configs"]["multi_turn"]["splits"]
    assert stats["splits"]["multi_turn"] == {s: multi.get(s, 0) for s in stats["splits"]["multi_turn"]}


def test_survival_ends_with_the_leak_removal_at_the_published_pairs(built, published):
    from lsdscc.corpus.outputs import _plot_survival
    from lsdscc.corpus.published import LEAK_STAGE

    _, stats, meta = built
    stages = stats["survival"]
    ax = drawn(_plot_survival, stats)
    widths = [round(p.get_width()) for p in ax.patches][::-1]  # drawn bottom-up
    labels = [t.get_text() for t in ax.get_yticklabels()][::-1]
    assert widths == [s["remaining"] for s in stages] and labels == [s["stage"] for s in stages]
    pairs = sum(published["splits"].values())
    assert stages[-1] == {"stage": LEAK_STAGE, "remaining": pairs}
    removed = sum(meta["configs"]["single_turn"]["counts"]["test_set_leak_removal"].values())
    assert stages[-2]["remaining"] == pairs + removed  # the corpus as built, before the leak removal
    assert f"{pairs:,} pairs" in ax.get_title()


def test_the_published_pngs_are_drawn_from_this_stats_json(built, tmp_path):
    from lsdscc.corpus.outputs import plot_all

    folder, stats, _ = built
    for path in plot_all(str(tmp_path), stats):
        name = os.path.basename(path)
        with open(path, "rb") as fh, open(folder / "plots" / name, "rb") as pub:
            assert fh.read() == pub.read(), name


def test_the_card_states_the_published_counts_and_cites_existing_sections(built, published):
    folder, _, _ = built
    card = (folder / "README.md").read_text(encoding="utf-8")
    rpq = published["histogram"]
    strata = {"lt3": sum(v for k, v in rpq.items() if k < 3), "3to5": sum(v for k, v in rpq.items() if 3 <= k <= 5),
              "gt5": sum(v for k, v in rpq.items() if k > 5)}
    assert f"queries by their number of pairs: {strata}" in card
    with open(os.path.join(ROOT, "docs", "algorithms.md"), encoding="utf-8") as fh:
        numbered = set(re.findall(r"^## (\d+)\. ", fh.read(), flags=re.M))
    cited = re.findall(r"docs/algorithms\.md §(\d+)", card)
    assert cited and set(cited) <= numbered and "ALGORITHMS" not in card


def test_describing_twice_changes_nothing(built):
    from lsdscc.corpus.published import after_leak_removal, published_single_turn

    folder, stats, _ = built
    again = after_leak_removal(stats, published_single_turn(str(folder)), stats["test_set_leak_removal"])
    assert again == stats
