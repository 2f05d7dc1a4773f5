"""Every relative link of the README and docs/ resolves, and every docs citation in the code.

A link ``[text](path#anchor)`` must name an existing file (relative to the Markdown file), and
its anchor must be the slug of a heading in the target, by GitHub's rules (lower case,
punctuation dropped, spaces to hyphens, ``-1``, ``-2`` for repeats). A citation in a .py file
(docstring, comment, help text) is ``docs/<page>.md#<anchor>`` or ``docs/algorithms.md section N``
(``sections N and M``); each must point at an existing page, anchor or numbered section. The
papers' rules are cited from docs/algorithms.md only: a citation of the old shared reference
files is left only in the few dataset-card texts that keep the sample's output bytes.
"""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
SKIP_DIRS = {".git", ".venv", "build", "dist", "out", "node_modules", "__pycache__"}

OLD_REFERENCES = ("ALGORITHMS" + ".md", "CONTRACTS" + ".md")  # spelled apart so this file cites neither
#: card texts written into the datasets: changing them changes the bundled sample's output bytes
CARD_TEXTS = (
    "(" + OLD_REFERENCES[0] + " section 1). `response_number`",
    "Built by the test-set stage (" + OLD_REFERENCES[0] + " section 2)",
    "LSDSCC test-set candidates (" + OLD_REFERENCES[0] + " section 2)",
    "(" + OLD_REFERENCES[0] + " sections 4 and 5). Data licence",
    "LSDSCC grouped multi-reference test set (" + OLD_REFERENCES[0] + " section 2, step 6)",
)

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CITATION = re.compile(r"docs/([\w.-]+\.md)(?:#([\w-]+))?")
SECTIONS = re.compile(r"docs/algorithms\.md\s+sections?\s+(\d+(?:(?:\s*,\s*|\s+and\s+)\d+)*)")


def strip_code(text: str) -> str:
    """``text`` without fenced code blocks and inline code spans (their links are not links)."""
    out, fence = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
            out.append("")
            continue
        out.append("" if fence else re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: str) -> set:
    """The heading anchors of a Markdown file, with GitHub's numbering of repeats."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    seen: dict = {}
    result = set()
    fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        match = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            result.add(base if count == 0 else f"{base}-{count}")
    return result


def markdown_files() -> list:
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(os.path.join(DOCS, n) for n in os.listdir(DOCS) if n.endswith(".md"))
    return files


def python_files() -> list:
    found = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return found


def broken_link(source: str, target: str) -> str | None:
    """Why ``target`` (a link in ``source``) does not resolve, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
        return None
    path, _, fragment = target.partition("#")
    resolved = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
    if not os.path.exists(resolved):
        return f"no file {os.path.relpath(resolved, ROOT)}"
    if fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
        return f"no heading #{fragment} in {os.path.relpath(resolved, ROOT)}"
    return None


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: os.path.relpath(p, ROOT))
def test_every_relative_link_resolves(path):
    with open(path, encoding="utf-8") as fh:
        text = strip_code(fh.read())
    links = LINK.findall(text)
    problems = [f"{target}: {why}" for target in links if (why := broken_link(path, target))]
    assert not problems, f"{os.path.relpath(path, ROOT)}: " + "; ".join(problems)


def test_the_readme_links_to_the_docs_and_stays_short():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    assert len(text.encode("utf-8")) < 15_000
    linked = {os.path.basename(t.partition("#")[0]) for t in LINK.findall(strip_code(text))}
    pages = {n for n in os.listdir(DOCS) if n.endswith(".md")}
    assert pages <= linked, f"README links to none of {sorted(pages - linked)}"


def code_citations():
    for path in python_files():
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        rel = os.path.relpath(path, ROOT)
        for match in CITATION.finditer(text):
            yield rel, match.group(0), match.group(1), match.group(2)
        for match in SECTIONS.finditer(text):
            for number in re.findall(r"\d+", match.group(1)):
                yield rel, match.group(0), "algorithms.md", ("section", number)


def test_every_docs_citation_in_the_code_resolves():
    problems, count = [], 0
    for rel, cited, page, anchor in code_citations():
        count += 1
        target = os.path.join(DOCS, page)
        if not os.path.exists(target):
            problems.append(f"{rel}: {cited}: no page docs/{page}")
        elif isinstance(anchor, tuple):
            if not any(a.startswith(f"{anchor[1]}-") for a in anchors(target)):
                problems.append(f"{rel}: {cited}: no section {anchor[1]} in docs/{page}")
        elif anchor and anchor not in anchors(target):
            problems.append(f"{rel}: {cited}: no heading #{anchor} in docs/{page}")
    assert not problems, "\n".join(problems)
    assert count > 0, "no docs citation found in the code"


def test_no_code_cites_the_old_reference_files():
    left = []
    for path in python_files():
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if any(old in line for old in OLD_REFERENCES) and not any(card in line for card in CARD_TEXTS):
                    left.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    assert not left, "cite docs/ instead:\n" + "\n".join(left)


@pytest.mark.parametrize("heading, expected", [
    ("3. LSDSCC metrics", "3-lsdscc-metrics"),
    ("5. DD++", "5-dd"),
    ("Crawling r/movies yourself: `multiref lsdscc crawl`", "crawling-rmovies-yourself-multiref-lsdscc-crawl"),
    ("Other metrics (ROUGE-L, METEOR, embeddings, diversity)", "other-metrics-rouge-l-meteor-embeddings-diversity"),
    ("deltaBLEU (Sai et al. 2020, Table 3)", "deltableu-sai-et-al-2020-table-3"),
])
def test_slug_follows_github(heading, expected):
    assert slug(heading) == expected


def test_a_broken_link_is_reported(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A section\n", encoding="utf-8")
    assert broken_link(str(page), "#a-section") is None
    assert "no heading" in broken_link(str(page), "#missing")
    assert "no file" in broken_link(str(page), "other.md")
    assert broken_link(str(page), "https://example.org/x") is None
