"""METEOR via NLTK (docs/algorithms.md#8-metric-definitions).

WordNet cannot be downloaded here, so the positive path runs NLTK's real WordNet reader on a
tiny synthetic WordNet written by :func:`write_mini_wordnet` (WordNet 3.0 file formats:
``lexnames``, ``index.<pos>``, ``data.<pos>`` with byte offsets, ``<pos>.exc``,
``index.sense``). Expected values are worked by hand from NLTK 3.10's
``single_meteor_score`` (Lavie & Agarwal 2007):

    P = m/|hyp|, R = m/|ref|, Fmean = P R / (alpha P + (1 - alpha) R),
    penalty = gamma (chunks/m)^beta, score = (1 - penalty) Fmean
"""

import os
import pickle

import nltk.data
import pytest

from multiref.util.errors import UserError
from multiref.metrics import Item, get_metric
from multiref.metrics import meteor as meteor_module
from multiref.metrics.meteor import find_wordnet, wordnet_version

_HEADER = ("  1 This software and database is being provided to you, the LICENSEE, by\n"
           "  2 WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.\n")


def write_mini_wordnet(root, noun_synsets):
    """Write ``root/corpora/wordnet`` holding the given noun synsets (lists of lemmas)."""
    folder = os.path.join(root, "corpora", "wordnet")
    os.makedirs(folder)
    with open(os.path.join(folder, "lexnames"), "w") as f:
        f.write("00\tadj.all\t3\n01\tadj.pert\t3\n02\tadv.all\t4\n03\tnoun.Tops\t1\n04\tnoun.animal\t1\n")
    offset, body, index = len(_HEADER.encode()), "", {}
    for lemmas in noun_synsets:
        words = " ".join(f"{w} 0" for w in lemmas)
        line = f"{offset:08d} 04 n {len(lemmas):02x} {words} 000 | synthetic synset\n"
        body += line
        for w in lemmas:
            index.setdefault(w, []).append(offset)
        offset += len(line.encode())
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(folder, f"data.{pos}"), "w") as f:
            f.write(_HEADER + (body if pos == "noun" else ""))
        with open(os.path.join(folder, f"index.{pos}"), "w") as f:
            f.write(_HEADER)
            if pos == "noun":
                for w in sorted(index):
                    offs = " ".join(f"{o:08d}" for o in index[w])
                    f.write(f"{w} n {len(index[w])} 0 {len(index[w])} 0 {offs} \n")
        open(os.path.join(folder, f"{pos}.exc"), "w").close()
    open(os.path.join(folder, "index.sense"), "w").close()
    return folder


@pytest.fixture
def nltk_data(tmp_path, monkeypatch):
    """NLTK_DATA pointing at a fresh mini WordNet; nltk.data.path restored afterwards."""
    write_mini_wordnet(str(tmp_path), [["cat", "kitty"], ["dog", "hound"]])
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    return tmp_path


def test_missing_wordnet_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.setattr(meteor_module, "DEBIAN_WORDNET", str(tmp_path / "no-debian-wordnet"))
    with pytest.raises(UserError) as info:
        get_metric("meteor")
    message = str(info.value)
    assert "\n" not in message
    assert "NLTK_DATA" in message and "WordNet" in message and str(tmp_path) in message
    assert "apt-get install wordnet" in message and "--meteor-impl 1.5" in message


def _debian_layout(tmp_path):
    """A WordNet folder as Debian's wordnet-base installs it: the database files, no lexnames, no index.sense."""
    write_mini_wordnet(str(tmp_path / "mini"), [["cat", "kitty"], ["dog", "hound"]])
    source = tmp_path / "mini" / "corpora" / "wordnet"
    os.remove(source / "lexnames")
    os.remove(source / "index.sense")
    return source


def test_debian_layout_is_copied_for_nltk_once(tmp_path, monkeypatch):
    source = _debian_layout(tmp_path)
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "empty"))
    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.setattr(meteor_module, "DEBIAN_WORDNET", str(source))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    metric = get_metric("meteor")
    copy = tmp_path / "cache" / "multiref" / "nltk_data" / "corpora" / "wordnet"
    assert metric.wordnet_location == str(copy)
    assert not any(os.path.islink(copy / name) for name in os.listdir(copy))  # NLTK refuses links out of its root
    lexnames = (copy / "lexnames").read_text().splitlines()
    assert len(lexnames) == 45 and lexnames[0] == "00\tadj.all\t3" and lexnames[18] == "18\tnoun.person\t1"
    assert metric.sentence_score("the hound sat", ["the dog sat"]) == pytest.approx(53 / 54)
    os.remove(source / "data.noun")  # published once: the copy is used from now on
    assert get_metric("meteor").wordnet_location == str(copy)


def test_debian_wordnet_package_or_the_one_line_message(tmp_path, monkeypatch):
    """With Debian's wordnet installed (.ci/run installs it) NLTK's METEOR matches WordNet synonyms
    through it; without it the error is the one line saying what to install."""
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "empty"))
    monkeypatch.setattr(nltk.data, "path", [])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    if os.path.isfile(os.path.join(meteor_module.DEBIAN_WORDNET, "data.noun")):
        metric = get_metric("meteor")
        assert "|wn:3.0|" in metric.signature
        assert metric.sentence_score("the hound sat", ["the dog sat"]) == pytest.approx(53 / 54)
    else:
        with pytest.raises(UserError, match="apt-get install wordnet") as info:
            get_metric("meteor")
        assert "\n" not in str(info.value)


