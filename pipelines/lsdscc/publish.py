"""What the LSDSCC jobs do inside a publication (:mod:`multiref.output.publish`), besides the corpus.

- :func:`testset_into`: the test-set stage over the corpus in a staging folder, with the build
  cache (Lucene index, Doc2Vec model, corpus snapshot) beside the dataset;
- :func:`finish`: the checks every published LSDSCC folder passes (rows where they must be)
  and the annotations carried over from the dataset being replaced;
- :func:`publish_testset` (``multiref lsdscc testset``) and :func:`publish_annotations`
  (``multiref lsdscc annotate import``): the two commands that add configs to an existing
  dataset, each publishing a new copy whole.

The corpus build itself (:func:`pipelines.lsdscc.corpus.build`) calls the first two. Library
code: UserError for a user's mistake, progress notes on stderr through
:mod:`multiref.util.progress`, nothing printed otherwise.
"""

from __future__ import annotations

import os
import shutil

from lsdscc.annotation.config import TIE
from multiref.util.errors import UserError
from multiref.util.location import is_remote

# The files the stage rewrites in place are copied into the staging folder (the rest is
# hard-linked from the dataset); its cache lives beside the dataset (lsdscc.testset.build_cache).
TESTSET_REWRITES = ("README.md", "dataset_meta.json", "test_candidates/*")
OLD_ARTIFACTS = "artifacts"  # where builds before the cache folder kept it, inside the dataset
#: the config without which an LSDSCC folder is unusable
REQUIRED = (("single_turn", "train"),)


def testset_into(pub, job) -> dict:
    """Run the test-set stage (``job``: a :class:`pipelines.lsdscc.testset_options.TestsetJob`) over the corpus in ``pub.staging``, with the
    build cache of the target (beside it, not inside the dataset: :mod:`lsdscc.testset.build_cache`;
    an old dataset's ``artifacts/`` is left out of the new one). Returns the stage's counts."""
    import shutil

    from lsdscc.testset.build_cache import cache_for
    from pipelines.lsdscc.testset import run_testset_stage

    shutil.rmtree(os.path.join(pub.staging, OLD_ARTIFACTS), ignore_errors=True)  # not part of the dataset
    return run_testset_stage(pub.staging, job, cache=cache_for(pub.target))


def finish(pub, *, check: bool = True) -> dict | None:
    """Check the dataset in ``pub.staging`` (:func:`multiref.output.published.check_dataset`:
    the card made to agree with the files; UserError, nothing published, when single_turn
    train has no rows), unless ``check`` is False; carry the previous dataset's annotations
    over (a note for the user in ``pub.notes``). Returns its rows ``{config: {split: rows}}``
    (None when not checked)."""
    from multiref.output import published

    from lsdscc.annotation import roundtrip as annotation

    splits = published.check_dataset(pub.staging, required=list(REQUIRED)) if check else None
    pub.notes.append(annotation.carry_over(pub.previous, pub.staging, pub.target))
    return splits


def existing_local_dataset(folder: str) -> None:
    """UserError unless ``folder`` is a local folder (a dataset to add a config to)."""
    if is_remote(folder):
        raise UserError(f"the test-set stage needs a local corpus folder, not {folder}: copy it locally first")
    if not os.path.isdir(folder):
        raise UserError(f"{folder} has no 'single_turn' config: no such folder; build the corpus first with "
                        "`multiref lsdscc build`")


def publish_testset(dataset: str, job, *, command: str = "multiref lsdscc testset") -> dict:
    """Build the test set over the corpus folder ``dataset`` (``job``: a
    :class:`pipelines.lsdscc.testset_options.TestsetJob`) and publish the
    folder whole. Returns the stage's counts (without its timings)."""
    from multiref.output import publish

    existing_local_dataset(dataset)
    with publish.publishing(dataset, command=command, seed=True, copy=TESTSET_REWRITES) as pub:
        counts = testset_into(pub, job)
        finish(pub)
    counts.pop("seconds", None)
    return counts


def publish_annotations(dataset: str, annotations, output: str, *, tie: str = TIE, partial: bool = False,
                        command: str = "multiref lsdscc annotate import") -> dict:
    """Merge the annotators' CSV files ``annotations`` into the test set of ``dataset``
    (:func:`lsdscc.annotation.roundtrip.import_round`) and publish the folder whole;
    test.group.json goes to ``output`` (published with the dataset when inside it). Returns
    the import's counts and ``agreement``."""
    from multiref.output import publish, published

    from lsdscc.annotation import roundtrip as annotation

    from multiref.output.file_output import check_output_folder

    if os.path.exists(output) and not os.path.isdir(output):
        raise UserError(f"--output {output}: exists and is a file; expected a folder for test.group.json")
    existing_local_dataset(dataset)
    if os.path.relpath(os.path.realpath(output), os.path.realpath(dataset)).startswith(os.pardir):
        check_output_folder(output, "--output", annotations)  # outside the dataset: in no other dataset
    with publish.publishing(dataset, command=command, seed=True, copy=("README.md", "dataset_meta.json")) as pub:
        inside = os.path.relpath(os.path.realpath(output), pub.target)  # pub.target is resolved too
        if not inside.startswith(os.pardir):  # output inside the dataset: published with it
            output = os.path.normpath(os.path.join(pub.staging, inside))
        try:
            counts, agreed = annotation.import_round(pub.staging, annotations, output, tie=tie, partial=partial)
            published.check_dataset(pub.staging)
        except UserError:  # the staging folder is only a linked copy of the dataset: leave none behind
            shutil.rmtree(pub.staging, ignore_errors=True)
            raise
    return {**counts, "agreement": agreed}
