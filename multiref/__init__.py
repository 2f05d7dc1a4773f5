"""multiref-dialog: multi-reference dialogue-evaluation datasets and metrics.

Importing this package is cheap: heavy dependencies (Apache Beam, gensim, the JVM,
pandas, datasets) are imported only by the functions that need them.
"""

__version__ = "0.1.0"
