"""Annotation round-trip of the LSDSCC test set (docs/algorithms.md#test-set-step-6-annotation).

**Export** writes one CSV row (and one JSON lines twin record) per query and candidate
reference of ``test_candidates``, with empty ``relevant`` and ``group`` columns for the
annotators and a ``proposed_group``: the paper's first grouping step, by word overlap with
stop words ignored. Rule: each reference becomes the set of its tokens minus English stop
words and punctuation; two references of the same query are linked when the Jaccard
overlap of their sets is at least ``overlap_threshold`` (default 0.2); the proposed groups
are the connected components, numbered "1", "2", ... in order of their first reference. A
reference with no content word is a group of its own.

**Import** reads one CSV per annotator (columns ``row_id``, ``relevant``, ``group``; other
columns are ignored except ``reference``, which must not have been changed):

- relevance: ``1/0``, ``yes/no``, ``y/n``, ``true/false``; a reference is relevant when more
  than half of the annotators say so; a tie (even number of annotators) goes to ``tie``
  (default ``irrelevant``);
- groups (the annotators' merge of groups with similar meaning): a group label is one word
  (no spaces, commas, semicolons, bars or slashes: those would put a row in two groups),
  local to a query and to an annotator. Two relevant references are in the same final group
  when, among the annotators who marked both relevant, more than half put them in the same
  group (a tie, or nobody marking both, does not link them); final groups are the connected
  components, numbered "1", "2", ... in order of their first reference (candidate order);
  references inside a group keep candidate order;
- a query with no relevant reference is left out (counted).

Errors (UserError with ``file:line``): unknown row id, a row given twice, a missing or
unreadable label, a relevant row with no group, a row in two groups (``1;2``), an edited
reference, missing columns, and candidates a file does not label at all.

Rebuilds (:func:`carry_over`): the annotators' files are kept in the dataset folder under
``annotations/``; a rebuild whose ``test_candidates`` are byte-identical keeps ``test_grouped``
and ``annotations/``; when the test set changed they are moved aside, with the
``test_candidates`` they label, into ``NAME.annotations-<UTC time>/`` beside the folder (a
dataset folder of its own).

Agreement (:func:`agreement`, recorded in the card's "Annotator agreement" section and printed by
``annotate import``), over the imported queries' candidates: Fleiss' kappa and Krippendorff's
alpha (nominal) of the relevance labels, and the adjusted Rand index of the groups of each pair
of annotators on each query (the references both marked relevant, when there are at least
two), averaged over the queries, then over the pairs (:mod:`multiref.analysis.agreement`).

Output: the public LSDSCC JSON ``{query: {group_id: [references]}}`` (``test.group.json``,
formatted like the released file: ``json.dumps(indent=2)``, no final newline) and
``test.queries.txt`` in ``--output``, and the ``test_grouped`` config in the dataset folder.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from typing import Iterable, Mapping, Sequence

from lsdscc.annotation.config import OVERLAP_THRESHOLD, TIE, TIES
from multiref.util.errors import UserError, where

COLUMNS = ("row_id", "query_id", "stratum", "query", "candidate_index", "reference", "own", "source_pair_id",
           "source_query", "lucene_score", "doc2vec_cosine", "proposed_group", "relevant", "group")

# NLTK's English stop-word list (nltk_data corpora/stopwords/english, 179 words), kept here
# as data because NLTK data is not installed; plus the corpus's placeholder tokens.
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself yourselves he him his
himself she she's her hers herself it it's its itself they them their theirs themselves what which who whom this
that that'll these those am is are was were be been being have has had having do does did doing a an the and but
if or because as until while of at by for with about against between into through during before after above below
to from up down in out on off over under again further then once here there when where why how all any both each
few more most other some such no nor not only own same so than too very s t can will just don don't should
should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't
haven haven't isn isn't ma mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't
weren weren't won won't wouldn wouldn't <unk> url email digits
""".split())
_WORD = re.compile(r"\w")
_TRUE = {"1", "yes", "y", "true"}
_FALSE = {"0", "no", "n", "false"}
_MULTI_GROUP = re.compile(r"[,;|/]|\s")


