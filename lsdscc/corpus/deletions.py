"""Deletions recorded by a dump's second retrieval (Arctic Shift's ``_meta``, from 2023-11).

Arctic Shift re-reads every post some weeks after it was first archived and records what it
found in ``_meta``: ``was_deleted_later`` (the author deleted it), ``removal_type`` (set when
moderators, Reddit or legal removal took it down: ``moderator``, ``reddit``, ``legal``, ...)
and ``was_initially_deleted`` (already gone at the first retrieval). The text in the dump is
the first retrieval's: publishing it would restore what a user or moderator took down.

:func:`meta_drop_reason` maps ``_meta`` to the reason a record is dropped:

- ``initially-deleted``: always dropped (the text is not the author's to publish);
- ``removed-later`` and ``deleted-later``: dropped unless the user asks to keep them
  (``--keep-deleted-later``, recorded in the card as ``drop_deleted_later: false``).

Text is never restored: a body that reads ``[deleted]`` / ``[removed]`` is dropped earlier
(:func:`lsdscc.corpus.records.normalize`) whatever ``_meta`` says, and so is a record whose
first retrieval already says it was taken down (:func:`field_drop_reason`).
"""

from __future__ import annotations

#: Drop reasons of this module (counted as ``dropped-<reason>``), in the order they are checked.
REASONS = ("initially-deleted", "removed-later", "deleted-later")
_TRUE = (True, 1, "true", "True", "1")


def _is_true(value) -> bool:
    return value is not None and not isinstance(value, float) and value in _TRUE


def meta_drop_reason(meta, keep_later: bool = False) -> str | None:
    """The drop reason that ``_meta`` (any value; only a dict counts) gives, or None.

    ``keep_later``: keep records deleted or removed after their first retrieval (never
    those deleted before it).
    """
    if not isinstance(meta, dict):
        return None
    if _is_true(meta.get("was_initially_deleted")):
        return "initially-deleted"
    if keep_later:
        return None
    removal = meta.get("removal_type")
    if isinstance(removal, str) and removal.strip():  # "moderator", "reddit", "legal", ... (null when not removed)
        return "removed-later"
    if _is_true(meta.get("was_deleted_later")):
        return "deleted-later"
    return None


def field_drop_reason(record: dict) -> str | None:
    """``deleted`` or ``removed`` when a field of the record's first retrieval says the post was
    taken down, else None. The fields, as the dumps' schema statistics show them per era:
    ``removed_by_category`` (submissions, 2019 on: ``moderator``, ``reddit``, ``deleted``,
    ``author``, ``automod_filtered``, ``content_takedown``, ``copyright_takedown``, null when
    the post stands), ``removal_reason`` (``legal``, 2015 on), ``collapsed_reason_code``
    ``DELETED`` (comments, 2024 on) and ``removed: true``. Unlike ``_meta``, these are never
    kept (the first retrieval already had no text of the author's to publish)."""
    category = record.get("removed_by_category")
    if isinstance(category, str) and category.strip():
        return "deleted" if category.strip().lower() in ("deleted", "author") else "removed"
    reason = record.get("removal_reason")
    if isinstance(reason, str) and reason.strip():
        return "removed"
    code = record.get("collapsed_reason_code")
    if isinstance(code, str) and code.strip().upper() == "DELETED":
        return "deleted"
    return "removed" if record.get("removed") is True else None
