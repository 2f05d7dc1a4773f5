"""The LSDSCC corpus job's Clean and Vocabulary steps (docs/algorithms.md#1-lsdscc-corpus, steps 1-6),
as composite Beam transforms over :mod:`lsdscc.corpus.threads` and :mod:`lsdscc.corpus.vocab`:

- :class:`Clean`: each text of a thread cleaned and tokenized once (steps 1-4), and the tokens
  counted as they are made (the vocabulary's first pass);
- :class:`Vocabulary`: the counts summed (a combiner), steps 5-6 built from them and applied
  to every thread through a side input.

Threads travel as :class:`~lsdscc.corpus.threads.Thread` NamedTuples, encoded by the row coder
registered here.
"""

from __future__ import annotations

from collections import Counter

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from lsdscc.corpus import threads
from lsdscc.corpus.threads import Node, Thread
from multiref.beam.spill import SpillReshuffle
from multiref.beam.writer import SumCounts, register_row_coder

register_row_coder(Node, Thread)  # (also done by pipelines.lsdscc.transforms, which imports this module)


class CleanThread(beam.DoFn):
    """``(link_id, posts)`` -> ``Thread(link_id, nodes)``, each text cleaned and tokenized once
    (:func:`lsdscc.corpus.threads.clean_thread`); the bundle's token counts leave on the
    ``words`` output (a Counter) when the bundle finishes: the vocabulary's first pass, counted
    from the token lists instead of splitting every text again."""

    def __init__(self, config):
        self.config = config

    def start_bundle(self):
        self.words = Counter()

    def process(self, element):
        link_id, posts = element
        yield Thread(link_id, threads.clean_thread(posts, self.config, self.words))

    def finish_bundle(self):
        if self.words:
            words, self.words = self.words, Counter()
            yield beam.pvalue.TaggedOutput("words", GlobalWindows.windowed_value(words))


class Clean(beam.PTransform):
    """Clean: ``(link_id, posts)`` -> ``{"threads": (link_id, nodes), "words": token counts per
    bundle}``, each text cleaned and tokenized once (:class:`CleanThread`)."""

    def __init__(self, config):
        super().__init__()
        self.config = config

    def expand(self, thread_posts):
        clean = beam.ParDo(CleanThread(self.config)).with_output_types(Thread)
        out = thread_posts | "CleanAndTokenize" >> clean.with_outputs("words", main="threads")
        return {"threads": out.threads, "words": out.words}


class CountWords(SumCounts):
    """The corpus's token counts from ``(link_id, nodes)`` threads (each post counted once)."""

    def add_input(self, acc, thread):
        for node in thread.nodes:
            acc.update(node.text.split())
        return acc

    def extract_output(self, acc):
        return dict(acc)


class SumWords(CountWords):
    """The corpus's token counts from :class:`CleanThread`'s per-bundle counts."""

    def add_input(self, acc, words):
        acc.update(words)
        return acc


def _build_vocabulary(raw_counts, config):
    from lsdscc.corpus.vocab import build_vocabulary

    return build_vocabulary(raw_counts, vocab_size=config.vocab_size, rare_max_count=config.rare_max_count,
                            piece_min_count=config.piece_min_count, min_split_length=config.min_split_length,
                            unk_token=config.unk_token)


def _summarize_vocabulary(vocabulary, raw_counts, config):
    from lsdscc.corpus.vocab import vocabulary_summary

    return vocabulary_summary(raw_counts, vocabulary, config.long_word_length)


def _apply_vocabulary(thread, vocabulary):
    return Thread(thread.link_id, threads.apply_vocabulary(thread.nodes, vocabulary))


class Vocabulary(beam.PTransform):
    """Vocabulary: count every token (a combiner), build steps 5-6 from the counts, and apply
    them (slang segmentation, non-ASCII removal, truncation) to every thread through a side
    input. -> ``{"threads": (link_id, final nodes), "summary": stats of the vocabulary}``.
    ``spill``: a folder the job owns; the cleaned threads wait there for the vocabulary
    (:class:`~multiref.beam.spill.SpillReshuffle`), not in the runner's memory."""

    def __init__(self, config, spill=None):
        super().__init__()
        self.config = config
        self.spill = spill

    def expand(self, cleaned):
        config = self.config
        if isinstance(cleaned, dict):  # Clean's output: the threads and their token counts
            cleaned, raw = cleaned["threads"], cleaned["words"] | "CountWords" >> beam.CombineGlobally(SumWords())
        else:  # threads alone: counted here
            raw = cleaned | "CountWords" >> beam.CombineGlobally(CountWords())
        vocabulary = raw | "BuildVocabulary" >> beam.Map(_build_vocabulary, config)
        summary = vocabulary | "SummarizeVocabulary" >> beam.Map(_summarize_vocabulary, beam.pvalue.AsSingleton(raw),
                                                                  config)  # the vocabulary built once
        if self.spill is not None:  # kept on disk until the vocabulary is known
            cleaned = cleaned | "SpillCleaned" >> SpillReshuffle(self.spill)
        final = cleaned | "SegmentAndTruncate" >> beam.Map(
            _apply_vocabulary, beam.pvalue.AsSingleton(vocabulary)).with_output_types(Thread)
        return {"threads": final, "summary": summary}
