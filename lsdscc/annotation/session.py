"""One annotator's labelling session for ``multiref lsdscc annotate serve`` (docs/algorithms.md#test-set-step-6-annotation).

The session holds the annotation rows of ``test_candidates`` (the rows ``annotate export``
writes, :data:`lsdscc.annotation.roundtrip.COLUMNS`, with the proposed groups pre-filled) and the
annotator's labels, and writes them to the annotator's CSV after every change, in the format
``annotate import`` reads (:func:`lsdscc.annotation.roundtrip.write_rows`).

Rules:

- **resume**: when the CSV exists (written by an earlier session or by ``annotate export``)
  its ``relevant`` and ``group`` labels are loaded; its ``proposed_group`` column, when present,
  is kept; a column that ``annotate export`` does not write is an error (saving would drop it). Row ids must be those of ``test_candidates`` and reference texts unchanged
  (UserError naming ``file:line`` otherwise); rows the file lacks start unlabelled.
- **labels**: ``relevant`` is ``"1"``, ``"0"`` or ``""`` (not labelled yet); a relevant row
  needs a group label (one word, as ``annotate import`` requires); the group of a row that is
  not relevant is written empty. A query is *done* when all its candidates are labelled.
- **saves** are atomic (a temporary file beside the CSV, then ``os.replace``) and serialised
  by a lock, so two browser tabs never interleave a write; each change carries whole rows,
  and the last change to reach the server wins for a row.
- one server per CSV: :meth:`AnnotationSession.open` takes an exclusive lock on
  ``ANNOTATOR.csv.lock`` (released when the process ends, even when it is killed).

A file with unlabelled rows is well-formed but ``annotate import`` refuses it (``missing
relevance label``) until every query is done: a half-labelled query must not count.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Mapping, Sequence

from multiref.util.errors import UserError

from lsdscc.annotation import roundtrip as annotation
from lsdscc.annotation.config import OVERLAP_THRESHOLD

GROUP_LABEL = re.compile(r"^[^\s,;|/]{1,40}$")  # one word: what annotate import accepts as one group


def normalise_relevance(value: str) -> str:
    """``"1"``, ``"0"`` or ``""`` for a relevance cell (the spellings ``annotate import`` reads)."""
    value = (value or "").strip().lower()
    if value in annotation._TRUE:
        return "1"
    if value in annotation._FALSE:
        return "0"
    if value == "":
        return ""
    raise ValueError(value)


def check_label(row_id: str, relevant, group) -> tuple:
    """``(relevant, group)`` of a change after checking it; UserError naming the bad value."""
    if relevant not in ("1", "0", ""):
        raise UserError(f"row {row_id}: 'relevant' must be \"1\", \"0\" or \"\", got {relevant!r}")
    if not isinstance(group, str):
        raise UserError(f"row {row_id}: 'group' must be a string, got {type(group).__name__}")
    group = group.strip()
    if relevant != "1":
        return relevant, ""
    if not group:
        raise UserError(f"row {row_id}: a relevant row needs a group")
    if not GROUP_LABEL.match(group):
        raise UserError(f"row {row_id}: group {group!r} must be one word of at most 40 characters "
                        "(no spaces, commas, semicolons, bars or slashes)")
    return relevant, group


def read_labels(path: str, rows: Mapping[str, Mapping]) -> dict:
    """Labels of an existing annotator CSV: ``{row_id: (relevant, group, proposed_group|None)}``.

    ``rows`` maps row ids to their export rows. Unlike ``annotate import`` this accepts
    unlabelled rows and missing rows (an unfinished session).
    """
    labels: dict = {}
    references = {rid: row["reference"] for rid, row in rows.items()}
    for loc, rid, record in annotation.annotator_records(path, references, columns=annotation.COLUMNS):
        try:
            relevant = normalise_relevance(record.get("relevant"))
        except ValueError:
            raise UserError(f"{loc}: relevance of row {rid} must be 1/0 (yes/no) or empty, "
                            f"got {record.get('relevant')!r}") from None
        try:
            relevant, group = check_label(rid, relevant, record.get("group") or "")
        except UserError as exc:
            raise UserError(f"{loc}: {exc}") from None
        labels[rid] = (relevant, group, record.get("proposed_group"))
    return labels


def save_atomically(path: str, write) -> None:
    """Call ``write(fh)`` on a temporary file beside ``path``, then rename it over ``path``."""
    from multiref.output.file_output import write_atomically

    write_atomically(path, write)


class AnnotationSession:
    """The rows, labels and CSV of one annotator (module docstring)."""

    def __init__(self, rows: Sequence[dict], output: str, annotator: str = ""):
        from multiref.output.file_output import sidecar_name

        self.output = output
        self.lock_path = sidecar_name(output, "lock", hidden=False)  # ANNOTATOR.csv.lock, kept under 255 bytes
        self.annotator = annotator or os.path.splitext(os.path.basename(output))[0]
        self.rows = [dict(r) for r in rows]
        self.by_id = {r["row_id"]: r for r in self.rows}
        self.queries: list = []  # [{"id", "query", "stratum", "row_ids": [...]}] in candidate order
        for r in self.rows:
            if not self.queries or self.queries[-1]["id"] != r["row_id"].rsplit("#", 1)[0]:
                self.queries.append({"id": r["row_id"].rsplit("#", 1)[0], "query": r["query"],
                                     "stratum": r["stratum"], "row_ids": []})
            self.queries[-1]["row_ids"].append(r["row_id"])
        self._lock = threading.Lock()
        self._lock_file = None

    @classmethod
    def open(cls, dataset: str, output: str, annotator: str = "", overlap_threshold: float = OVERLAP_THRESHOLD) -> "AnnotationSession":
        """The session of ``output`` on the ``test_candidates`` of ``dataset``, resumed from
        ``output`` when it exists; takes the one-server lock and writes the CSV once."""
        from lsdscc.testset.assemble import read_candidates
        from multiref.output.file_output import check_output

        if not 0.0 < overlap_threshold <= 1.0:
            raise UserError(f"--overlap-threshold must be in (0, 1], got {overlap_threshold}")
        rows = annotation.export_rows(read_candidates(dataset), overlap_threshold)
        if not rows:
            raise UserError(f"{dataset}: test_candidates has no rows to annotate")
        session = cls(rows, output, annotator)
        if os.path.isdir(output):
            raise UserError(f"--output {output} is a folder; give the annotator's CSV file")
        check_output(output, "--output", [dataset])  # not inside the dataset folder
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        session.acquire()
        try:
            if os.path.exists(output):
                session.load(read_labels(output, session.by_id))
            session.save()
        except BaseException:
            session.release()
            raise
        return session

    def acquire(self) -> None:
        """Take the exclusive lock ``<output>.lock``; UserError when another server holds it."""
        import fcntl

        fh = open(self.lock_path, "w", encoding="utf-8")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise UserError(f"another annotation server is writing {self.output} (it holds {self.lock_path})") from None
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._lock_file = fh

    def release(self) -> None:
        """Drop the lock of :meth:`acquire` and its file."""
        if self._lock_file is not None:
            try:
                os.unlink(self.lock_path)
            except OSError:
                pass
            self._lock_file.close()
            self._lock_file = None

    def close(self) -> None:
        """Wait for a save in progress, then drop the lock (the server is stopping)."""
        with self._lock:
            self.release()

    def load(self, labels: Mapping[str, tuple]) -> None:
        for rid, (relevant, group, proposed) in labels.items():
            row = self.by_id[rid]
            row["relevant"], row["group"] = relevant, group
            if proposed:
                row["proposed_group"] = proposed

    def save(self) -> None:
        save_atomically(self.output, lambda fh: annotation.write_rows(fh, self.rows))

    # -- the page's view ----------------------------------------------------------------
    def is_done(self, query: Mapping) -> bool:
        return all(self.by_id[rid]["relevant"] != "" for rid in query["row_ids"])

    def progress(self) -> dict:
        done = sum(1 for q in self.queries if self.is_done(q))
        return {"done": done, "total": len(self.queries)}

    def overview(self) -> dict:
        """Annotator, progress, the query list, and where to resume (first query not done)."""
        with self._lock:
            done = [self.is_done(q) for q in self.queries]
            return {"mode": "annotate", "annotator": self.annotator, "output": os.path.abspath(self.output),
                    "queries": [{"id": q["id"], "query": q["query"], "done": d} for q, d in zip(self.queries, done)],
                    "resume": done.index(False) if False in done else 0, **self.progress()}

    def query_view(self, index: int) -> dict:
        """Query ``index`` (0-based) with its candidates and their labels."""
        if not 0 <= index < len(self.queries):
            raise UserError(f"query index {index} out of range 0..{len(self.queries) - 1}")
        with self._lock:
            q = self.queries[index]
            cands = [{k: self.by_id[rid][k] for k in ("row_id", "reference", "own", "proposed_group", "relevant", "group",
                                                      "source_query", "lucene_score", "doc2vec_cosine")}
                     for rid in q["row_ids"]]
            return {"index": index, "id": q["id"], "query": q["query"], "stratum": q["stratum"],
                    "done": self.is_done(q), "candidates": cands, "progress": self.progress()}

    # -- changes ------------------------------------------------------------------------
    def apply(self, changes) -> dict:
        """Apply ``[{"row_id", "relevant", "group"}, ...]`` all or nothing, save, return progress.

        UserError (the request's fault) names the first bad change; nothing is applied then.
        """
        if not isinstance(changes, list) or not changes:
            raise UserError("'changes' must be a non-empty list of {row_id, relevant, group}")
        checked = []
        for change in changes:
            if not isinstance(change, dict):
                raise UserError(f"each change must be an object, got {type(change).__name__}")
            rid = change.get("row_id")
            if not isinstance(rid, str) or rid not in self.by_id:
                raise UserError(f"unknown row id {rid!r}")
            checked.append((rid, *check_label(rid, change.get("relevant"), change.get("group", ""))))
        with self._lock:
            before = [(rid, self.by_id[rid]["relevant"], self.by_id[rid]["group"]) for rid, _, _ in checked]
            for rid, relevant, group in checked:
                self.by_id[rid]["relevant"], self.by_id[rid]["group"] = relevant, group
            try:
                self.save()
            except BaseException:
                for rid, relevant, group in reversed(before):  # the file still has them
                    self.by_id[rid]["relevant"], self.by_id[rid]["group"] = relevant, group
                raise
            return self.progress()
