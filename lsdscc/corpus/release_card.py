"""What the LSDSCC dataset card says about its release: terms, citation, sources, months.

- :data:`CARD_DATA`: the Hub fields of the card's YAML (license: Reddit's terms, since the
  text is Reddit users' posts; ``language: en``; task categories; ``size_categories`` is
  added from the rows by :func:`multiref.output.hfdata.card_front`).
- :data:`CITATIONS`: the LSDSCC paper's BibTeX (from :mod:`multiref.citations`).
- :func:`sections`: Markdown sections built from ``stats.json``: the source dump files
  (names, sizes, SHA-256, records, first/last ``created_utc``), records by month with the
  months flagged as far below their neighbours, the fields seen per era, and what was
  dropped as deleted or removed.
"""

from __future__ import annotations

from typing import Mapping

from multiref import citations

CARD_DATA = {
    "pretty_name": "LSDSCC: r/movies conversations",
    "license": "other",
    "license_name": "reddit-user-agreement",
    "license_link": "https://redditinc.com/policies/user-agreement",
    "language": ["en"],
    "multilinguality": ["monolingual"],
    "annotations_creators": ["no-annotation"],
    "language_creators": ["found"],
    "source_datasets": ["original"],
    "task_categories": ["text-generation"],
    "task_ids": ["dialogue-modeling", "dialogue-generation"],
    "tags": ["reddit", "multi-reference", "dialogue-evaluation"],
}

CITATIONS = (citations.XU_2018,)

TERMS = ("The text is Reddit users' posts: it is published under Reddit's User Agreement and Data API "
         "terms, not an open licence (`license: other`). Check that your use is allowed before you "
         "publish or redistribute it; to share the dataset without text, publish its ids "
         "(`multiref lsdscc export-ids`) and let others rebuild it from their own dumps "
         "(`multiref lsdscc rehydrate`).")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:,} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return str(n)


def sources_section(stats: Mapping) -> str:
    """The source files as a Markdown table (or a note for in-memory records)."""
    from lsdscc.corpus.eras import utc_text

    files = stats.get("files") or []
    if not files:
        return "Built from records given in memory (no dump files)."
    lines = ["Built from these dump files (digests computed while reading; `dataset_meta.json` lists them "
             "too as `source_files`):", "",
             "| file | size | records | first created_utc | last created_utc | SHA-256 |",
             "| --- | ---: | ---: | --- | --- | --- |"]
    for f in files:
        lines.append(f"| {f['name']} | {_size(f['bytes'])} | {f['records']:,} | {utc_text(f['first_created_utc']) or '-'} "
                     f"| {utc_text(f['last_created_utc']) or '-'} | `{f['sha256']}` |")
    return "\n".join(lines)


def months_section(stats: Mapping) -> str:
    """Records by month, the flagged months and the fields seen per era."""
    months, low = stats.get("months") or {}, stats.get("low_months") or []
    if not months:
        return "No records of the subreddits were read."
    lines = ["Records of the subreddits read, by month of `created_utc` (UTC):", "",
             "| month | records |", "| --- | ---: |"]
    flagged = {m["month"] for m in low}
    lines += [f"| {m}{' (flagged)' if m in flagged else ''} | {n:,} |" for m, n in sorted(months.items())]
    lines.append("")
    if low:
        lines.append("Months with far fewer records than both neighbours (under half of each; e.g. the "
                     "June 2023 blackout, or a missing dump file):")
        lines += [f"- {m['month']}: {m['records']:,} records (before {m['previous']:,}, after {m['next']:,})"
                  for m in low]
    else:
        lines.append("No month has far fewer records than its neighbours.")
    lines += ["", "Top-level fields seen per dump era (the schema drifts: `lsdscc.corpus.eras`):", ""]
    for era, fields in sorted((stats.get("fields_by_era") or {}).items()):
        lines.append(f"- {era} ({len(fields)} fields): " + ", ".join(f"`{f}`" for f in fields))
    return "\n".join(lines)


def privacy_section(stats: Mapping) -> str:
    """Usernames, deletions, and the time range, as this build handled them."""
    options, counts = stats["options"], stats["counts"]
    c = lambda name: int(counts.get(name, 0))  # noqa: E731
    keep = not options.get("drop_deleted_later", True)
    lines = [
        "No usernames are kept (authors are read only to drop bots). Posts whose text is Reddit's "
        "deletion or removal marker are dropped, and no deleted text is ever restored.",
        f"Deleted before the dump was made (`_meta.was_initially_deleted`): {c('dropped-initially-deleted'):,} "
        "dropped (always).",
        (f"Deleted or removed after it (`_meta.was_deleted_later`, `_meta.removal_type`): **kept**, as asked "
         "(`--keep-deleted-later`); these posts' authors or moderators have taken them down since."
         if keep else
         f"Deleted after it (`_meta.was_deleted_later`): {c('dropped-deleted-later'):,} dropped; removed after "
         f"it (`_meta.removal_type`): {c('dropped-removed-later'):,} dropped."),
        "Provenance: thread id, comment ids and creation times.",
    ]
    if c("dropped-deleted-in-another-copy"):  # (a line only when it happened: the sample's card stays as it was)
        lines.insert(3, f"Posts with text in one input and deleted or removed in another: "
                        f"{c('dropped-deleted-in-another-copy'):,} left out (any deleted copy wins).")
    if options.get("since") is not None or options.get("until") is not None:
        from lsdscc.corpus.eras import utc_text

        lines.append(f"Time range: threads whose submission was created from {utc_text(options.get('since')) or 'the start'} "
                     f"to {utc_text(options.get('until')) or 'the end'} (inclusive), with all their comments; "
                     f"{c('dropped-out-of-range'):,} posts of other threads dropped.")
    return "\n\n".join(lines)


def sections(stats: Mapping) -> dict:
    """The card's release sections, by heading."""
    return {"Source dumps": sources_section(stats), "Months and schema": months_section(stats),
            "Privacy": privacy_section(stats), "Terms of use": TERMS}
