"""Every relative link of the README and docs/ resolves, and every docs citation in the code.

A link ``[text](path#anchor)`` must name an existing file (relative to the Markdown file), and
its anchor must be the slug of a heading in the target, by GitHub's rules (lower case,
punctuation dropped, spaces to hyphens, ``-1``, ``-2`` for repeats). A citation in a .py file
(docstring, comment, help text, a dataset card's text) is ``docs/<page>.md#<anchor>``,
``docs/algorithms.md section N`` (``sections N and M``) or ``docs/algorithms.md §N`` (``§N and
§M``); each must point at an existing page, anchor or numbered section. A Markdown link whose
text names "section N" of algorithms.md must land inside section N. No file of the repository
cites a file outside it (the shared reference files the rules were first written in, the data
folders' PROVENANCE files): what they said is restated in docs/.
"""

from __future__ import annotations

import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
SKIP_DIRS = {".git", ".venv", "build", "dist", "out", "node_modules", "__pycache__"}

#: files outside the repository that were once cited (spelled apart so this file cites none)
OLD_REFERENCES = tuple(name + ".md" for name in ("ALGORITHMS", "CONTRACTS", "PROVENANCE", "STYLE", "PAPER_TABLES"))
TEXT_SUFFIXES = (".py", ".md", ".c", ".h", ".txt", ".cfg", ".toml", ".ini", ".yml", ".yaml", ".html", ".js", ".css",
                 ".json", ".sh")

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
CITATION = re.compile(r"docs/([\w.-]+\.md)(?:#([\w-]+))?")
SECTIONS = re.compile(r"docs/algorithms\.md\s+(?:sections?\s+|§)(\d+(?:(?:\s*,\s*|\s+and\s+)§?\d+)*)")
#: a Markdown link whose text cites numbered sections of algorithms.md
SECTION_LINK = re.compile(r"\[[^\]]*?sections?\s+(\d+)[^\]]*\]\((?:[\w./-]*/)?algorithms\.md#([\w-]+)\)")


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
    assert len(text.encode("utf-8")) <= 13_000  # a five-minute read
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


def repository_text_files() -> list:
    """Every text file of the repository (CHANGELOG.md aside: its history names what was)."""
    found = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        found += [os.path.join(folder, n) for n in sorted(names)
                  if (n.endswith(TEXT_SUFFIXES) or n in ("Makefile", "run")) and n != "CHANGELOG.md"]
    return found


def test_no_file_cites_a_file_outside_the_repository():
    left = []
    for path in repository_text_files():
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                if any(old in line for old in OLD_REFERENCES) or "shared" + "/docs" in line:
                    left.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    assert not left, "cite docs/ instead:\n" + "\n".join(left)


def numbered_sections(path: str) -> dict:
    """``{anchor: N}``: every heading anchor of ``path`` with the ``## N.`` section it lies in."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    seen: dict = {}
    result, number, fence = {}, None, False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        match = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        top = re.match(r"(\d+)\.", match.group(2)) if len(match.group(1)) == 2 else None
        if len(match.group(1)) <= 2:
            number = int(top.group(1)) if top else None
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result[base if count == 0 else f"{base}-{count}"] = number
    return result


def section_link_problems(source: str, text: str) -> list:
    """Links in ``text`` whose words cite "section N" of algorithms.md but land elsewhere."""
    sections = numbered_sections(os.path.join(DOCS, "algorithms.md"))
    problems = []
    for number, anchor in SECTION_LINK.findall(strip_code(text)):
        if sections.get(anchor) != int(number):
            problems.append(f"{os.path.relpath(source, ROOT)}: 'section {number}' links to #{anchor}, "
                            f"which is in section {sections.get(anchor)}")
    return problems


def test_section_numbers_in_link_texts_match_their_targets():
    problems = []
    for path in markdown_files():
        with open(path, encoding="utf-8") as fh:
            problems += section_link_problems(path, fh.read())
    assert not problems, "\n".join(problems)


def test_a_wrong_section_citation_is_caught():
    cited = [n for m in SECTIONS.finditer("(docs/algorithms.md §4 and §5), (docs/algorithms.md §2, step 6)")
             for n in re.findall(r"\d+", m.group(1))]
    assert cited == ["4", "5", "2"]
    assert not any(a.startswith("99-") for a in anchors(os.path.join(DOCS, "algorithms.md")))
    assert section_link_problems(os.path.join(DOCS, "x.md"), "[section 3](algorithms.md#1-lsdscc-corpus)")
    assert not section_link_problems(os.path.join(DOCS, "x.md"), "[section 1](algorithms.md#corpus-step-3-emoticons)")


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
