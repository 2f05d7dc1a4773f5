"""A thread's token counts, written into the Counter once (``clean_and_count_all``, which
``clean_thread`` runs: the C half's ``defer_counts``), are those ``clean_and_count`` gives text by
text: the same counts inserted in the same order (the vocabulary and the statistics may depend on
it), where texts take the Python steps, hold tokens outside ASCII or longer than a slot's head,
grow the token table or find it full, where other counts or a Python update come between, and
where an error stops a thread (nothing is left pending for the next one).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsdscc.corpus import cleaning
from lsdscc.synthetic.text import RealisticText

NATIVE = cleaning.native_extension()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="tests/test_lsdscc_cleaning_native.py fails on it")

#: A text holding it takes the Python steps (lsdscc_tail and Counter.update), as where C leaves it.
FALLBACK = "qqfallback"
_fresh = itertools.count()


def _letters(i: int) -> str:  # (no letter three times in a row: no elongation to shorten)
    return "".join(chr(97 + i // 25 ** k % 25) + "z" for k in range(5))


def _new_tokens(k: int) -> list[str]:
    """k tokens no text of this process had (ASCII, longer than a slot's head, outside ASCII)."""
    shapes = ["qv{}", "qv{}" + "xy" * 6, "qv{}ж", "𝔞qv{}"]
    return [shapes[i % len(shapes)].format(_letters(n)) for i, n in enumerate(next(_fresh) for _ in range(k))]


@contextlib.contextmanager
def _python_steps_for_fallback():
    """Texts holding FALLBACK: the C paths decline them (None), so the Python steps count them."""
    plain, tail = cleaning._native_plain, NATIVE.tail
    cleaning._native_plain = lambda text, *a, **k: None if FALLBACK in text else plain(text, *a, **k)
    NATIVE.tail = lambda text, *a: None if FALLBACK in text else tail(text, *a)
    try:
        yield
    finally:
        cleaning._native_plain, NATIVE.tail = plain, tail


def _per_text(texts, words=None) -> tuple[list, list[str]]:
    words = Counter() if words is None else words
    return [cleaning.clean_and_count(text, words) for text in texts], list(words.items())


def _deferred(texts, words=None) -> tuple[list, list[str]]:
    words = Counter() if words is None else words
    return cleaning.clean_and_count_all(texts, words), list(words.items())


def _nothing_pending() -> None:
    assert NATIVE.flush_counts() == 0  # (no counts held: nothing deferred)
    text = "the a the b"
    assert _per_text([text]) == ([text], [("the", 2), ("a", 1), ("b", 1)])


@pytest.fixture(scope="module")
def bodies() -> list[str]:
    gen = RealisticText(17)
    return [gen.body() for _ in range(400)]


def _texts(bodies):
    body = st.sampled_from(bodies)
    fallback = st.sampled_from(bodies).map(lambda b: f"{b} {FALLBACK} the")
    odd = st.lists(st.sampled_from(["the", "ж", "𝔞", "Ж", "x" * 30, "naïve", "can't", "gonna", "😀", "a,b"]),
                   max_size=12).map(" ".join)
    new = st.integers(1, 300).map(lambda k: " the ".join(_new_tokens(k)))
    return st.lists(st.one_of(body, body, fallback, odd, new), max_size=12)


def test_random_threads_count_as_text_by_text(bodies):
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_texts(bodies))
    def check(texts):
        with _python_steps_for_fallback():
            assert _deferred(texts) == _per_text(texts)
        _nothing_pending()

    check()


def test_the_fallback_texts_took_the_python_steps(bodies):
    calls = []
    tail = cleaning.lsdscc_tail
    cleaning.lsdscc_tail = lambda text, lowercase: calls.append(text) or tail(text, lowercase)
    try:
        with _python_steps_for_fallback():
            texts = [bodies[0], f"{bodies[1]} {FALLBACK}", bodies[2], f"{FALLBACK} {bodies[0]}"]
            assert _deferred(texts) == _per_text(texts)
    finally:
        cleaning.lsdscc_tail = tail
    assert len(calls) == 4  # (two texts, each counted twice)


