"""``multiref lsdscc annotate serve|browse``: label and look at the test set in a browser.

The options are declared once, in :mod:`lsdscc.annotation.config`. Only the standard library
at module level; the handlers import :mod:`lsdscc.annotation.server`.
"""

from __future__ import annotations

import sys


def _serve(args) -> int:
    from lsdscc.annotation.config import ServeConfig
    from lsdscc.annotation.server import AnnotateApp, serve
    from lsdscc.annotation.session import AnnotationSession
    from multiref.util.options import from_args

    config = from_args(ServeConfig, args)
    session = AnnotationSession.open(config.source.dataset, config.output, annotator=config.annotator,
                                     overlap_threshold=config.proposal.overlap_threshold)
    progress = session.progress()
    print(f"[annotate] {session.annotator}: {progress['done']} of {progress['total']} queries done; "
          f"every change is saved to {config.output}", file=sys.stderr)
    server = config.server
    serve(AnnotateApp(session), server.host, server.port, server.verbose, on_stop=session.close)
    progress = session.progress()
    print(f"[annotate] stopped: {progress['done']} of {progress['total']} queries done, labels in {config.output}",
          file=sys.stderr)
    return 0


def _browse(args) -> int:
    from lsdscc.annotation.browse import browse_document
    from lsdscc.annotation.config import BrowseConfig
    from lsdscc.annotation.server import BrowseApp, serve
    from multiref.util.options import from_args

    config = from_args(BrowseConfig, args)
    document = browse_document(dataset=config.dataset, references=config.references, config=config.dataset_config,
                               hypotheses=config.hypotheses)
    print(f"[browse] {len(document['items'])} queries from {document['source']}", file=sys.stderr)
    return serve(BrowseApp(document), config.server.host, config.server.port, config.server.verbose)


def register(sub) -> None:
    """Add ``serve`` and ``browse`` to the ``annotate`` command group's subparsers ``sub``."""
    from lsdscc.annotation.config import BrowseConfig, ServeConfig
    from multiref.util.options import add_arguments

    sv = sub.add_parser("serve", help="label relevance and groups in the browser, saving to the annotator's CSV",
                        description="Serve a local page to label each query's candidates (relevant or not, and a "
                                    "group of similar meaning), keyboard first. Every change is saved to --output "
                                    "in the format `annotate import` reads; rerunning resumes.")
    add_arguments(sv, ServeConfig)
    sv.set_defaults(func=_serve)
    br = sub.add_parser("browse", help="look at a test set (and a system's hypotheses with MaxBLEU) in the browser",
                        description="Serve a read-only page of a test set: each query with its groups of references "
                                    "(or its candidates); with --hypotheses, the system's hypotheses, the group each "
                                    "aligns to, and MaxBLEU.")
    add_arguments(br, BrowseConfig)
    br.set_defaults(func=_browse)
