"""Real-data tier: the ``lsdscc`` text convention against the released LSDSCC test set
(``lsdscc/test.group.json``: 299 queries + 2,519 references).
Skipped unless MULTIREF_DATA is set.

The counts are measured on that file (README "Text conventions" lists them); the agreement
figures are what ``clean_and_tokenize`` gave when the convention was written.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter

import pytest

from lsdscc.corpus.cleaning import clean_and_tokenize
from tests.helpers import real_data


@pytest.fixture(scope="module")
def texts():
    with open(real_data("lsdscc", "test.group.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    out = []
    for query, groups in data.items():
        out.append(query)
        for refs in groups.values():
            out.extend(refs)
    return out


def test_released_text_conventions(texts):
    tokens = [t for text in texts for t in text.split()]
    count = Counter(tokens)
    joined = "\n".join(texts)
    assert len(texts) == 2818 and len(tokens) == 47254
    # apostrophes became spaces: no clitic tokens, only the '' quote token has an apostrophe
    assert (count["t"], count["s"], count["ve"], count["re"], count["ll"], count["m"]) == (462, 681, 84, 77, 59, 145)
    assert count["n't"] == count["'s"] == 0 and joined.count("'") == 2 * count["''"] == 322
    assert (count["``"], count["''"]) == (223, 161)  # a closing quote after a period became ``
    # no periods, slashes, digits, upper case or non-ASCII at all; every digit run is "digits"
    for absent in "./\\*~|<>{}0123456789":
        assert absent not in joined, absent
    assert joined == joined.lower() and joined.isascii()
    assert count["digits"] == 386 and sum(n for t, n in count.items() if "digits" in t and t != "digits") == 50
    assert count["digitss"] == 9 and count["digitsth"] == 7
    # punctuation tokens kept, and !/? runs of at most two
    assert (count[","], count["?"], count["!"], count[":"], count[";"], count["("]) == (1372, 429, 344, 98, 13, 81)
    assert (count["-"], count["--"], count["%"], count["$"], count["#"]) == (28, 4, 18, 10, 9)
    assert "! ! !" not in joined and "? ? ?" not in joined and joined.count("? ?") == 8
    assert (count["url"], count["email"], count["<unk>"]) == (63, 2, 0)
    bigrams = Counter(pair for text in texts for pair in zip(text.split(), text.split()[1:]))
    assert bigrams[("r", "movies")] == 9  # r/movies is text, not a url
    assert (bigrams[("gon", "na")], bigrams[("wan", "na")], bigrams[("can", "not")]) == (25, 4, 4)


def test_retokenizing_the_release_is_nearly_a_fixed_point(texts):
    same = kept = 0
    changed = Counter()
    for text in texts:
        before, after = text.split(), clean_and_tokenize(text)
        same += before == after
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=before, b=after, autojunk=False).get_opcodes():
            if op == "equal":
                kept += i2 - i1
            else:
                changed[" ".join(before[i1:i2])] += 1
    # 12 texts change: markdown read in them (^superscript, "# " header, "- " bullet, _a_
    # emphasis), the face -_- and letters repeated three times (aaand, mmm, ooohh, gggroovey)
    assert same == 2806 and kept == 47229
    assert {"aaand", "mmm", "-_-", "#", "-"} <= set(changed)
