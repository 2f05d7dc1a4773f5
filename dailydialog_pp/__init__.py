"""Multi-reference DailyDialog and DailyDialog++, rebuilt from the DailyDialog release.

ALGORITHMS.md sections 4 (MultiRef-DD) and 5 (DD++). Modules:

- ``readers``     the three releases' formats, with malformed lines as rejected records
- ``normalize``   text options (curly quotes, detokenize, lowercase) and join/duplicate keys
- ``contexts``    multi-reference contexts, DD++ chunking, duplicate and release selection
- ``negatives``   seeded random negatives from other dialogues
- ``corruptions`` synthetic corruptions of positives (reverse, shuffle, nouns, ...)
- ``splits``      train/validation/test by a hash of the dialogue id
- ``schema``      the Arrow schemas of the configs
- ``cli``         ``multiref dailydialog build`` (the Beam pipeline is pipelines/dailydialog.py)

``sample/`` is a small bundled release written for this project (regenerate it with
tests/data/dailydialog/make_sample.py).
"""
