"""Defaults that several commands and the library share, each written once here.

- :data:`SEED`: the seed of every seeded resampling (bootstrap, permutation and paired
  tests, reference orders) unless a command says otherwise: ``multiref score``'s and
  ``multiref analyze``'s ``--seed``, :mod:`multiref.metrics.significance`, the analysis options.
- :data:`TOKENIZER`: the tokenizer of every metric and command that does not follow a paper
  with another one (``--tokenizer``; the metrics' ``tokenizer=`` keyword).

Standard library only (the command line imports it for ``--help``).
"""

SEED = 12345
TOKENIZER = "whitespace"
