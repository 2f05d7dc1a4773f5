"""Threads -> single-turn pairs and multi-turn conversations (ALGORITHMS.md section 1, "Pairs").

A thread is a submission (``t3_``) and its comments (``t1_``), rebuilt from the records that
share a ``link_id``. Pure functions over :class:`lsdscc.records.Post` and token tuples:

- :func:`prepare_thread` resolves repeated ids, cleans and tokenizes every text once
  (steps 1-4), and returns the thread's nodes.
- :func:`thread_examples` applies the vocabulary (steps 5-6), then makes one pair per comment
  whose parent is present (query = parent, the submission's title + body for a top-level
  comment; response = the comment) and one conversation per root-to-leaf chain, and prunes
  them by length (step 7). Every example that is not kept is reported with its reason.
- :func:`split_of` / :func:`shard_of` hash the thread id, so reruns agree.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Iterable, Iterator, NamedTuple

from lsdscc.cleaning import clean_and_tokenize
from lsdscc.config import CorpusConfig
from lsdscc.records import Post


class Node(NamedTuple):
    """One cleaned post of a thread: fullname, parent's fullname ("" for the root), time, and
    its tokens space-joined (one string: a tenth of the memory of a tuple of tokens, which
    matters while the local runner holds every thread between the two vocabulary passes)."""

    id: str
    parent_id: str
    created_utc: int
    text: str


def prepare_thread(thread_id: str, posts: Iterable[Post], config: CorpusConfig) -> tuple[tuple, Counter]:
    """Nodes of one thread, sorted by id, each text cleaned and tokenized once.

    A fullname seen twice keeps the copy with the latest ``created_utc`` then the longest
    text (dumps can repeat a record); each extra copy counts as ``dropped-duplicate-id``.
    Returns ``(nodes, counts)``.
    """
    counts: Counter = Counter()
    chosen: dict[str, Post] = {}
    for post in posts:
        old = chosen.get(post.id)
        if old is not None:
            counts["dropped-duplicate-id"] += 1
            if (post.created_utc, len(post.text), post.text) <= (old.created_utc, len(old.text), old.text):
                continue
        chosen[post.id] = post
    nodes = []
    for post_id in sorted(chosen):
        post = chosen[post_id]
        text = " ".join(clean_and_tokenize(post.text, config.tokenizer, config.lowercase, config.text_convention))
        nodes.append(Node(post.id, post.parent_id, post.created_utc, text))
    if thread_id not in chosen:
        counts["threads-without-submission"] += 1
    return tuple(nodes), counts


def node_token_counts(nodes: Iterable[Node]) -> Counter:
    """Token counts of a thread's texts (each post counted once), for the vocabulary pass."""
    counts: Counter = Counter()
    for node in nodes:
        counts.update(node.text.split())
    return counts


