"""Readers for the DailyDialog release and the two releases built on it (docs/algorithms.md sections 4, 5).

Files are read line by line into small raw records (path, line number, text) so that a bad
line becomes a *rejected record* with a reason (written to ``rejected/`` and counted by the
pipeline) instead of stopping a run; a missing file or folder is a :class:`UserError`.

- DailyDialog (Li et al. 2017): ``<dir>/<split>/dialogues_<split>.txt`` (utterances joined by
  ``__eou__``), ``dialogues_act_<split>.txt`` and ``dialogues_emotion_<split>.txt`` (one label
  per utterance). The split files may also sit directly in ``<dir>``; ``<dir>`` may also be the
  release as downloaded, ``ijcnlp_dailydialog.zip`` or its unzipped folder with the split zips
  (:mod:`dailydialog_pp.zipped`).
- Multi-reference test set (Gupta et al. 2019): ``multireftest.json``, JSON lines, one test
  dialogue per line in the order of ``test/dialogues_test.txt``; every utterance but the
  last has ``responses`` (5 strings; ``responses[0]`` is the original next turn).
- DailyDialog++ (Sai et al. 2020): ``train.json``/``dev.json``/``test.json`` (``id``,
  ``context``, 5 positive, 5 adversarial and 5 random negative responses) and
  ``data_positives.json`` (``dialog_id``, ``context``, 5 positives only).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from dailydialog_pp import zipped
from multiref.util.errors import UserError

SPLITS = ("train", "validation", "test")
SPLIT_ORDER = {name: i for i, name in enumerate(SPLITS)}
ACT_CODES = {1: "inform", 2: "question", 3: "directive", 4: "commissive"}
EMOTION_CODES = {0: "no_emotion", 1: "anger", 2: "disgust", 3: "fear", 4: "happiness", 5: "sadness", 6: "surprise"}
EOU = "__eou__"
#: A dialogue (or multi-reference line) with more turns is rejected (``too-many-turns``):
#: each of its n turns gives a row holding the turns before it, n^2/2 strings in all.
#: DailyDialog's longest dialogue has 35 turns (train), so this is 14 times that.
MAX_TURNS = 500
# DD++ release files: file name -> source name written in the ``source`` column.
DDPP_FILES = (("train.json", "ddpp_train"), ("dev.json", "ddpp_dev"), ("test.json", "ddpp_test"),
              ("data_positives.json", "ddpp_positives"))


class RejectedRecord(ValueError):
    """A malformed input line. ``reason`` names the Beam counter and the dead-letter reason."""

    def __init__(self, reason: str, detail: str, raw: "RawLine | None" = None):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail
        self.raw = raw

    def dead_letter(self) -> dict:
        """The record written to ``rejected/<reason>.jsonl``."""
        raw = self.raw
        return {
            "reason": self.reason,
            "detail": self.detail,
            "file": raw.path if raw else None,
            "line": raw.line if raw else None,
            "text": raw.text if raw else None,
        }


@dataclass(frozen=True)
class RawLine:
    """One line of an input file: where it came from and its text (newline stripped)."""

    path: str
    line: int
    text: str
    kind: str = ""  # which file family: dailydialog / multiref / ddpp_dev / ...
    extra: tuple = ()  # DailyDialog: (split, index, act line, emotion line)


@dataclass(frozen=True)
class Dialogue:
    """A parsed DailyDialog dialogue. ``dialogue_id`` is ``<split>_<index>`` (0-based line)."""

    dialogue_id: str
    split: str
    index: int
    turns: tuple
    acts: tuple = ()
    emotions: tuple = ()


@dataclass(frozen=True)
class MultirefDialogue:
    """One line of multireftest.json: the dialogue's texts and each turn's 5 responses."""

    index: int
    texts: tuple
    responses: tuple  # one tuple of strings per utterance but the last
    line: int = 0
    path: str = ""


@dataclass(frozen=True)
class ReleasedContext:
    """One released DD++ context with its responses (``source`` names the file)."""

    source: str
    release_id: int
    context: tuple
    positive_responses: tuple
    adversarial_negative_responses: tuple = ()
    random_negative_responses: tuple = field(default=())
    line: int = 0
    path: str = ""


#: A line of an input file longer than this is a one-line error naming the file and line, not
#: read into memory (DailyDialog's longest line is under 10 KB; a dialogue of :data:`MAX_TURNS`
#: turns of 10,000 characters each still fits).
MAX_LINE_BYTES = 8 << 20


def _lines(path: str, kind: str, extra=None):
    with zipped.open_binary(path) as fh:  # a file, or a member of the release zip
        number = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            number += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise UserError(f"{path}:{number}: a line of over {MAX_LINE_BYTES:,} bytes; not a DailyDialog "
                                "release file (its lines are one dialogue or record each)")
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise UserError(f"{path}:{number}: not valid UTF-8 ({exc.reason})") from None
            text = text.rstrip("\r\n")
            yield RawLine(path, number, text, kind)


# --- DailyDialog -------------------------------------------------------------------------

def dailydialog_files(folder: str, split: str) -> tuple[str, str, str] | None:
    """Paths of (text, act, emotion) files of ``split`` in ``folder``, or None if absent."""
    for base in (os.path.join(folder, split), folder):
        text = os.path.join(base, f"dialogues_{split}.txt")
        if os.path.isfile(text):
            return (text, os.path.join(base, f"dialogues_act_{split}.txt"),
                    os.path.join(base, f"dialogues_emotion_{split}.txt"))
    return None


def read_dailydialog(folder: str, splits=SPLITS) -> list[RawLine]:
    """Raw dialogue lines of every split present in ``folder`` (in train, validation, test order).

    Each RawLine carries ``extra = (split, index, act_line, emotion_line)``; a missing act or
    emotion line (a shorter label file) is ``None`` and rejected by :func:`parse_dialogue`.
    Raises UserError if the folder is missing, holds none of the splits, or a label file is absent.
    """
    out = []
    for split, (text_path, act_path, emotion_path) in check_dailydialog(folder, splits):
        acts = [r.text for r in _lines(act_path, "act")]
        emotions = [r.text for r in _lines(emotion_path, "emotion")]
        for index, raw in enumerate(_lines(text_path, "dailydialog")):
            act = acts[index] if index < len(acts) else None
            emotion = emotions[index] if index < len(emotions) else None
            out.append(RawLine(raw.path, raw.line, raw.text, "dailydialog", (split, index, act, emotion)))
    return out


def check_dailydialog(folder: str, splits=SPLITS) -> list[tuple[str, tuple[str, str, str]]]:
    """``[(split, (text, act, emotion paths))]`` of the splits present in ``folder``.

    ``folder`` may also be the release zip, or a folder holding its split zips
    (:mod:`dailydialog_pp.zipped`; the paths are then member paths).
    Raises UserError if the folder is missing, holds none of the splits, or a label file is absent.
    """
    if not (os.path.isdir(folder) and any(dailydialog_files(folder, s) for s in splits)):
        released = zipped.release_splits(folder, splits)
        if released:
            return released
    if not os.path.isdir(folder):
        raise UserError(f"DailyDialog folder not found: {folder}")
    out = []
    for split in splits:
        files = dailydialog_files(folder, split)
        if files is None:
            continue
        for label_path in files[1:]:
            if not os.path.isfile(label_path):
                raise UserError(f"DailyDialog label file not found: {label_path}")
        out.append((split, files))
    if not out:
        raise UserError(f"{folder}: no DailyDialog split files (expected ijcnlp_dailydialog.zip, its split zips, or <split>/dialogues_<split>.txt "
                        f"for one of {', '.join(splits)})")
    return out


def split_utterances(line: str) -> list[str]:
    """Split a DailyDialog line on ``__eou__``; drop the empty piece after the final marker."""
    pieces = [p.strip() for p in line.split(EOU)]
    if pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def _labels(line, what: str, codes: dict, n: int, raw: RawLine) -> tuple:
    if line is None:
        raise RejectedRecord(f"missing-{what}-line", f"no {what} line for this dialogue", raw)
    fields = line.split()
    try:
        labels = tuple(int(f) for f in fields)
    except ValueError:
        raise RejectedRecord(f"bad-{what}-label", f"non-integer {what} label in {line!r}", raw) from None
    if len(labels) != n:
        raise RejectedRecord(f"{what}-count-mismatch", f"{len(labels)} {what} labels for {n} utterances", raw)
    bad = [x for x in labels if x not in codes]
    if bad:
        raise RejectedRecord(f"bad-{what}-label", f"unknown {what} code {bad[0]}", raw)
    return labels


def parse_dialogue(raw: RawLine) -> Dialogue:
    """Parse one DailyDialog line with its act and emotion lines into a :class:`Dialogue`.

    Rejects (RejectedRecord reasons): ``too-many-turns`` (over :data:`MAX_TURNS`),
    ``empty-dialogue``, ``empty-utterance``,
    ``act-count-mismatch`` / ``emotion-count-mismatch`` (label count differs from the number
    of utterances), ``bad-act-label`` / ``bad-emotion-label``, ``missing-act-line`` /
    ``missing-emotion-line``.
    """
    split, index, act_line, emotion_line = raw.extra
    if EOU not in raw.text and not raw.text.strip():
        raise RejectedRecord("empty-dialogue", "blank line", raw)
    if raw.text.count(EOU) > MAX_TURNS:  # counted before splitting: the check costs no list
        raise RejectedRecord("too-many-turns", f"{raw.text.count(EOU):,} utterances, over {MAX_TURNS}: "
                             "each turn's row holds the turns before it", raw)
    turns = split_utterances(raw.text)
    if not turns:
        raise RejectedRecord("empty-dialogue", "no utterances", raw)
    if any(t == "" for t in turns):
        raise RejectedRecord("empty-utterance", "an utterance is empty", raw)
    acts = _labels(act_line, "act", ACT_CODES, len(turns), raw)
    emotions = _labels(emotion_line, "emotion", EMOTION_CODES, len(turns), raw)
    return Dialogue(f"{split}_{index}", split, index, tuple(turns), acts, emotions)


# --- multi-reference test set ------------------------------------------------------------

def check_file(path: str, what: str) -> str:
    """``path`` if it is a file, else a UserError naming ``what``."""
    if not os.path.isfile(path):
        raise UserError(f"{what} not found: {path}")
    return path


def read_multiref(path: str) -> list[RawLine]:
    """Raw lines of the multi-reference JSON lines file (blank lines skipped)."""
    check_file(path, "multi-reference file")
    lines = [r for r in _lines(path, "multiref") if r.text.strip()]
    if not lines:
        raise UserError(f"{path}: file has no records")
    return lines


def _json_object(raw: RawLine) -> dict:
    try:
        record = json.loads(raw.text)
    except json.JSONDecodeError as exc:
        raise RejectedRecord("invalid-json", f"{exc.msg} at column {exc.colno}", raw) from None
    if not isinstance(record, dict):
        raise RejectedRecord("not-an-object", f"expected a JSON object, got {type(record).__name__}", raw)
    return record


def _strings(value, what: str, raw: RawLine) -> tuple:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RejectedRecord(f"bad-{what}", f"`{what}` must be a list of strings", raw)
    return tuple(value)


def parse_multiref(raw: RawLine, position: int) -> MultirefDialogue:
    """Parse one multireftest.json line. ``position`` (0-based record order) is the index
    used when the record has no ``index`` field.

    Rejects: ``invalid-json``, ``not-an-object``, ``bad-dialogue`` (no ``dialogue`` list of
    objects with a ``text`` string), ``too-many-turns`` (over :data:`MAX_TURNS`), ``bad-responses`` (an utterance but the last without a
    list of strings in ``responses``), ``bad-index``.
    """
    record = _json_object(raw)
    dialogue = record.get("dialogue")
    if not isinstance(dialogue, list) or not dialogue or not all(
            isinstance(u, dict) and isinstance(u.get("text"), str) for u in dialogue):
        raise RejectedRecord("bad-dialogue", "`dialogue` must be a non-empty list of {text: str, ...}", raw)
    if len(dialogue) > MAX_TURNS:
        raise RejectedRecord("too-many-turns", f"{len(dialogue):,} utterances, over {MAX_TURNS}", raw)
    responses = []
    for turn, utterance in enumerate(dialogue[:-1]):
        value = utterance.get("responses")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RejectedRecord("bad-responses", f"utterance {turn} has no list of strings in `responses`", raw)
        responses.append(tuple(value))
    index = record.get("index", position)
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise RejectedRecord("bad-index", f"`index` must be a non-negative integer, got {index!r}", raw)
    return MultirefDialogue(index, tuple(u["text"] for u in dialogue), tuple(responses), raw.line, raw.path)


# --- DailyDialog++ -----------------------------------------------------------------------

def read_ddpp(folder: str) -> list[RawLine]:
    """Raw lines of the DD++ files present in ``folder`` (kind = the ``source`` name).

    Raises UserError if the folder is missing or holds none of train.json, dev.json,
    test.json, data_positives.json.
    """
    out = []
    for path, source in check_ddpp(folder):
        out += [RawLine(r.path, r.line, r.text, source) for r in _lines(path, source) if r.text.strip()]
    return out


def check_ddpp(folder: str) -> list[tuple[str, str]]:
    """``[(path, source name)]`` of the DD++ files in ``folder``; UserError if there are none."""
    if not os.path.isdir(folder):
        raise UserError(f"DailyDialog++ folder not found: {folder}")
    found = [(os.path.join(folder, name), source) for name, source in DDPP_FILES
             if os.path.isfile(os.path.join(folder, name))]
    if not found:
        raise UserError(f"{folder}: no DailyDialog++ files (expected one of "
                        f"{', '.join(n for n, _ in DDPP_FILES)})")
    return found


def parse_ddpp(raw: RawLine) -> ReleasedContext:
    """Parse one DD++ line (``id`` in train/dev/test, ``dialog_id`` in data_positives.json).

    Rejects: ``invalid-json``, ``not-an-object``, ``bad-id``, ``bad-context`` (not a non-empty
    list of strings), ``bad-positive_responses`` / ``bad-adversarial_negative_responses`` /
    ``bad-random_negative_responses`` (not a list of strings; the negatives are required in
    train/dev/test only).
    """
    record = _json_object(raw)
    release_id = record.get("dialog_id", record.get("id"))
    if not isinstance(release_id, int) or isinstance(release_id, bool):
        raise RejectedRecord("bad-id", "`id` (or `dialog_id`) must be an integer", raw)
    context = _strings(record.get("context"), "context", raw)
    if not context:
        raise RejectedRecord("bad-context", "`context` is empty", raw)
    positives = _strings(record.get("positive_responses"), "positive_responses", raw)
    adversarial = random = ()
    if raw.kind != "ddpp_positives":
        adversarial = _strings(record.get("adversarial_negative_responses"), "adversarial_negative_responses", raw)
        random = _strings(record.get("random_negative_responses"), "random_negative_responses", raw)
    return ReleasedContext(raw.kind, release_id, context, positives, adversarial, random, raw.line, raw.path)


# --- shape checks before a build starts ------------------------------------------------------

MULTIREF_SHAPE = ('JSON lines, one test dialogue per line: {"index": N, "dialogue": [{"text": "...", '
                  '"responses": ["...", ...]}, ...]}')
DDPP_SHAPE = 'JSON lines, one context per line: {"id": N, "context": [...], "positive_responses": [...], ...}'


def _first_record(path: str, kind: str = "") -> RawLine:
    """The first non-blank line of ``path``; UserError if the file has none."""
    for raw in _lines(path, kind):
        if raw.text.strip():
            return raw
    raise UserError(f"{path}: file is empty")


def check_dailydialog_shape(folder: str) -> None:
    """UserError unless each dialogues file starts like DailyDialog's (utterances + ``__eou__``)."""
    for _split, (text_path, act_path, emotion_path) in check_dailydialog(folder):
        first = _first_record(text_path)
        if EOU not in first.text:
            raise UserError(f"{first.path}:{first.line}: not a DailyDialog dialogues file: expected utterances "
                            f"each ended by '{EOU}' on one line per dialogue")
        for label_path in (act_path, emotion_path):
            label = _first_record(label_path)
            if not all(code.isdigit() for code in label.text.split()):
                raise UserError(f"{label.path}:{label.line}: expected one integer label per utterance, "
                                f"separated by spaces")


def check_multiref_shape(path: str) -> None:
    """UserError unless ``path`` is multireftest.json-shaped (its first record parses).

    Later malformed lines are rejected one by one (dead letters); a file whose first record
    is of another shape (a JSON array, a list per line, other fields) stops here instead of
    building a multiref config with one reference per context.
    """
    check_file(path, "multi-reference file")
    first = _first_record(path, "multiref")
    try:
        parse_multiref(first, 0)
    except RejectedRecord as exc:
        raise UserError(f"{first.path}:{first.line}: not a multireftest.json file ({exc.detail}); "
                        f"expected {MULTIREF_SHAPE}") from None


def check_ddpp_shape(folder: str) -> None:
    """UserError unless each DD++ file's first record parses (see :func:`parse_ddpp`)."""
    for path, source in check_ddpp(folder):
        first = _first_record(path, source)
        try:
            parse_ddpp(first)
        except RejectedRecord as exc:
            raise UserError(f"{first.path}:{first.line}: not a DailyDialog++ file ({exc.detail}); "
                            f"expected {DDPP_SHAPE}") from None