def test_incomplete_wordnet_folder_is_named(tmp_path, monkeypatch):
    (tmp_path / "corpora" / "wordnet").mkdir(parents=True)
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.setattr(nltk.data, "path", [])
    with pytest.raises(UserError, match="corpora/wordnet: not a WordNet folder .*lexnames"):
        get_metric("meteor")


def test_find_wordnet_zip(tmp_path):
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "wordnet.zip").write_bytes(b"")
    assert find_wordnet([str(tmp_path / "empty"), str(tmp_path)]) == (str(tmp_path), str(tmp_path / "corpora" / "wordnet.zip"))


# Hand-worked values, defaults alpha 0.9, beta 3, gamma 0.5:
# 1. identical 6 words "the cat sat on a mat": m 6, P = R = 1, Fmean 1, 1 chunk,
#    penalty 0.5 (1/6)^3 = 1/432                                     -> 1 - 1/432
# 2. "sat on mat the cat" vs "the cat sat on mat": m 5, P = R = 1, chunks {sat on mat}{the cat} = 2,
#    penalty 0.5 (2/5)^3 = 0.032                                     -> 0.968
# 3. "the cat" vs "the cat sat on a mat": m 2, P 1, R 1/3, Fmean (1/3)/(0.9 + 0.1/3) = 5/14,
#    1 chunk, penalty 0.5 (1/2)^3 = 1/16                             -> 5/14 * 15/16
# 4. "The CAT" vs "the cat": NLTK lower-cases; m 2, 1 chunk, penalty 1/16 -> 15/16
# 5. "cats" vs "cat": Porter stem match; m 1, penalty 0.5            -> 0.5
# 6. "the hound sat" vs "the dog sat": WordNet synonym (synset {dog, hound}); m 3, 1 chunk,
#    penalty 0.5 (1/3)^3 = 1/54                                       -> 53/54
# 7. no match                                                          -> 0
# 8. case 3 with alpha 0.5, beta 2, gamma 0.4: Fmean (1/3)/(0.5 + 1/6) = 1/2,
#    penalty 0.4 (1/2)^2 = 0.1                                        -> 0.45
# 9. multi-reference "the cat" vs ["the cat", "a dog"]: per reference 15/16 and 0;
#    max (NLTK's meteor_score) 15/16, mean 15/32
CASES = [
    ({}, "the cat sat on a mat", ["the cat sat on a mat"], 1 - 1 / 432),
    ({}, "sat on mat the cat", ["the cat sat on mat"], 0.968),
    ({}, "the cat", ["the cat sat on a mat"], 5 / 14 * 15 / 16),
    ({}, "The CAT", ["the cat"], 15 / 16),
    ({}, "cats", ["cat"], 0.5),
    ({}, "the hound sat", ["the dog sat"], 53 / 54),
    ({}, "x y", ["the cat"], 0.0),
    ({}, "", ["the cat"], 0.0),
    ({"alpha": 0.5, "beta": 2, "gamma": 0.4}, "the cat", ["the cat sat on a mat"], 0.45),
    ({}, "the cat", ["the cat", "a dog"], 15 / 16),
    ({"aggregate": "mean"}, "the cat", ["the cat", "a dog"], 15 / 32),
]


@pytest.mark.parametrize("options, hyp, refs, expected", CASES)
def test_hand_worked_values(nltk_data, options, hyp, refs, expected):
    assert get_metric("meteor", **options).sentence_score(hyp, refs) == pytest.approx(expected, abs=1e-12)


def test_synonym_needs_wordnet_entry(nltk_data):
    # "kitty" is in WordNet with "cat", but NLTK matches synonyms after stemming, and Porter
    # turns "kitty" into "kitti", which WordNet does not know: only "the"/"sat" match
    # (m 2 of 3, P = R = 2/3, 2 chunks, penalty 0.5 (2/2)^3)   -> 2/3 * 0.5
    assert get_metric("meteor").sentence_score("the kitty sat", ["the cat sat"]) == pytest.approx(1 / 3)


def test_score_items_and_signature(nltk_data):
    metric = get_metric("meteor")
    result = metric.score_items([Item("1", ["The CAT"], ["the cat"]), Item("2", ["x"], ["y"])])
    assert result.score == pytest.approx(15 / 32)
    sig = metric.signature
    assert sig.startswith("meteor|tok:whitespace|lc:no|agg:max|impl:nltk|alpha:0.9|beta:3|gamma:0.5|stem:porter|wn:3.0|nltk:")
    assert get_metric("meteor", gamma=0.4).signature != sig
    assert get_metric("meteor", aggregate="mean").signature != sig
    assert wordnet_version(str(nltk_data / "corpora" / "wordnet")) == "3.0"


def test_pickle_round_trip(nltk_data):
    metric = get_metric("meteor")
    metric.sentence_score("a", ["a"])
    clone = pickle.loads(pickle.dumps(metric))
    assert clone._wordnet is None
    assert clone.sentence_score("the hound sat", ["the dog sat"]) == pytest.approx(53 / 54)


def test_recall_meteor(nltk_data):
    # recall over references "the cat" (best: hyp "The CAT", 15/16) and "the dog sat"
    # (best: hyp "the hound sat", 53/54)
    metric = get_metric("recall_meteor")
    item = Item("q", hypotheses=["The CAT", "the hound sat"], references=["the cat", "the dog sat"])
    assert metric.item_score(item) == pytest.approx((15 / 16 + 53 / 54) / 2)
    assert metric.signature.startswith("recall_meteor|")


@pytest.mark.parametrize("options", [{"alpha": 2}, {"gamma": -0.1}, {"beta": "x"}])
def test_bad_options(nltk_data, options):
    with pytest.raises(ValueError):
        get_metric("meteor", **options)
