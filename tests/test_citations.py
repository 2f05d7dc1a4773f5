"""BibTeX once (issue 33 item 4): every entry the project writes, in a dataset card, an
``evaluate`` module, its Hub card or a page, is one of :mod:`multiref.citations`, character
for character. The checker checks itself on a drifted copy."""

from __future__ import annotations

import re

import pytest

from multiref import citations
from tests.helpers import REPO_DIR

ENTRY = re.compile(r"@(?:inproceedings|article|misc|book|incollection|proceedings|phdthesis|techreport)\{",
                   re.IGNORECASE)
PACKAGES = ("multiref_cli", "pipelines", "lsdscc", "dailydialog_pp", "multiref")
HOME = REPO_DIR / "multiref" / "citations.py"


def entries(text: str) -> list:
    """The BibTeX entries in ``text``: from ``@type{`` to the brace that closes it."""
    out = []
    for match in ENTRY.finditer(text):
        depth, end = 0, match.end() - 1
        for end in range(match.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        out.append(text[match.start(): end + 1])
    return out


def _files():
    for package in PACKAGES:
        yield from (p for p in sorted((REPO_DIR / package).rglob("*")) if p.suffix in (".py", ".md"))
    yield from sorted((REPO_DIR / "docs").rglob("*.md"))
    yield REPO_DIR / "README.md"


def test_the_checker_finds_entries_and_a_drifted_copy():
    text = "x\n```bibtex\n" + citations.GUPTA_2019 + "\n```\n" + citations.XU_2018.replace("2070", "2071")
    found = entries(text)
    assert found[0] == citations.GUPTA_2019 and found[1].startswith("@inproceedings{xu-etal-2018-lsdscc")
    assert [e in citations.BY_KEY.values() for e in found] == [True, False]


def test_the_module_holds_each_paper_once():
    assert set(citations.BY_KEY) == {"xu-etal-2018-lsdscc", "li-etal-2017-dailydialog",
                                     "gupta-etal-2019-investigating", "sai-etal-2020-improving"}
    for entry in citations.BY_KEY.values():
        assert entries(entry) == [entry]
        assert re.search(r'year = "20(17|18|19|20)"', entry) and "pages = " in entry
    assert "Proceedings of the 20th Annual SIGdial Meeting on Discourse and Dialogue" in citations.GUPTA_2019
    assert 'doi = "10.18653/v1/N18-1188"' in citations.XU_2018


def test_no_bibtex_outside_the_citations_module_in_code_and_only_its_entries_in_pages():
    code, pages = [], []
    for path in _files():
        if path == HOME:
            continue
        found = entries(path.read_text(encoding="utf-8"))
        rel = path.relative_to(REPO_DIR).as_posix()
        if path.suffix == ".py":
            code += [rel for _ in found]
        else:
            pages += [rel for entry in found if entry not in citations.BY_KEY.values()]
    assert code == [] and pages == []


def test_cards_and_evaluate_modules_read_the_module():
    from dailydialog_pp import card
    from lsdscc.corpus import release_card

    assert release_card.CITATIONS == (citations.XU_2018,)
    assert card.CITATIONS == (citations.LI_2017, citations.GUPTA_2019, citations.SAI_2020)


@pytest.mark.parametrize("name, entry", [("lsdscc_metrics", "XU_2018"), ("multiref_metrics", "GUPTA_2019")])
def test_evaluate_modules_cite_from_the_module(name, entry):
    import evaluate

    from multiref.metrics import evaluate_module_path

    module = evaluate.load(evaluate_module_path(name))
    assert module.citation == getattr(citations, entry)
