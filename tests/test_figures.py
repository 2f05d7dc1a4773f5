"""Every figure the tool writes is readable: each is drawn by the command that writes it, on
the test fixtures, and checked with matplotlib's own renderer before it is saved: no two
texts (titles, axis labels, tick labels, legends, annotations) overlap, and none is cut off
by the figure's edge. The check itself is tested on figures made to fail it."""

from __future__ import annotations

import itertools

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from multiref_cli import main
from tests.helpers import data_path

matplotlib.use("Agg", force=True)


def _drawn_tick_labels(fig) -> set:
    """The tick labels matplotlib draws (``Axis._update_ticks``: the ticks within the view;
    the others exist as Text objects but are not drawn)."""
    drawn = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis._update_ticks():
                drawn.update(t for t in (tick.label1, tick.label2) if t.get_visible())
    return drawn


def _texts(fig):
    """``(label, window extent)`` of every text of ``fig`` that is drawn and not empty."""
    renderer = fig.canvas.get_renderer()
    drawn_ticks = _drawn_tick_labels(fig)
    tick_labels = {t for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   for tick in axis.get_major_ticks() + axis.get_minor_ticks() for t in (tick.label1, tick.label2)}
    out = []
    for text in fig.findobj(Text):
        if text in tick_labels and text not in drawn_ticks:
            continue
        if not text.get_visible() or not text.get_text().strip():
            continue
        out.append((text.get_text(), text.get_window_extent(renderer)))
    return out


def layout_problems(fig, tolerance: float = 1.0) -> list:
    """Overlapping or cut-off texts of ``fig``, as readable lines (empty: none)."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    texts = _texts(fig)
    edge = fig.bbox
    problems = [f"cut off: {label!r}" for label, box in texts
                if box.x0 < edge.x0 - tolerance or box.y0 < edge.y0 - tolerance
                or box.x1 > edge.x1 + tolerance or box.y1 > edge.y1 + tolerance]
    for (a, box_a), (b, box_b) in itertools.combinations(texts, 2):
        width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if width > tolerance and height > tolerance:
            problems.append(f"overlap: {a!r} and {b!r}")
    return problems


@pytest.fixture()
def checked_figures(monkeypatch):
    """Every figure saved while the test runs, checked first: ``[(file name, problems)]``."""
    seen = []
    save = Figure.savefig

    def checking_savefig(fig, fname, *args, **kwargs):
        seen.append((str(getattr(fname, "name", fname)), layout_problems(fig)))
        return save(fig, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", checking_savefig)
    return seen


def test_the_check_finds_overlaps_and_cut_off_text():
    fig = Figure(figsize=(3, 2))
    ax = fig.subplots()
    ax.set_xlim(0, 5)
    ax.set_xticks(range(6))
    ax.set_xticklabels([f"a long tick label {i}" for i in range(6)])
    ax.set_title("a title far too long to fit in a figure only three inches wide, however small")
    problems = layout_problems(fig)
    assert any(p.startswith("overlap: 'a long tick label") for p in problems)
    assert any(p.startswith("cut off: 'a title far too long") for p in problems)
    fig = Figure(figsize=(4, 3))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title("fits")
    fig.tight_layout()
    assert layout_problems(fig) == []


ANALYSES = {
    "correlation": ["analyze", "correlation", "--ratings", str(data_path("analysis", "ratings.csv")), "--metric",
                    "bleu2:smoothing=nltk1", "--metric", "rouge_l", "--bootstrap", "0"],
    "refcount": ["analyze", "refcount", "--ratings", str(data_path("analysis", "ratings.csv")),
                 "--multiref-references", str(data_path("analysis", "multireftest.jsonl")), "--metric", "rouge_l",
                 "--metric", "bleu2:smoothing=nltk1", "--orders", "2", "--bootstrap", "0"],
    "discrimination": ["analyze", "discrimination", "--validation", str(data_path("analysis", "ddpp_dev.jsonl")),
                       "--test", str(data_path("analysis", "ddpp_test.jsonl"))],
    "regression": ["analyze", "regression", "--ratings", str(data_path("analysis", "regression_synthetic.jsonl"))],
}


@pytest.mark.parametrize("name", list(ANALYSES))
def test_every_analysis_figure_is_readable(name, tmp_path, checked_figures, capsys):
    assert main(ANALYSES[name] + ["--output", str(tmp_path / name), "-q"]) == 0, capsys.readouterr().err
    assert checked_figures, "no figure was drawn"
    assert [(path, problems) for path, problems in checked_figures if problems] == []


def test_every_corpus_figure_is_readable(tmp_path, checked_figures, capsys):
    """The bundled sample's build draws the four stats plots twice (the corpus as built, then the
    published splits after the test set's leak removal)."""
    assert main(["lsdscc", "build", "--output", str(tmp_path / "lsdscc"), "-q"]) == 0, capsys.readouterr().err
    names = sorted({path.rsplit("/", 1)[-1] for path, _ in checked_figures if "/" in path})
    assert len(checked_figures) >= 4, names
    assert [(path, problems) for path, problems in checked_figures if problems] == []