def jsonl_twin(csv_path: str) -> str:
    """``FILE.csv`` -> ``FILE.jsonl``."""
    root, _ = os.path.splitext(csv_path)
    return root + ".jsonl"


def content_words(text: str) -> frozenset:
    """Tokens of ``text`` that are not stop words nor punctuation."""
    return frozenset(t for t in text.lower().split() if t not in STOP_WORDS and _WORD.search(t))


def _components(n: int, linked) -> list:
    """Connected components of items 0..n-1 under ``linked(i, j)``, each sorted, ordered by
    their smallest item."""
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if linked(i, j):
                parent[find(j)] = find(i)
    groups: dict = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def propose_groups(references: Sequence[str], threshold: float) -> list:
    """Proposed group id ("1", "2", ...) of each reference, by word overlap (module docstring)."""
    words = [content_words(r) for r in references]

    def linked(i, j):
        if not words[i] or not words[j]:
            return False
        return len(words[i] & words[j]) / len(words[i] | words[j]) >= threshold

    out = [""] * len(references)
    for number, members in enumerate(_components(len(references), linked), start=1):
        for i in members:
            out[i] = str(number)
    return out


def row_id(query_id: str, index: int) -> str:
    """The id of candidate ``index`` (1-based) of a query: ``<query_id>#<index>``."""
    return f"{query_id}#{index}"


def export_rows(candidate_rows: Iterable[Mapping], overlap_threshold: float = OVERLAP_THRESHOLD) -> list:
    """Annotation rows (dicts keyed by COLUMNS) for ``test_candidates`` rows."""
    out = []
    for row in candidate_rows:
        cands = row["candidates"]
        proposed = propose_groups([c["text"] for c in cands], overlap_threshold)
        for k, (c, group_id) in enumerate(zip(cands, proposed), start=1):
            out.append({
                "row_id": row_id(row["id"], k), "query_id": row["query_id"], "stratum": row["stratum"],
                "query": row["query"], "candidate_index": k, "reference": c["text"], "own": bool(c["own"]),
                "source_pair_id": c["source_pair_id"], "source_query": c["source_query"],
                "lucene_score": c["lucene_score"], "doc2vec_cosine": c["doc2vec_cosine"],
                "proposed_group": group_id, "relevant": "", "group": "",
            })
    return out


def write_rows(fh, rows: Iterable[Mapping]) -> None:
    """Write annotation rows (dicts keyed by COLUMNS; None as empty) to the open text file
    ``fh`` as the CSV that :func:`read_annotator_file` reads."""
    writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in r.items()})


