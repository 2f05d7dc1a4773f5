"""Threads -> single-turn pairs and multi-turn conversations (docs/algorithms.md#corpus-pairs-and-conversations).

A thread is a submission (``t3_``) and its comments (``t1_``), rebuilt from the records that
share a ``link_id``. Pure functions over :class:`lsdscc.corpus.records.Post` and token tuples:

- :func:`resolve_thread` keeps one record per fullname and makes the thread a tree: comments
  on a parent cycle (:func:`parent_cycles`) become dead letters, their replies are dropped;
  :func:`clean_thread` cleans and
  tokenizes every text once (steps 1-4) into the thread's nodes (:func:`prepare_thread`: both).
- :func:`apply_vocabulary` applies the vocabulary (steps 5-6); :func:`thread_pairs` makes one
  pair per comment whose parent is present (query = parent, the submission's title + body for
  a top-level comment; response = the comment) and :func:`thread_conversations` one
  conversation per root-to-leaf chain, both pruned by length (step 7)
  (:func:`thread_examples`: all three). They yield outcomes (:mod:`lsdscc.corpus.outcomes`):
  ``Kept(row)`` with a :class:`SingleTurnRow` or :class:`MultiTurnRow`, ``Dropped(reason)``
  for every example not kept, and for pairs a :class:`PairLengths` before length pruning.
- :func:`dedup_key` and :func:`smallest_id` are the exact-duplicate rule (the smallest id of
  the rows sharing a content key is kept; :func:`smallest_ref` the same on ``(id, thread_id)``);
  :func:`add_response_numbers` numbers a shard's pairs.
- :func:`pack_rows` / :func:`unpack_rows`: a thread's rows of one config as one tuple holding
  each post's text once, the form rows take between the job's steps and its writer.
- :func:`split_of` / :func:`shard_of` hash the thread id, so reruns agree.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from typing import Iterable, Iterator, NamedTuple

from lsdscc.corpus.cleaning import clean_and_count_all, clean_and_tokenize
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import DELETED, TITLE_ONLY, Post


class Node(NamedTuple):
    """One cleaned post of a thread: fullname, parent's fullname ("" for the root), time, and
    its tokens space-joined (one string: a tenth of the memory of a tuple of tokens, which
    matters while the local runner holds every thread between the two vocabulary passes)."""

    id: str
    parent_id: str
    created_utc: int
    text: str


class Thread(NamedTuple):
    """A thread between the job's stages: its id and its :class:`Node` s, sorted by id."""

    link_id: str
    nodes: list[Node]


def resolve_thread(thread_id: str, posts: Iterable[Post]) -> tuple[tuple, Counter, tuple]:
    """The posts of one thread (the records sharing a ``link_id``), one per fullname, sorted by
    id, as a tree.

    Deletion wins: a fullname with a tombstone among its copies (a post deleted or removed in
    any input: kind :data:`~lsdscc.corpus.records.DELETED`) is left out whatever its other
    copies say, counted once as ``dropped-deleted-in-another-copy`` when one of them had
    text; a submission with a :data:`~lsdscc.corpus.records.TITLE_ONLY` copy (its self-text
    deleted) keeps only its title. Otherwise a fullname seen twice keeps the copy with the
    latest ``created_utc`` then the longest text (dumps can repeat a record); each extra copy
    counts as ``dropped-duplicate-id``; a thread whose submission is missing counts as
    ``threads-without-submission``. Whatever the input says, the result holds no parent
    cycle: a comment on one (a self-parent, two comments naming each other, a longer loop;
    :func:`parent_cycles`) is taken out and counted as ``rejected-parent-cycle``, a comment
    whose chain of parents runs into a cycle is taken out and counted as
    ``dropped-below-parent-cycle``; the rest of the thread is kept. The result does not
    depend on the order of ``posts``.

    Returns ``(posts, counts, rejected)``; ``rejected``: ``(post, detail)`` for every post on
    a cycle, sorted by id, for the dead letters.
    """
    counts: Counter = Counter()
    chosen: dict[str, Post] = {}
    deleted = set()
    for post in sorted(posts):
        if post.kind == DELETED:
            deleted.add(post.id)
            continue
        old = chosen.get(post.id)
        if old is not None:
            counts["dropped-duplicate-id"] += 1
            if _copy_rank(post) <= _copy_rank(old):
                continue
        chosen[post.id] = post
    for post_id in deleted.intersection(chosen):
        del chosen[post_id]
        counts["dropped-deleted-in-another-copy"] += 1
    if thread_id not in chosen:
        counts["threads-without-submission"] += 1
    cycles, below = parent_cycles({i: p.parent_id for i, p in chosen.items()})
    rejected = []
    for cycle in cycles:
        loop = " -> ".join(cycle[:10] + [cycle[0]] if len(cycle) <= 10 else cycle[:10] + ["..."])
        for member in cycle:
            rejected.append((chosen.pop(member), f"{member} in thread {thread_id}: its parent chain loops ({loop})"))
    for comment in below:
        del chosen[comment]
    if cycles:
        counts["rejected-parent-cycle"] += len(rejected)
    if below:
        counts["dropped-below-parent-cycle"] += len(below)
    return tuple(chosen[i] for i in sorted(chosen)), counts, tuple(sorted(rejected))