def test_a_thread_that_grows_the_token_table():
    """Texts whose new tokens together (not one alone) grow the table: the pending counts of the
    texts before are written before the slots move. The reference: the Python steps' tokens
    (the table plays no part there) through Counter.update."""
    interned = NATIVE.intern_limit()[1]
    cap = 1 << 14
    while 2 * interned >= cap:
        cap *= 2
    assert cap // 2 - interned < 150_000
    names = _new_tokens(cap // 2 - interned + 50)
    texts = [" ".join(names[i:i + 400]) + " the " + " ".join(names[max(0, i - 50):i])
             for i in range(0, len(names), 400)]
    got = _deferred(texts)
    assert NATIVE.intern_limit()[1] > cap // 2  # (it grew)
    expected = Counter()
    for text in texts:
        expected.update(cleaning.clean_and_tokenize(text, native=False))
    assert got == ([" ".join(cleaning.clean_and_tokenize(t, native=False)) for t in texts], list(expected.items()))
    assert set(expected) == set(names) | {"the"}


def test_a_full_token_table(bodies):
    limit, interned = NATIVE.intern_limit()
    try:
        NATIVE.intern_limit(interned + 7)
        texts = [f"{' '.join(_new_tokens(5))} the {body}" for body in bodies[:40]]
        got = _deferred(texts)
        assert NATIVE.intern_limit()[1] == interned + 7
        assert got == _per_text(texts)
    finally:
        NATIVE.intern_limit(limit)


def test_other_counts_and_python_updates_between():
    texts = [" ".join(_new_tokens(6)) + " the a" for _ in range(6)]
    words, other = Counter(), Counter()
    NATIVE.defer_counts(words)
    try:
        for i, text in enumerate(texts):
            if i == 2:
                cleaning.clean_and_count(text, other)  # (other counts: the deferred ones written first)
            elif i == 4:
                cleaning.clean_and_count(text, words, convention="treebank")  # (a Counter.update)
            else:
                cleaning.clean_and_count(text, words)
    finally:
        NATIVE.defer_counts(None)
    expected, expected_other = Counter(), Counter()
    for i, text in enumerate(texts):
        into = expected_other if i == 2 else expected
        into.update(cleaning.clean_and_tokenize(text, convention="treebank" if i == 4 else "lsdscc"))
    assert list(words.items()) == list(expected.items())
    assert list(other.items()) == list(expected_other.items())
    _nothing_pending()


def test_an_error_mid_thread_leaves_nothing_pending(bodies):
    texts = [bodies[0], bodies[1], None, bodies[2]]  # (a Python error at the third text)
    words = Counter()
    with pytest.raises(TypeError):
        cleaning.clean_and_count_all(texts, words)
    assert list(words.items()) == _per_text(texts[:2])[1]  # (the texts before it counted)
    _nothing_pending()


def test_an_error_in_c_mid_text_is_that_of_clean_and_count(bodies):
    """With the table full a new token is counted at once: a count that is not an int fails
    there, in the middle of a text. The counts written before it are the same either way."""
    limit, interned = NATIVE.intern_limit()
    bad = _new_tokens(1)[0]
    texts = [bodies[3], f"{bodies[4]} {bad} the", bodies[5]]
    results = []
    try:
        NATIVE.intern_limit(interned)
        for count in (_per_text, _deferred):
            words = Counter({bad: "not a count"})
            with pytest.raises(TypeError):
                count(texts, words)
            results.append(list(words.items()))
            _nothing_pending()
    finally:
        NATIVE.intern_limit(limit)
    assert results[0] == results[1] and len(results[0]) > 1


def test_a_failed_flush_drops_the_counts_and_defers_nothing(bodies):
    words = Counter({"the": "not a count"})
    with pytest.raises(TypeError):
        cleaning.clean_and_count_all([bodies[6], "the end"], words)
    _nothing_pending()
    assert _deferred([bodies[6]]) == _per_text([bodies[6]])


def test_without_the_extension_the_same():
    texts = ["the a", "b the", "naïve 😀"]
    assert cleaning.clean_and_count_all(texts, Counter(), native=False) == _per_text(texts)[0]
    words = Counter()
    cleaning.clean_and_count_all(texts, words, native=False)
    assert list(words.items()) == _per_text(texts)[1]