def export(dataset: str, output: str, overlap_threshold: float = OVERLAP_THRESHOLD) -> int:
    """Write the annotation CSV ``output`` and its JSON lines twin; return the row count."""
    from lsdscc.testset.assemble import read_candidates
    from multiref.output.file_output import check_output, write_atomically

    if not 0.0 < overlap_threshold <= 1.0:
        raise UserError(f"--overlap-threshold must be in (0, 1], got {overlap_threshold}")
    for path in (output, jsonl_twin(output)):
        check_output(path, "--output", [dataset])
    rows = export_rows(read_candidates(dataset), overlap_threshold)
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    write_atomically(output, lambda fh: write_rows(fh, rows))
    write_atomically(jsonl_twin(output), "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
    return len(rows)


# ---------------------------------------------------------------- import


def annotator_records(path: str, references: Mapping[str, str], *, columns=None):
    """Rows of an annotator CSV as ``(file:line, row_id, record)``, after the checks every reader
    of these files makes (``annotate import`` and the browser page alike): the label columns are
    there, (with ``columns``) no column outside them, every row id is a candidate of
    ``references`` (row id -> reference text), given once, with its reference text unchanged.
    Raises UserError naming ``file:line``."""
    first_line: dict = {}
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in ("row_id", "relevant", "group") if c not in (reader.fieldnames or [])]
            if missing:
                raise UserError(f"{where(path, 1)}: missing column(s) {', '.join(missing)}")
            extra = [c for c in reader.fieldnames if columns is not None and c not in columns]
            if extra:  # the page rewrites the file with COLUMNS: it would drop them
                raise UserError(f"{where(path, 1)}: column(s) {', '.join(map(repr, extra))} are not among the columns "
                                "of `annotate export`, and saving would drop them; move them to another file")
            for record in reader:
                line = reader.line_num
                rid = (record.get("row_id") or "").strip()
                if rid not in references:
                    raise UserError(f"{where(path, line)}: unknown row id {rid!r} (not in test_candidates)")
                if rid in first_line:
                    raise UserError(f"{where(path, line)}: row {rid} given twice (first at line {first_line[rid]}); "
                                    "a reference belongs to one group")
                reference = record.get("reference")
                if reference is not None and reference != references[rid]:
                    raise UserError(f"{where(path, line)}: reference text of row {rid} differs from test_candidates")
                first_line[rid] = line
                yield where(path, line), rid, record
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    except csv.Error as exc:  # e.g. a cell over the csv module's 131,072 characters
        raise UserError(f"{where(path, reader.line_num + 1)}: bad CSV ({str(exc)[:120]})") from None


def read_annotator_file(path: str, candidates: Mapping[str, str], partial: bool = False) -> dict:
    """One annotator's labels: ``{row_id: (relevant: bool, group: str | None)}``.

    ``candidates`` maps every row id to its reference text. Raises UserError (file:line) on
    every error listed in the module docstring. With ``partial``, rows not labelled yet (an
    empty ``relevant``, or missing from the file) are left out instead of being errors.
    """
    from multiref.util.files import require_file

    require_file(path, "annotation file")
    labels: dict = {}
    for loc, rid, record in annotator_records(path, candidates):
        value = (record.get("relevant") or "").strip().lower()
        if value == "":
            if partial:
                continue
            raise UserError(f"{loc}: missing relevance label for row {rid} (an unfinished "
                            "file: finish it, or import the finished queries with --partial)")
        if value not in _TRUE and value not in _FALSE:
            raise UserError(f"{loc}: relevance of row {rid} must be 1/0 (yes/no), got {value!r}")
        relevant = value in _TRUE
        group_label = (record.get("group") or "").strip()
        if relevant and not group_label:
            raise UserError(f"{loc}: row {rid} is relevant but has no group")
        if relevant and _MULTI_GROUP.search(group_label):
            raise UserError(f"{loc}: row {rid} is in two groups ({group_label!r}); give one group")
        labels[rid] = (relevant, group_label if relevant else None)
    unlabelled = [rid for rid in candidates if rid not in labels]
    if unlabelled and not partial:
        raise UserError(f"{path}: missing labels for {len(unlabelled)} candidate row(s), first {unlabelled[0]}")
    return labels


def reconcile(row_ids: Sequence[str], annotations: Sequence[Mapping], tie: str = TIE) -> list:
    """Final groups of one query's candidates: lists of row ids (module docstring rule)."""
    n = len(annotations)
    relevant = []
    for rid in row_ids:
        yes = sum(1 for a in annotations if a[rid][0])
        if 2 * yes > n or (2 * yes == n and tie == "relevant"):
            relevant.append(rid)

    def linked(i, j):
        a, b = relevant[i], relevant[j]
        both = [ann for ann in annotations if ann[a][0] and ann[b][0]]
        same = sum(1 for ann in both if ann[a][1] == ann[b][1])
        return bool(both) and 2 * same > len(both)

    return [[relevant[i] for i in members] for members in _components(len(relevant), linked)]


