"""Multi-reference DailyDialog and DailyDialog++, rebuilt from the DailyDialog release.

docs/algorithms.md sections 4 (MultiRef-DD) and 5 (DD++). Modules:

- ``readers``     the three releases' formats, with malformed lines as rejected records
- ``normalize``   text options (curly quotes, detokenize, lowercase) and join/duplicate keys
- ``contexts``    multi-reference contexts, DD++ chunking, duplicate and release selection
- ``negatives``   seeded random negatives from other dialogues
- ``corruptions`` synthetic corruptions of positives (reverse, shuffle, nouns, ...)
- ``splits``      train/validation/test by a hash of the dialogue id
- ``schema``      the Arrow schemas of the configs
- ``steps``       the job's per-element steps: element in, explicit outcome out (rows kept,
                  dead letters with their reasons, counts)
- ``card``        the dataset card of the output folder, made from its stats.json

The Beam job is pipelines/dailydialog/job.py (composites in pipelines/dailydialog/transforms.py);
the command is ``multiref dailydialog build``.

``sample/`` is a small bundled release written for this project (regenerate it with
tests/data/dailydialog/make_sample.py).
"""