def _copy_rank(post: Post) -> tuple:
    """Of two copies of a post, the one with the larger rank is kept: a submission's title-only
    copy first (its self-text was deleted), then the latest, then the longest text."""
    return post.kind == TITLE_ONLY, post.created_utc, len(post.text), post.text


def parent_cycles(parents: dict) -> tuple[list, list]:
    """The parent cycles of a thread, in linear time. ``parents``: fullname -> parent's
    fullname ("" or an id not in ``parents``: the chain ends there).

    Returns ``(cycles, below)``: each cycle as the list of its ids in parent order starting
    from its smallest id, sorted; ``below``: the sorted ids whose chain of parents runs into
    a cycle without being on it. Every other id's chain ends, at the root or a missing parent.
    """
    state: dict = {}  # id -> "tree", "cycle" or "below"
    cycles = []
    for start in sorted(parents):
        path, on_path, node = [], {}, start
        while node in parents and node not in state and node not in on_path:
            on_path[node] = len(path)
            path.append(node)
            node = parents[node]
        if node in on_path:  # a cycle not seen before: the path from node on
            loop = path[on_path[node]:]
            first = loop.index(min(loop))
            cycles.append(loop[first:] + loop[:first])
            state.update((n, "cycle") for n in loop)
            del path[on_path[node]:]
            outcome = "below"
        else:
            outcome = "below" if state.get(node) in ("cycle", "below") else "tree"
        state.update((n, outcome) for n in path)
    return sorted(cycles), sorted(n for n, s in state.items() if s == "below")


def clean_thread(posts: Iterable[Post], config: CorpusConfig, words: Counter | None = None) -> tuple:
    """Steps 1-4 and tokenization of every post of a thread, once: one :class:`Node` per post.
    ``words``: when given, each post's tokens are also counted into it (the first pass of
    step 5, from the token lists at hand instead of splitting the texts again)."""
    options = (config.tokenizer, config.lowercase, config.text_convention)
    posts = tuple(posts)
    if words is not None:  # (the thread's counts go into words once, in the order of clean_and_count's)
        texts = clean_and_count_all([post.text for post in posts], words, *options)
    else:
        texts = [" ".join(clean_and_tokenize(post.text, *options)) for post in posts]
    return tuple(Node(post.id, post.parent_id, post.created_utc, text) for post, text in zip(posts, texts))


def prepare_thread(thread_id: str, posts: Iterable[Post], config: CorpusConfig) -> tuple[tuple, Counter]:
    """:func:`resolve_thread` then :func:`clean_thread`: ``(nodes sorted by id, counts)``."""
    resolved, counts, _ = resolve_thread(thread_id, posts)
    return clean_thread(resolved, config), counts