AGREEMENT_SECTION = "Annotator agreement"


def _pair_rand_index(queries: Sequence[Sequence[str]], first: Mapping, second: Mapping) -> tuple:
    """``(mean ARI over queries or None, queries compared)`` of two annotators' groups."""
    from multiref.analysis.agreement import adjusted_rand_index

    indices = []
    for ids in queries:
        both = [rid for rid in ids if first[rid][0] and second[rid][0]]
        if len(both) >= 2:
            indices.append(adjusted_rand_index([first[r][1] for r in both], [second[r][1] for r in both]))
    return (sum(indices) / len(indices) if indices else None), len(indices)


def agreement(queries: Sequence[Sequence[str]], annotations: Sequence[Mapping], names: Sequence[str]) -> dict:
    """Agreement of the annotators on the candidates of ``queries`` (lists of row ids, every row
    labelled by every annotator): ``{"relevance_fleiss_kappa", "relevance_krippendorff_alpha",
    "groups_adjusted_rand_index", "pairs": [{"annotators": [a, b], "adjusted_rand_index",
    "queries_compared"}], "candidates"}`` (module docstring). A statistic that is undefined (one
    annotator, every label the same, no query to compare) is None."""
    from multiref.analysis.agreement import fleiss_kappa, krippendorff_alpha

    ids = [rid for q in queries for rid in q]
    out = {"candidates": len(ids), "relevance_fleiss_kappa": None, "relevance_krippendorff_alpha": None,
           "groups_adjusted_rand_index": None, "pairs": []}
    if len(annotations) < 2 or not ids:
        return out
    yes = [sum(1 for a in annotations if a[rid][0]) for rid in ids]
    out["relevance_fleiss_kappa"] = fleiss_kappa([[y, len(annotations) - y] for y in yes])
    out["relevance_krippendorff_alpha"] = krippendorff_alpha([[float(a[rid][0]) for rid in ids] for a in annotations])
    for i, j in ((i, j) for i in range(len(annotations)) for j in range(i + 1, len(annotations))):
        ari, compared = _pair_rand_index(queries, annotations[i], annotations[j])
        out["pairs"].append({"annotators": [names[i], names[j]], "adjusted_rand_index": ari,
                             "queries_compared": compared})
    defined = [p["adjusted_rand_index"] for p in out["pairs"] if p["adjusted_rand_index"] is not None]
    out["groups_adjusted_rand_index"] = sum(defined) / len(defined) if defined else None
    return out


def agreement_markdown(result: Mapping) -> str:
    """The card section of :func:`agreement`'s result: a sentence, then the numbers as JSON."""
    def fmt(v):
        return "n/a" if v is None else f"{v:.3f}"

    return (f"Over {result['candidates']} imported candidates: Fleiss' kappa of relevance "
            f"{fmt(result['relevance_fleiss_kappa'])}, Krippendorff's alpha (nominal) "
            f"{fmt(result['relevance_krippendorff_alpha'])}; mean pairwise adjusted Rand index of the groups "
            f"{fmt(result['groups_adjusted_rand_index'])} (per pair of annotators, on the references both marked "
            "relevant, averaged over queries).\n\n```json\n" + json.dumps(result, indent=2, sort_keys=True) + "\n```")


def dumps_public(public: Mapping) -> str:
    """The public LSDSCC JSON text of ``{query: {group_id: [references]}}``: formatted as the
    released ``test.group.json`` (2-space indent, ASCII escapes, no final newline)."""
    return json.dumps(public, indent=2)


def import_annotations(dataset: str, files: Sequence[str], output: str, tie: str = TIE,
                       partial: bool = False) -> dict:
    """Merge annotator files into ``test_grouped`` (in ``dataset``) and the public JSON (in
    ``output``). Returns counts (also written to the card); :func:`import_round` returns the
    agreement too.
    """
    return import_round(dataset, files, output, tie, partial)[0]