def _hash_fraction(key: str, salt: str) -> float:
    digest = hashlib.sha1(f"{salt}:{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(thread_id: str, validation_fraction: float) -> str:
    """``validation`` for a fixed share of threads (by a hash of the id), else ``train``."""
    return "validation" if _hash_fraction(thread_id, "split") < validation_fraction else "train"


def shard_of(thread_id: str, num_shards: int) -> int:
    """The parquet shard of a thread's rows (a hash of the id, so every query's responses share one)."""
    return int(_hash_fraction(thread_id, "shard") * num_shards) if num_shards > 1 else 0


def thread_examples(thread_id: str, nodes: tuple, vocabulary, config: CorpusConfig) -> Iterator[tuple]:
    """Pairs and conversations of one thread after steps 5-7.

    Yields ``("single_turn", row)``, ``("multi_turn", row)``, ``("drop", counter_name)``, and
    ``("lengths", (query_len, response_len))`` for every pair before length pruning.
    Rows follow the CONTRACTS.md columns (``response_number`` is added when writing).
    """
    text: dict[str, str] = {}
    length: dict[str, int] = {}
    by_id: dict[str, Node] = {}
    for node in nodes:
        tokens = vocabulary.apply(node.text.split())
        text[node.id] = " ".join(tokens)
        length[node.id] = len(tokens)
        by_id[node.id] = node
    children: dict[str, list] = {}
    for node in nodes:
        if node.parent_id:
            children.setdefault(node.parent_id, []).append(node.id)
    max_q, max_r = config.max_query_tokens, config.max_response_tokens
    for node in nodes:
        if not node.parent_id:
            continue
        parent = node.parent_id
        if parent not in by_id:
            yield ("drop", "dropped-missing-parent")
            continue
        q_len, r_len = length[parent], length[node.id]
        yield ("lengths", (q_len, r_len))
        if q_len == 0 or r_len == 0:
            yield ("drop", "dropped-empty-after-cleaning")
        elif q_len > max_q:
            yield ("drop", "dropped-query-too-long")
        elif r_len > max_r:
            yield ("drop", "dropped-response-too-long")
        else:
            yield (
                "single_turn",
                {
                    "id": node.id,
                    "thread_id": thread_id,
                    "query_id": parent,
                    "response_id": node.id,
                    "query": text[parent],
                    "response": text[node.id],
                    "created_utc": node.created_utc,
                },
            )
    yield from _conversations(thread_id, nodes, by_id, children, text, length, config)


def _conversations(thread_id, nodes, by_id, children, text, length, config) -> Iterator[tuple]:
    for leaf in nodes:
        if not leaf.parent_id or leaf.id in children:
            continue
        chain = [leaf.id]
        current = leaf
        broken = False
        while current.parent_id:
            parent = by_id.get(current.parent_id)
            if parent is None:
                broken = True
                break
            chain.append(parent.id)
            current = parent
        if broken or current.id != thread_id:
            yield ("drop", "multi-turn-dropped-broken-chain")
            continue
        chain.reverse()
        if len(chain) < config.min_turns:
            yield ("drop", "multi-turn-dropped-too-few-turns")
            continue
        if any(length[c] == 0 for c in chain):
            yield ("drop", "multi-turn-dropped-empty-turn")
            continue
        if any(length[c] > config.max_query_tokens for c in chain[:-1]) or length[chain[-1]] > config.max_response_tokens:
            yield ("drop", "multi-turn-dropped-too-long")
            continue
        yield (
            "multi_turn",
            {
                "id": leaf.id,
                "thread_id": thread_id,
                "comment_ids": chain,
                "turns": [text[c] for c in chain],
                "created_utc": leaf.created_utc,
            },
        )


def dedup_key(kind: str, row: dict) -> bytes:
    """The exact-duplicate key of a row (a digest of query and response, or of all turns)."""
    content = row["query"] + "\n" + row["response"] if kind == "single_turn" else "\n".join(row["turns"])
    return hashlib.sha1(f"{kind}\n{content}".encode("utf-8")).digest()


def add_response_numbers(rows: list[dict]) -> list[dict]:
    """Set ``response_number`` (how many kept responses share the row's query_id); sort by id.

    Rows of one query always share a shard (shards hash the thread id), so this is exact.
    """
    per_query = Counter(r["query_id"] for r in rows)
    out = [dict(r, response_number=per_query[r["query_id"]]) for r in rows]
    out.sort(key=lambda r: r["id"])
    return out


def duplicate_losers(entries: Iterable[tuple]) -> tuple[list, set]:
    """Exact-duplicate resolution for the rows that share one content digest.

    ``entries``: ``(kind, id, ...)`` tuples (extra fields, e.g. the row's bucket, ride along).
    Every ``(kind, id)`` but the smallest loses. Returns ``(sorted entries, losing (kind, id)
    pairs)``; ``len(entries) - 1`` rows are dropped as duplicates.
    """
    entries = sorted(entries)
    return entries, {tuple(e[:2]) for e in entries[1:]}