def _hash_fraction(key: str, salt: str) -> float:
    digest = hashlib.sha1(f"{salt}:{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@functools.lru_cache(maxsize=1 << 16)  # a thread's rows come in runs; the digest is per thread
def split_of(thread_id: str, validation_fraction: float) -> str:
    """``validation`` for a fixed share of threads (by a hash of the id), else ``train``."""
    return "validation" if _hash_fraction(thread_id, "split") < validation_fraction else "train"


def shard_of(thread_id: str, num_shards: int) -> int:
    """The parquet shard of a thread's rows (a hash of the id, so every query's responses share one)."""
    from multiref.output.hfdata import shard_index

    return shard_index(thread_id, num_shards)


def apply_vocabulary(nodes: Iterable[Node], vocabulary) -> tuple:
    """Steps 5-6 on a thread's nodes: rare run-together words split, non-ASCII tokens dropped,
    words outside the kept vocabulary replaced by ``<unk>`` (:meth:`lsdscc.corpus.vocab.Vocabulary.apply`).
    Each text it returns is its tokens joined by single spaces (the unknown-word token is one
    token: :class:`~lsdscc.corpus.config.CorpusConfig` checks it), as :func:`token_count` needs."""
    apply, out = vocabulary.apply_text, []
    for node in nodes:
        text = apply(node.text)
        out.append(node if text == node.text else Node(node.id, node.parent_id, node.created_utc, text))
    return tuple(out)


class SingleTurnRow(NamedTuple):
    """A single-turn pair, its fields in the ``single_turn`` config's column order.
    ``response_number`` is None until the writer sets it (:func:`add_response_numbers`)."""

    id: str
    thread_id: str
    query_id: str
    response_id: str
    query: str
    response: str
    created_utc: int
    response_number: int | None = None

    config = "single_turn"  # the dataset config (and exact-duplicate lane) of this row type


class MultiTurnRow(NamedTuple):
    """A root-to-leaf conversation, its fields in the ``multi_turn`` config's column order."""

    id: str
    thread_id: str
    comment_ids: list[str]
    turns: list[str]
    created_utc: int

    config = "multi_turn"


class PairLengths(NamedTuple):
    """The token lengths of a candidate pair's query and response, before length pruning."""

    query: int
    response: int


def thread_examples(thread_id: str, nodes: tuple, vocabulary, config: CorpusConfig) -> Iterator[tuple]:
    """Pairs and conversations of one thread after steps 5-7 (:func:`apply_vocabulary`, then
    :func:`thread_pairs` and :func:`thread_conversations`): their outcomes, pairs first."""
    nodes = apply_vocabulary(nodes, vocabulary)
    yield from thread_pairs(thread_id, nodes, config)
    yield from thread_conversations(thread_id, nodes, config)


def token_count(text: str) -> int:
    """How many tokens a final text holds: ``len(text.split())`` for a text of tokens joined by
    single spaces (as :func:`apply_vocabulary` makes them), counted without making the list."""
    return text.count(" ") + 1 if text else 0


#: The last thread's ``(nodes, texts by id, token counts by id)``: Pairs and Conversations get the
#: same tuple of nodes one after the other (one fused stage), and the second reuses them. One
#: tuple, swapped whole, compared by identity (it holds the nodes, so no other tuple has their id).
_LAST_INDEX: tuple = ((), {}, {})


def _thread_index(nodes: tuple) -> tuple[dict, dict]:
    """``({id: text}, {id: token_count(text)})`` of a thread's final nodes (kept for the next
    call when they are a tuple: a list could change in between)."""
    global _LAST_INDEX
    last = _LAST_INDEX
    if last[0] is nodes:
        return last[1], last[2]
    text = {node.id: node.text for node in nodes}
    length = {node.id: token_count(node.text) for node in nodes}
    if type(nodes) is tuple:
        _LAST_INDEX = (nodes, text, length)
    return text, length


def thread_pairs(thread_id: str, nodes: tuple, config: CorpusConfig) -> Iterator[Kept | Dropped | PairLengths]:
    """Single-turn pairs of one thread whose texts are final (after :func:`apply_vocabulary`).

    One pair per comment whose parent is present (query = parent, response = the comment),
    pruned by length (step 7). Yields ``Kept(SingleTurnRow)``, ``Dropped(counter name)``, and
    a :class:`PairLengths` for every pair before length pruning.
    """
    text, length = _thread_index(nodes)
    max_q, max_r = config.max_query_tokens, config.max_response_tokens
    for node in nodes:
        if not node.parent_id:
            continue
        parent = node.parent_id
        if parent not in text:
            yield Dropped("dropped-missing-parent")
            continue
        q_len, r_len = length[parent], length[node.id]
        yield PairLengths(q_len, r_len)
        if q_len == 0 or r_len == 0:
            yield Dropped("dropped-empty-after-cleaning")
        elif q_len > max_q:
            yield Dropped("dropped-query-too-long")
        elif r_len > max_r:
            yield Dropped("dropped-response-too-long")
        else:
            yield Kept(SingleTurnRow(node.id, thread_id, parent, node.id, text[parent], text[node.id], node.created_utc))


def thread_conversations(thread_id: str, nodes: tuple, config: CorpusConfig) -> Iterator[Kept | Dropped]:
    """Root-to-leaf conversations of one thread whose texts are final; yields
    ``Kept(MultiTurnRow)`` and ``Dropped(counter name)``. ``nodes`` should form a tree
    (:func:`resolve_thread` makes it one); a chain that loops anyway is dropped as broken."""
    text, length = _thread_index(nodes)
    by_id = {node.id: node for node in nodes}
    children: set = {node.parent_id for node in nodes if node.parent_id}
    for leaf in nodes:
        if not leaf.parent_id or leaf.id in children:
            continue
        chain = _root_chain(leaf, by_id, len(nodes))
        if chain is None or chain[0] != thread_id:
            yield Dropped("multi-turn-dropped-broken-chain")
        elif len(chain) < config.min_turns:
            yield Dropped("multi-turn-dropped-too-few-turns")
        elif any(length[c] == 0 for c in chain):
            yield Dropped("multi-turn-dropped-empty-turn")
        elif any(length[c] > config.max_query_tokens for c in chain[:-1]) or length[chain[-1]] > config.max_response_tokens:
            yield Dropped("multi-turn-dropped-too-long")
        else:
            yield Kept(MultiTurnRow(leaf.id, thread_id, chain, [text[c] for c in chain], leaf.created_utc))


def _root_chain(leaf: Node, by_id: dict, limit: int) -> list | None:
    """The ids from the root down to ``leaf``, or None when a parent is missing or the chain
    is longer than the thread (a loop)."""
    chain = [leaf.id]
    current = leaf
    while current.parent_id:
        parent = by_id.get(current.parent_id)
        if parent is None or len(chain) > limit:
            return None
        chain.append(parent.id)
        current = parent
    chain.reverse()
    return chain


def dedup_key(row: SingleTurnRow | MultiTurnRow) -> bytes:
    """The exact-duplicate key of a row: a digest of its config and its query and response,
    or of all its turns."""
    if isinstance(row, SingleTurnRow):
        content = row.query + "\n" + row.response
    else:
        content = "\n".join(row.turns)
    return hashlib.sha1(f"{row.config}\n{content}".encode("utf-8")).digest()


def pack_rows(thread_id: str, rows) -> tuple:
    """The rows of one thread and config (all :class:`SingleTurnRow` or all :class:`MultiTurnRow`)
    as one plain tuple in which each post's id and text appear once: ``(thread_id, ids, texts,
    rows)``; a row refers to posts by their index in ``ids`` (``texts[i]``: the text of
    ``ids[i]``, or None when no row quotes it): ``(id, query, response, created_utc)`` for a
    single-turn row, ``(id, (turn, ...), created_utc)`` for a multi-turn one. A thread's rows
    share their posts (a query's responses, the upper turns of its conversations), so this
    is a fraction of the rows' size. :func:`unpack_rows` makes the rows again."""
    index: dict = {}
    texts: list = []

    def ref(post_id, text=None):
        i = index.get(post_id)
        if i is None:
            i = index[post_id] = len(texts)
            texts.append(text)
        elif text is not None:
            texts[i] = text
        return i

    packed = []
    for row in rows:
        if isinstance(row, SingleTurnRow):
            packed.append((ref(row.id), ref(row.query_id, row.query), ref(row.response_id, row.response),
                           row.created_utc))
        else:
            turns = tuple(ref(c, t) for c, t in zip(row.comment_ids, row.turns))
            packed.append((ref(row.id), turns, row.created_utc))
    return thread_id, tuple(index), tuple(texts), tuple(packed)


def unpack_rows(config: str, packed: tuple) -> list:
    """:func:`pack_rows`' tuple -> the rows of ``config`` it holds, equal to those packed."""
    thread_id, ids, texts, rows = packed
    if config == "single_turn":
        return [SingleTurnRow(ids[i], thread_id, ids[q], ids[r], texts[q], texts[r], t) for i, q, r, t in rows]
    return [MultiTurnRow(ids[i], thread_id, [ids[c] for c in turns], [texts[c] for c in turns], t)
            for i, turns, t in rows]


def smallest_ref(refs):
    """Of the rows sharing a content key, given as ``(id, thread_id)``, the one kept: the
    smallest. The same row :func:`smallest_id` keeps: a config's rows are unique by
    ``(id, thread_id)`` (one row per post of a thread), and rows sharing a content key share
    their text, so the whole rows compare as these two fields do."""
    return min(refs)


def smallest_id(a, b):
    """Of two rows sharing a content key (or None: no row yet), the one kept: the smaller id
    (then the smaller row, so the choice never depends on arrival order)."""
    if a is None:
        return b
    if b is None:
        return a
    return b if (b.id, b) < (a.id, a) else a


def add_response_numbers(rows: list) -> list:
    """``rows``: the :class:`SingleTurnRow` of one shard -> the same with ``response_number``
    (how many kept responses share the row's query_id), sorted by id. Rows of one query
    always share a shard (shards hash the thread id), so this is exact."""
    per_query = Counter(r.query_id for r in rows)
    numbered = (SingleTurnRow(*r[:-1], per_query[r.query_id]) for r in rows)  # response_number is the last field
    return sorted(numbered, key=lambda r: r.id)