def import_round(dataset: str, files: Sequence[str], output: str, tie: str = TIE,
                 partial: bool = False) -> tuple:
    """:func:`import_annotations`, returning ``(counts, agreement)`` (:func:`agreement`); both
    are written to the card.

    With ``partial``, unfinished files are accepted: only the queries whose every candidate
    every annotator has labelled are imported; the others are counted as
    ``queries_unfinished`` and left out (a round still under way can be checked this way).
    """
    from multiref.output import hfdata

    from lsdscc.testset import assemble as ts

    if tie not in TIES:
        raise UserError(f"--tie must be relevant or irrelevant, got {tie!r}")
    rows = ts.read_candidates(dataset)
    texts = {row_id(r["id"], k): c["text"] for r in rows for k, c in enumerate(r["candidates"], start=1)}
    annotations = [read_annotator_file(path, texts, partial) for path in files]
    grouped, public, finished = [], {}, []
    counts = {"annotators": len(files), "candidates": len(texts), "relevant": 0, "queries_without_relevant": 0,
              "unanimous_relevance": 0}
    if partial:
        counts["queries_unfinished"] = 0
    for r in rows:
        ids = [row_id(r["id"], k) for k in range(1, len(r["candidates"]) + 1)]
        if not all(rid in a for rid in ids for a in annotations):  # only with partial
            counts["queries_unfinished"] += 1
            continue
        counts["unanimous_relevance"] += sum(len({a[rid][0] for a in annotations}) == 1 for rid in ids)
        finished.append(ids)
        groups = reconcile(ids, annotations, tie)
        if not groups:
            counts["queries_without_relevant"] += 1
            continue
        refs = [[texts[rid] for rid in g] for g in groups]
        group_ids = [str(i) for i in range(1, len(groups) + 1)]
        counts["relevant"] += sum(len(g) for g in refs)
        grouped.append({"id": r["id"], "query": r["query"], "groups": refs, "group_ids": group_ids})
        public[r["query"]] = dict(zip(group_ids, refs))
    counts["queries"] = len(grouped)
    counts["groups"] = sum(len(g["groups"]) for g in grouped)

    os.makedirs(output, exist_ok=True)
    _replace_file(os.path.join(output, "test.group.json"), dumps_public(public))
    _replace_file(os.path.join(output, "test.queries.txt"), "".join(q + "\n" for q in public))
    shutil.rmtree(os.path.join(dataset, ts.GROUPED_CONFIG), ignore_errors=True)  # never rewrite a file in place
    hfdata.write_parquet(hfdata.shard_path(dataset, ts.GROUPED_CONFIG, "test"), grouped, ts.grouped_schema())
    kept = _keep_annotator_files(dataset, files)
    agreed = agreement(finished, annotations, kept)
    hfdata.add_config(dataset, hfdata.ConfigInfo(
        name=ts.GROUPED_CONFIG,
        description=("LSDSCC grouped multi-reference test set (docs/algorithms.md §2, step 6): the relevant "
                     "candidates by annotator majority, in groups of similar meaning. Score with "
                     "`multiref score --references FOLDER --config test_grouped --split test`."),
        splits={"test": len(grouped)}, features=ts.grouped_schema(),
        options={"tie": tie, "annotators": len(files), "annotation_files": kept, "partial": partial,
                 "relevance_rule": "strict majority of annotators", "group_rule": "majority co-grouping, connected components"},
        counts=counts), sections={AGREEMENT_SECTION: agreement_markdown(agreed)})
    return counts, agreed


ANNOTATIONS_DIR = "annotations"


def _replace_file(path: str, text: str) -> None:
    """Write ``text`` to a new file and rename it over ``path``: a reader (or a hard link to
    the old file) never sees a half-written or modified file."""
    from multiref.output.file_output import write_atomically

    write_atomically(path, text)


