"""``multiref lsdscc rehydrate`` as one call: a corpus folder rebuilt from an ids file and the user's dumps.

:func:`rehydrate` reads the ids file (:func:`lsdscc.corpus.ids.read_ids`), turns the options it
records into the corpus job's configs (:func:`release_configs`: each value checked as the
``lsdscc build`` flag that sets it would be, errors naming the file), runs the corpus job with
them on the user's dumps, keeps only the release's rows (:func:`lsdscc.corpus.ids.compare`),
checks the folder and publishes it whole. It returns a :class:`RehydrateOutcome`; the command
line only prints it. Python callers::

    from lsdscc.corpus.ids import RehydrateConfig
    from pipelines.lsdscc.rehydrate import rehydrate

    outcome = rehydrate(RehydrateConfig(ids="lsdscc-ids.json", input=("dumps/",), output="out/rebuilt"))
    print(outcome.splits, outcome.warnings)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lsdscc.corpus.ids import RehydrateConfig


@dataclass(frozen=True)
class RehydrateOutcome:
    """What :func:`rehydrate` did.

    - ``output``, ``ids``: the folder published and the ids file read;
    - ``splits``: rows per config and split of the published folder (``{config: {split: n}}``);
    - ``digest_notes``: the user's dump files against the release's (a file missing, a digest
      that differs: :func:`lsdscc.corpus.ids.digest_notes`);
    - ``missing``: ``(file, (ids of the release's rows the dumps could not give))`` per parquet file;
    - ``removed``: ``(file, n)``: rows the release does not hold, removed (``n == -1``: a whole
      file the release does not hold);
    - ``summary``: the corpus job's summary (:func:`pipelines.lsdscc.corpus.finalize`).
    """

    output: str
    ids: str
    splits: dict
    digest_notes: tuple = ()
    missing: tuple = ()
    removed: tuple = ()
    summary: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def warnings(self) -> list:
        """One line per warning (digests, then missing rows one line per file), without the ``warning:`` prefix."""
        lines = list(self.digest_notes)
        lines += [f"{rel}: {len(lost):,} row(s) of the release missing from your dumps: {', '.join(lost)}"
                  for rel, lost in self.missing]
        return lines

    @property
    def notes(self) -> list:
        """One line per file changed to hold the release's rows only, without the ``note:`` prefix."""
        return [f"{rel}: " + ("a file the release does not hold, removed" if n < 0 else
                              f"{n:,} row(s) not in the release, removed") for rel, n in self.removed]


def release_configs(path: str, release: dict) -> tuple:
    """``(CorpusJob, CorpusConfig)`` of the options the ids release ``release`` (read from
    ``path``) records, checked as ``lsdscc build`` checks its flags, before any work: an option
    no flag sets must have its default, the number of shards must be one ``--num-shards``
    takes, every other value one its flag takes (:func:`multiref.util.options.from_recorded`).
    UserError ``PATH: options: ...`` otherwise. The job's input and output are left to the caller."""
    from lsdscc.corpus.config import CorpusConfig
    from multiref.util.errors import UserError
    from multiref.util.options import from_recorded, options_of
    from pipelines.lsdscc.options import CorpusJob, parse_num_shards

    options = release["options"]
    try:
        _check_unflagged(options, {opt.card or f.name for f, opt in options_of(CorpusConfig)})
        shards = options.get("num_shards")
        if parse_num_shards(str(shards)) is None:  # the card records the number used, never auto
            raise UserError(f"num_shards: {shards!r} is not a number of shards")
        corpus = from_recorded(CorpusConfig, options)
    except (UserError, ValueError) as exc:
        raise UserError(f"{path}: options: {exc}") from None
    missing = sorted(set(CorpusConfig().as_options()) - set(options))
    if missing:
        raise UserError(f"{path}: options: no {missing[0]!r} (every option of the build is recorded)")
    return CorpusJob(num_shards=str(shards)), corpus


def _check_unflagged(options: dict, flagged: set) -> None:
    """UserError for a recorded option that no flag sets, unless it has its default (a build made
    with a changed default cannot be reproduced)."""
    from lsdscc.corpus.config import CorpusConfig
    from multiref.util.errors import UserError

    default = CorpusConfig().as_options()
    for key in sorted(set(options) - flagged - {"num_shards"}):
        if key not in default or options[key] != default[key]:
            raise UserError(f"the release was built with {key}={options[key]!r}, which no flag of this "
                            f"version sets (default {default.get(key)!r}); it cannot be rebuilt")


def rehydrate(config: RehydrateConfig) -> RehydrateOutcome:
    """Rebuild the release ``config.ids`` from the dumps ``config.input`` with its options into
    ``config.output``, published whole (:mod:`multiref.output.publish`: a foreign folder or one
    holding an input is refused, the old folder kept on any failure). With the dump files the
    release was built from, the parquet files are byte-identical to the release's. UserError
    for a bad ids file (naming it), input or output."""
    from lsdscc.corpus import ids
    from multiref.output import publish, published
    from pipelines.lsdscc.corpus import finalize, run_parsed

    release = ids.read_ids(config.ids)
    job, corpus = release_configs(config.ids, release)
    with publish.publishing(config.output, command="multiref lsdscc rehydrate",
                            inputs=[*config.input, config.ids]) as pub:
        job = dataclasses.replace(job, input=tuple(config.input), output=pub.staging)
        summary = run_parsed(job, corpus, [], quiet=True)
        if summary["stats"]["options"] != release["options"]:
            raise RuntimeError("rehydrate: the rebuilt options differ from the release's")  # our bug: exit 3
        missing, removed = ids.compare(release, pub.staging)
        if removed:
            finalize(pub.staging, quiet=True)  # the card and plots again (stats keep the build's counts)
        splits = published.check_dataset(pub.staging)
    return RehydrateOutcome(output=config.output, ids=config.ids, splits=splits,
                            digest_notes=tuple(ids.digest_notes(release, summary["stats"].get("files", []))),
                            missing=tuple((rel, tuple(lost)) for rel, lost in missing),
                            removed=tuple(removed), summary=summary)
