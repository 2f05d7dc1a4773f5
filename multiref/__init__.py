"""multiref-dialog: multi-reference dialogue-evaluation datasets and metrics.

The shared core, at the bottom of the layers (it imports no other project package):
``util`` (files local or remote, progress, errors) under ``output`` (Hugging Face folders,
the Beam writer, atomic publishing) and ``metrics`` (metrics, tokenizers, ``evaluate``
modules, reference loading), with ``analysis`` (evaluating the evaluators) on ``metrics``.

Importing this package is cheap: heavy dependencies (Apache Beam, gensim, the JVM,
pandas, datasets) are imported only by the functions that need them.
"""

__version__ = "0.1.0"
