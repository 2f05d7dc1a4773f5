"""Tokenizers by name: a small registry in the manner of sacrebleu's.

Every metric takes a tokenizer name and records it in its signature. All tokenizers here
need no downloaded NLTK data. NLTK is imported lazily, on first use of a tokenizer that
needs it.

Names:
- ``whitespace``: ``str.split()``; the right choice for pre-tokenized text such as the
  public LSDSCC test set and the multi-reference DailyDialog responses.
- ``treebank``: NLTK's ``TreebankWordTokenizer`` (Penn Treebank conventions: ``do n't``).
- ``nltk``: NLTK's ``word_tokenize(text, preserve_line=True)`` (Treebank with better
  punctuation handling; no punkt needed with ``preserve_line``).
- ``tweet``: NLTK's ``TweetTokenizer`` (keeps emoticons, hashtags and URLs whole).
- ``13a``: sacrebleu's default tokenizer (mteval-v13a), if sacrebleu is installed.
- ``char``: one token per non-space character.

Plug-ins add more names without the core importing them: ``register_tokenizer(name,
factory)``, or an entry point ``name = module:factory`` of the group
``multiref.metrics.tokenizers`` (loaded on first use of ``name``). ``factory()`` returns the
``str -> list[str]`` function. The ``lsdscc`` dataset package provides ``lsdscc`` this way
(the corpus's text convention, :mod:`lsdscc.corpus.tokenizer`); the ``multiref`` command
registers it explicitly, so it also works from a checkout that is not installed.

Any of them can be combined with lower-casing (``get_tokenizer(name, lowercase=True)``).
"""

from __future__ import annotations

import functools
from typing import Callable

from multiref.util.defaults import TOKENIZER as DEFAULT_TOKENIZER

Tokenizer = Callable[[str], list]

#: The built-in tokenizers; :func:`tokenizer_names` adds the plug-ins.
TOKENIZER_NAMES = ("whitespace", "treebank", "nltk", "tweet", "13a", "char")
ENTRY_POINT_GROUP = "multiref.metrics.tokenizers"
_FACTORIES: dict = {}  # name -> factory, registered explicitly


def _whitespace(text: str) -> list:
    return text.split()


def _char(text: str) -> list:
    return [c for c in text if not c.isspace()]


def register_tokenizer(name: str, factory: Callable[[], Tokenizer]) -> None:
    """Make tokenizer ``name`` available; ``factory()`` (called on first use) returns it.

    ValueError for a built-in name, or for a name already registered with another factory
    (registering the same factory again does nothing)."""
    if name in TOKENIZER_NAMES:
        raise ValueError(f"tokenizer {name!r} is built in")
    if _FACTORIES.get(name, factory) is not factory:
        raise ValueError(f"tokenizer {name!r} is already registered")
    _FACTORIES[name] = factory
    _build.cache_clear()


@functools.lru_cache(maxsize=None)
def _entry_points() -> dict:
    """``{name: entry point}`` of the installed ``multiref.metrics.tokenizers`` plug-ins."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_without_scan(name: str) -> bool:
    """True when ``name`` is built in or registered: known without reading the installed
    packages' metadata (which :func:`tokenizer_names` does, for the installed plug-ins)."""
    return name in TOKENIZER_NAMES or name in _FACTORIES


class TokenizerChoices:
    """The names ``--tokenizer`` accepts, for argparse's ``choices``: a built-in or registered
    name is accepted without reading the installed packages' metadata (about 0.06 s of every
    run); the installed plug-ins are read only to list the names (``--help``, an error) or to
    look up a name that is neither."""

    def __contains__(self, name) -> bool:
        return known_without_scan(name) or name in tokenizer_names()

    def __iter__(self):
        return iter(tokenizer_names())


#: ``choices`` of every ``--tokenizer`` option (see :class:`TokenizerChoices`).
TOKENIZER_CHOICES = TokenizerChoices()


def tokenizer_names() -> tuple:
    """Every tokenizer name: the built-in ones, then the plug-ins (registered or installed), sorted."""
    plugins = (set(_FACTORIES) | set(_entry_points())) - set(TOKENIZER_NAMES)
    return TOKENIZER_NAMES + tuple(sorted(plugins))


def _plugin(name: str) -> Tokenizer:
    factory = _FACTORIES.get(name)
    if factory is None and name in _entry_points():
        factory = _entry_points()[name].load()
    if factory is None:
        raise ValueError(f"unknown tokenizer {name!r}; choose one of: {', '.join(tokenizer_names())}")
    return factory()


@functools.lru_cache(maxsize=None)
def _build(name: str) -> Tokenizer:
    if name == "whitespace":
        return _whitespace
    if name == "char":
        return _char
    if name == "treebank":
        from nltk.tokenize import TreebankWordTokenizer

        return TreebankWordTokenizer().tokenize
    if name == "nltk":
        from nltk.tokenize import word_tokenize

        return functools.partial(word_tokenize, preserve_line=True)
    if name == "tweet":
        from nltk.tokenize import TweetTokenizer

        return TweetTokenizer().tokenize
    if name == "13a":
        try:
            from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
        except ImportError as exc:  # pragma: no cover - sacrebleu is a declared dependency
            raise ValueError("tokenizer '13a' needs the sacrebleu package") from exc
        tok = Tokenizer13a()
        return lambda text: tok(text).split()
    return _plugin(name)


def get_tokenizer(name: str = DEFAULT_TOKENIZER, lowercase: bool = False) -> Tokenizer:
    """Return a function ``str -> list[str]`` for tokenizer ``name``.

    Raises ``ValueError`` naming the choices when ``name`` is unknown (neither built in nor
    a registered or installed plug-in).
    """
    base = _build(name)
    if not lowercase:
        return base
    return lambda text: base(text.lower())


def tokenize_all(texts, name: str = DEFAULT_TOKENIZER, lowercase: bool = False) -> list:
    """``[get_tokenizer(name, lowercase)(text) for text in texts]`` for strings ``texts``; the
    whitespace tokenizer without lower-casing maps ``str.split`` in C (no Python call per text).
    The caller checks that every text is a string."""
    tokenize = get_tokenizer(name, lowercase)
    return list(map(str.split if tokenize is _whitespace else tokenize, texts))

