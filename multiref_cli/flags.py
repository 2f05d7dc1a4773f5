"""The flag vocabulary of the ``multiref`` command line: one flag and one default per concept.

``TABLE`` is the single, machine-readable statement of which flag names which concept, the
commands that take it, the paper or release that demands another default on a command, and
the old spellings still accepted. It states no default: each default lives where the option
is declared (:func:`multiref.util.options.option`, read back through
:func:`multiref.util.options.declared`), or, for a flag a command adds by hand, on its parser;
:func:`command_defaults` derives them. The flag table of ``docs/cli.md`` is this table with
those defaults (rendered by :mod:`multiref_cli.reference`); ``tests/test_cli_flags.py`` builds
the real parser and checks the invariant, so a command that spells a concept differently, or
gives it another default without naming the paper that demands it, fails the test.

Old spellings are hidden aliases (not shown by ``--help``) installed by
:func:`install_aliases` for the commands named in ``Flag.old``; using one prints
``multiref: note: --old is deprecated; use --new`` on stderr and then acts exactly as the
new flag. :func:`install_common` adds ``--quiet``, ``--progress`` and ``--version`` to every
command. Standard library only.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field

REQUIRED = "(required)"  # the default of a flag the command cannot do without

ALL = (
    "score", "lsdscc build", "lsdscc crawl", "lsdscc testset", "lsdscc annotate export",
    "lsdscc annotate import", "lsdscc annotate serve", "lsdscc annotate browse", "lsdscc export-ids", "lsdscc rehydrate",
    "dailydialog build", "analyze correlation", "analyze refcount",
    "analyze discrimination", "analyze regression", "metrics list", "metrics path", "augment",
)
ANALYZE = ("analyze correlation", "analyze refcount", "analyze discrimination", "analyze regression")
RATED = ("analyze correlation", "analyze refcount")


@dataclass(frozen=True)
class Flag:
    """One concept of the vocabulary.

    The commands in ``commands`` take it as ``flag``. Those not in ``reasons`` share one
    default (the concept's); ``reasons`` maps each command whose default differs to why: the
    paper or release that default reproduces, or what the command cannot do without
    (:data:`REQUIRED`). ``old`` maps an old spelling to the commands that accept it.
    """

    concept: str
    flag: str
    commands: tuple
    reasons: dict = field(default_factory=dict)
    old: dict = field(default_factory=dict)
    doc: str = ""


TABLE = (
    Flag("where results go", "--output", ("score", "lsdscc build", "lsdscc crawl", "lsdscc annotate export",
                                          "lsdscc annotate import", "lsdscc annotate serve",
                                          "lsdscc export-ids", "lsdscc rehydrate", "dailydialog build", "augment") + ANALYZE,
         reasons={"lsdscc build": "the quick start's folder",
                  "lsdscc crawl": "the crawl resumes there",
                  "lsdscc annotate export": "a CSV for annotators",
                  "lsdscc annotate import": "a folder for test.group.json",
                  "lsdscc annotate serve": "the annotator's CSV, saved on every change",
                  "lsdscc export-ids": "the ids file",
                  "lsdscc rehydrate": "a dataset folder",
                  "dailydialog build": "a dataset folder",
                  "augment": "a dataset folder"},
         old={"--output-dir": ANALYZE},
         doc="score: a file (default: standard output); analyze: a folder for the JSON and Markdown "
             "reports and PNG plots (default: print only)"),
    Flag("print nothing but results and errors", "--quiet", ALL,
         doc="no progress or notes on standard error"),
    Flag("progress on stderr", "--progress", ALL,
         doc="show progress of long steps even when standard error is not a terminal"),
    Flag("output format", "--format", ("score",) + ANALYZE),
    Flag("metrics to compute", "--metric", ("score", "analyze correlation", "analyze refcount",
                                            "analyze discrimination"),
         reasons={"analyze correlation": "Gupta et al. 2019 (multi-reference DailyDialog)",
                  "analyze refcount": "Gupta et al. 2019 (multi-reference DailyDialog)",
                  "analyze discrimination": "Sai et al. 2020 (DailyDialog++)"},
         doc="repeatable; each command documents its default set"),
    Flag("tokenizer", "--tokenizer", ("score", "lsdscc build") + ANALYZE,
         reasons={"analyze discrimination": "the DailyDialog++ release (Sai et al. 2020) mixes tokenization "
                                            "conventions; NLTK splits punctuation either way",
                  "lsdscc build": "LSDSCC (Xu et al. 2018, docs/algorithms.md#1-lsdscc-corpus) tokenizes with "
                                  "NLTK's Treebank tokenizer"}),
    Flag("lowercase text", "--lowercase", ("score", "lsdscc build", "dailydialog build") + ANALYZE,
         reasons={"lsdscc build": "the public LSDSCC set (Xu et al. 2018) is lowercased",
                  "analyze correlation": "the multi-reference DailyDialog references (Gupta et al. 2019) "
                                         "are lowercased",
                  "analyze refcount": "the multi-reference DailyDialog references (Gupta et al. 2019) "
                                      "are lowercased",
                  "analyze discrimination": "the DailyDialog++ release (Sai et al. 2020) mixes case "
                                            "conventions"},
         doc="--lowercase / --no-lowercase"),
    Flag("whose BLEU formulas", "--bleu-convention", ("score", "analyze correlation", "analyze refcount",
                                                      "analyze discrimination"),
         doc="nltk, sacrebleu (corpus_bleu), nlgeval (pycocoevalcap's Bleu); bleu, delta_bleu, self_bleu; "
             "conv: in the signature"),
    Flag("METEOR implementation", "--meteor-impl", ("score", "analyze correlation", "analyze refcount",
                                                    "analyze discrimination"),
         doc="nltk or 1.5 (the METEOR 1.5 jar, as nlg-eval); impl: in the signature"),
    Flag("word vectors", "--vectors", ("score", "analyze correlation", "analyze refcount", "analyze discrimination"),
         doc="gensim .kv, word2vec .txt/.vec/.bin; needed by the embedding metrics"),
    Flag("multi-reference aggregation", "--aggregate", ("score", "analyze correlation", "analyze refcount",
                                                        "analyze discrimination"),
         reasons={"analyze correlation": "multirefeval (Gupta et al. 2019): each metric's standard "
                                         "multi-reference form, else max",
                  "analyze refcount": "multirefeval (Gupta et al. 2019): each metric's standard "
                                      "multi-reference form, else max"},
         old={"--aggregation": ("analyze discrimination",)},
         doc="score: each metric's own default; discrimination: repeatable, default all four"),
    Flag("human ratings file", "--ratings", ("analyze correlation", "analyze refcount", "analyze regression"),
         old={"--data": ("analyze regression",)}),
    Flag("pairwise human judgments", "--pairwise-ratings", ("analyze regression",),
         old={"--judgments": ("analyze regression",)},
         doc="winning rates replace the scores (Sugiyama et al. 2019)"),
    Flag("multi-reference DailyDialog test file", "--multiref-references",
         ("dailydialog build", "analyze correlation", "analyze refcount"),
         old={"--multiref-test": RATED}, doc="multireftest.json (JSON lines)"),
    Flag("column of the single reference", "--reference-column", ("analyze correlation", "analyze refcount",
                                                                  "analyze regression"),
         reasons={"analyze regression": "the scored-references layout of Sugiyama et al. 2019"},
         doc="prevgt: multirefeval's mturk_rating_processed_output.csv"),
    Flag("references per item at most", "--max-references", ("score",) + RATED,
         doc="each item's first N references in their stored order; signatures record maxrefs:N"),
    Flag("dataset config", "--config", ("score", "lsdscc annotate browse", "analyze discrimination"),
         reasons={"analyze discrimination": "DailyDialog++ (Sai et al. 2020)"}),
    Flag("dataset folder to read", "--dataset", ("lsdscc testset", "lsdscc export-ids", "lsdscc annotate export",
                                                 "lsdscc annotate import", "lsdscc annotate serve",
                                                 "lsdscc annotate browse"),
         reasons={"lsdscc annotate browse": "browse shows --dataset or a --references file"}),
    Flag("seed of the analysis resampling", "--seed", RATED + ("score",),
         doc="bootstrap resamples (correlation; score --confidence/--paired-bs/--paired-ar), reference orders (refcount)"),
    Flag("seed of the DailyDialog++ sampling", "--seed", ("dailydialog build",), doc="random negatives and shuffles"),
    Flag("seed of the augmentation", "--seed", ("augment",), doc="Doc2Vec's seed"),
    Flag("Lucene similarity", "--similarity", ("lsdscc build", "lsdscc testset", "augment"),
         doc="tfidf = Lucene ClassicSimilarity, the LSDSCC paper's; bm25"),
    Flag("similarity feature", "--similarity", ("analyze regression",),
         doc="repeatable (Sugiyama et al. 2019)"),
)

CONCEPTS = {f.concept: f for f in TABLE}


def flags_of(command: str) -> list:
    """The table rows that name ``command``."""
    return [f for f in TABLE if command in f.commands]


# -- the parser tree -----------------------------------------------------------------------

def subcommands(parser: argparse.ArgumentParser) -> dict:
    """``{name: subparser}`` of a parser's subcommands ({} for a leaf)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def leaf_parsers(parser: argparse.ArgumentParser, path: str = ""):
    """Yield ``(command, parser)`` for every leaf command, e.g. ``("analyze correlation", p)``."""
    subs = subcommands(parser)
    if not subs and path:
        yield path, parser
    for name, sub in subs.items():
        yield from leaf_parsers(sub, f"{path} {name}".strip())


def visible_options(parser: argparse.ArgumentParser) -> dict:
    """``{option string: action}`` of the options ``--help`` shows."""
    return {s: a for a in parser._actions if a.help is not argparse.SUPPRESS for s in a.option_strings}


# -- defaults, derived ------------------------------------------------------------------------

def command_defaults(parser: argparse.ArgumentParser) -> dict:
    """``{flag: default as the docs show it}`` of a leaf command's visible ``--`` options: from
    the declaration the flag comes from (:func:`multiref.util.options.declared` of the class that
    declares it), or from the parser for a flag added by hand; :data:`REQUIRED` for a flag the
    command must be given."""
    from multiref.util.options import declared, shown

    out = {}
    for action in set(visible_options(parser).values()):
        if action.default == argparse.SUPPRESS:  # --help
            continue
        flag = action.option_strings[0] if action.option_strings[0].startswith("--") else action.option_strings[-1]
        owner = getattr(action, "declared_by", None)
        if action.required:
            out[flag] = REQUIRED
        elif owner is not None:
            out[flag] = next(default for spelled, default, _help, _fields in declared(owner)
                             if spelled.split("/")[0] == flag)
        else:
            out[flag] = shown(action.default)
    return out


def disagreements(leaves: dict, row: Flag) -> list:
    """What breaks "one default per concept" for ``row`` over ``leaves``: commands without a
    reason that do not share one default, and reasons given for a default that is not another."""
    default, each = concept_defaults(leaves, row)
    plain = {command: value for command, value in each.items() if command not in row.reasons}
    if plain and default is None:
        return [f"{row.flag} ({row.concept}): defaults differ without a reason: {plain}"]
    return [f"{row.flag} ({row.concept}): {command} has a reason for its default, but it is {value!r} as on the others"
            for command, value in each.items() if command in row.reasons and value == default]


def concept_defaults(leaves: dict, row: Flag) -> tuple:
    """``(default, {command: default})`` of the concept ``row`` over the leaf commands
    ``leaves`` (``{command: parser}``): the default the commands without a reason share (None
    when they do not share one, or every command has a reason), and each command's."""
    each = {command: command_defaults(leaves[command]).get(row.flag) for command in row.commands}
    plain = Counter(value for command, value in each.items() if command not in row.reasons)
    return (next(iter(plain)) if len(plain) == 1 else None), each


# -- old spellings ---------------------------------------------------------------------------

class _Noting:
    """Mixed into an option's action: an old spelling prints a note, then acts as the new one."""

    deprecated: dict

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in self.deprecated:
            old, option_string = option_string, self.deprecated[option_string]
            print(f"multiref: note: {old} is deprecated; use {option_string}", file=sys.stderr)
        super().__call__(parser, namespace, values, option_string)


def add_alias(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Accept ``old`` as a hidden, deprecated spelling of the existing option ``new``.

    The old spelling maps to the very same action (so "required" and "given twice" work as
    for the new one) but is not among its ``option_strings``, so ``--help`` and error
    messages show only the new spelling.
    """
    action = parser._option_string_actions[new]
    if not isinstance(action, _Noting):
        action.__class__ = type(f"Noting{type(action).__name__}", (_Noting, type(action)), {})
        action.deprecated = {}
    action.deprecated[old] = new
    parser._option_string_actions[old] = action


def dedupe_option_tuples(tuples: list) -> list:
    """Abbreviation matches with one entry per action, its current spelling first.

    So ``--out`` is ``--output`` rather than ambiguous with the hidden ``--output-dir``.
    """
    tuples = sorted(tuples, key=lambda t: t[1] not in t[0].option_strings)
    seen, out = set(), []
    for t in tuples:
        if id(t[0]) not in seen:
            seen.add(id(t[0]))
            out.append(t)
    return out


def install_aliases(root: argparse.ArgumentParser) -> None:
    """Add every old spelling of ``TABLE`` to the commands that accept it.

    An old spelling that a command still defines as a real option is left alone (the flag
    test reports it); so is a concept whose new flag the command lacks.
    """
    for command, parser in leaf_parsers(root):
        for flag in flags_of(command):
            for old, commands in flag.old.items():
                known = parser._option_string_actions
                if command in commands and old not in known and flag.flag in known:
                    add_alias(parser, old, flag.flag)


# -- options every command takes ------------------------------------------------------------

def annotate_defaults(root: argparse.ArgumentParser) -> None:
    """Append to a flag's help the reason the table gives for this command's own default.

    So ``analyze discrimination --help`` says why its tokenizer default is not score's.
    """
    for command, parser in leaf_parsers(root):
        shown = visible_options(parser)
        for flag in flags_of(command):
            why = flag.reasons.get(command, "")
            action = shown.get(flag.flag)
            if why and action is not None and why not in (action.help or ""):
                action.help = f"{action.help or ''} [this default: {why.replace('%', '%%')}]".strip()


def install_common(root: argparse.ArgumentParser, version: str) -> None:
    """Add ``--quiet``, ``--progress`` and a hidden ``--version`` to every leaf command."""
    for _command, parser in leaf_parsers(root):
        known = parser._option_string_actions
        if "--quiet" not in known:
            parser.add_argument("--quiet", "-q", action="store_true", default=False,
                                help="nothing on standard error but errors and warnings")
        if "--progress" not in known:
            parser.add_argument("--progress", action="store_true", default=False,
                                help="show progress of long steps even when standard error is not a terminal")
        if "--version" not in known:
            parser.add_argument("--version", action="version", version=version, help=argparse.SUPPRESS)


def _commands(commands) -> str:
    if tuple(commands) == ALL:
        return "all"
    names = [c for c in commands if c not in ANALYZE]
    analyze = [c for c in commands if c in ANALYZE]
    names.append("analyze (all four)" if tuple(analyze) == ANALYZE else ", ".join(analyze))
    return ", ".join(n for n in names if n)


def markdown_table(root: argparse.ArgumentParser) -> str:
    """The table as Markdown (the flag table of ``docs/cli.md``), with the defaults of the
    commands of the parser ``root`` (:func:`concept_defaults`)."""
    leaves = dict(leaf_parsers(root))
    lines = ["| concept | flag | default | commands | old spellings (hidden, deprecated) |", "|---|---|---|---|---|"]
    for f in TABLE:
        default, each = concept_defaults(leaves, f)
        default = "-" if default is None else default
        for command, why in f.reasons.items():
            default += f"; {command}: {each[command]} ({why})"
        old = ", ".join(f"`{o}` ({_commands(c)})" for o, c in f.old.items()) or "-"
        concept = f"{f.concept}: {f.doc}" if f.doc else f.concept
        lines.append(f"| {concept} | `{f.flag}` | {default} | {_commands(f.commands)} | {old} |")
    return "\n".join(lines) + "\n"


# -- unknown options ---------------------------------------------------------------------------

def suggest(name: str, command: argparse.ArgumentParser, beam: argparse.ArgumentParser | None = None) -> str:
    """`` (did you mean --x?)`` for the known option closest to ``name``, or ``""``."""
    import difflib

    candidates = [s for s in visible_options(command) if s.startswith("--")]
    if beam is not None:
        candidates += [s for s in beam._option_string_actions if s.startswith("--")]
    key = name.replace("_", "-").lower()
    by_key = {c.replace("_", "-").lower(): c for c in reversed(candidates)}
    match = difflib.get_close_matches(key, list(by_key), n=1, cutoff=0.75)
    return f" (did you mean {by_key[match[0]]}?)" if match else ""


def _import_runner(beam_args: list) -> None:
    """Import the module of a ``--runner package.module.Class``: its options register on import."""
    import importlib

    from multiref.util.errors import UsageError

    for i, token in enumerate(beam_args):
        value = token.split("=", 1)[1] if token.startswith("--runner=") else (
            beam_args[i + 1] if token == "--runner" and i + 1 < len(beam_args) else None)
        if value and "." in value:
            module = value.rsplit(".", 1)[0]
            try:
                importlib.import_module(module)
            except ImportError as exc:
                raise UsageError(f"--runner {value}: cannot import {module} ({exc})") from None


def beam_option_parser(command: argparse.ArgumentParser, beam_args: list = ()) -> argparse.ArgumentParser:
    """Beam's own parser of every registered ``PipelineOptions`` class (Beam's, the runner's
    named by ``--runner``, any subclass defined so far); its errors are usage errors.

    The parser is the one Beam builds for :meth:`PipelineOptions.get_all_options`, handed
    over by that method's public ``add_extra_args_fn`` hook.
    """
    from apache_beam.options.pipeline_options import PipelineOptions

    from multiref.util.errors import UsageError

    import logging

    _import_runner(list(beam_args))
    parsers = []
    root = logging.getLogger()
    handlers = list(root.handlers)
    PipelineOptions([]).get_all_options(add_extra_args_fn=parsers.append)
    for handler in root.handlers[len(handlers):]:  # PipelineOptions() calls logging.basicConfig(): undo it, so
        root.removeHandler(handler)  # the command's capture of Beam's logs (multiref_cli.beam_logs) still holds
    parser = parsers[0]

    def error(message):
        if not message.startswith("ambiguous option: "):  # Beam ignores these too (no abbreviations)
            raise UsageError(f"bad Apache Beam option for '{command.prog}': {message}")

    parser.error = error
    return parser