def _keep_annotator_files(dataset: str, files: Sequence[str]) -> list:
    """Copy the annotators' CSV files into ``dataset/annotations/``; return their names there."""
    folder = os.path.join(dataset, ANNOTATIONS_DIR)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    names = []
    for i, path in enumerate(files, start=1):
        name = os.path.basename(path)
        if name in names:
            name = f"{i}-{name}"
        shutil.copyfile(path, os.path.join(folder, name))
        names.append(name)
    return names


def _candidates_digest(folder: str) -> str | None:
    from multiref.output import hfdata

    from lsdscc.testset import assemble as ts

    if ts.CANDIDATES_CONFIG not in hfdata.load_meta(folder).get("configs", {}):
        return None
    paths = [p for ps in ts.config_files(folder, ts.CANDIDATES_CONFIG).values() for p in ps]
    return ts.fingerprint(paths, folder)


def carry_over(previous: str | None, staging: str, target: str) -> str | None:
    """After a rebuild of ``target`` in ``staging``: keep the annotations of the ``previous``
    dataset when the test set is unchanged, else set them aside (module docstring). Only
    ``staging`` is changed and a new folder created; ``previous`` is read. Returns a message
    for the user, or None when ``previous`` had no annotations."""
    from multiref.output import hfdata
    from multiref.output.publish import link_tree
    from multiref.output.published import write_meta

    from lsdscc.testset import assemble as ts

    old_meta = hfdata.load_meta(previous) if previous else {"configs": {}}
    if ts.GROUPED_CONFIG not in old_meta["configs"]:
        return None
    new_meta = hfdata.load_meta(staging)
    items = [ts.GROUPED_CONFIG, ANNOTATIONS_DIR]
    if _candidates_digest(previous) == _candidates_digest(staging):
        for item in items:
            if os.path.isdir(os.path.join(previous, item)) and not os.path.exists(os.path.join(staging, item)):
                link_tree(os.path.join(previous, item), os.path.join(staging, item))
        section = old_meta.get("sections", {}).get(AGREEMENT_SECTION)
        if (new_meta["configs"].get(ts.GROUPED_CONFIG) != old_meta["configs"][ts.GROUPED_CONFIG]
                or new_meta.get("sections", {}).get(AGREEMENT_SECTION) != section):
            new_meta["configs"][ts.GROUPED_CONFIG] = old_meta["configs"][ts.GROUPED_CONFIG]
            if section is not None:
                new_meta.setdefault("sections", {})[AGREEMENT_SECTION] = section
            write_meta(staging, new_meta)
        return f"kept the annotations ({ts.GROUPED_CONFIG}, {ANNOTATIONS_DIR}/): the test set is unchanged"
    import datetime

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = f"{os.path.abspath(target)}.annotations-{stamp}"
    tmp = aside + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for item in items + [ts.CANDIDATES_CONFIG]:
        if os.path.isdir(os.path.join(previous, item)):
            link_tree(os.path.join(previous, item), os.path.join(tmp, item))
    aside_meta = dict(old_meta, configs={c: e for c, e in old_meta["configs"].items()
                                         if c in (ts.GROUPED_CONFIG, ts.CANDIDATES_CONFIG)})
    write_meta(tmp, aside_meta)
    os.rename(tmp, aside)
    if ts.GROUPED_CONFIG in new_meta["configs"] or AGREEMENT_SECTION in new_meta.get("sections", {}):
        new_meta["configs"].pop(ts.GROUPED_CONFIG, None)
        new_meta.get("sections", {}).pop(AGREEMENT_SECTION, None)
        write_meta(staging, new_meta)
    for item in items:
        shutil.rmtree(os.path.join(staging, item), ignore_errors=True)
    return (f"the test set changed: the previous annotations ({ts.GROUPED_CONFIG}, {ANNOTATIONS_DIR}/, with the "
            f"test_candidates they label) were moved to {aside}")
