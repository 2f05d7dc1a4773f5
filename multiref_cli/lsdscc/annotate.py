"""``multiref lsdscc annotate serve|browse``: label and look at the test set in a browser.

Only the standard library at module level; the handlers import :mod:`lsdscc.annotation.server`.
"""

from __future__ import annotations

import argparse
import sys


def _add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on; the page has no login, so keep the loopback (default: %(default)s)")
    from multiref.util.options import number_type

    parser.add_argument("--port", type=number_type(int, 0, 65535), default=8765,
                        help="port, 0 to 65535; 0 picks a free one (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true", help="log every request on stderr")


def _serve(args) -> int:
    from lsdscc.annotation.server import AnnotateApp, serve
    from lsdscc.annotation.session import AnnotationSession

    session = AnnotationSession.open(args.dataset, args.output, annotator=args.annotator,
                                     overlap_threshold=args.overlap_threshold)
    progress = session.progress()
    print(f"[annotate] {session.annotator}: {progress['done']} of {progress['total']} queries done; "
          f"every change is saved to {args.output}", file=sys.stderr)
    serve(AnnotateApp(session), args.host, args.port, args.verbose, on_stop=session.close)
    progress = session.progress()
    print(f"[annotate] stopped: {progress['done']} of {progress['total']} queries done, labels in {args.output}",
          file=sys.stderr)
    return 0


def _browse(args) -> int:
    from lsdscc.annotation.browse import browse_document
    from lsdscc.annotation.server import BrowseApp, serve

    document = browse_document(dataset=args.dataset, references=args.references, config=args.config,
                               hypotheses=args.hypotheses)
    print(f"[browse] {len(document['items'])} queries from {document['source']}", file=sys.stderr)
    return serve(BrowseApp(document), args.host, args.port, args.verbose)


def register(sub) -> None:
    """Add ``serve`` and ``browse`` to the ``annotate`` command group's subparsers ``sub``."""
    sv = sub.add_parser("serve", help="label relevance and groups in the browser, saving to the annotator's CSV",
                        description="Serve a local page to label each query's candidates (relevant or not, and a "
                                    "group of similar meaning), keyboard first. Every change is saved to --output "
                                    "in the format `annotate import` reads; rerunning resumes.")
    sv.add_argument("--dataset", required=True, metavar="FOLDER", help="folder with the test_candidates config")
    sv.add_argument("--output", required=True, metavar="ANNOTATOR.csv",
                    help="this annotator's CSV: created, or resumed when it exists (also a file from `annotate export`)")
    sv.add_argument("--annotator", default="", metavar="NAME",
                    help="name shown on the page and in the log (default: the CSV's file name)")
    sv.add_argument("--overlap-threshold", type=float, default=0.2,
                    help="word-overlap threshold of the proposed groups, as in `annotate export` (default: %(default)s)")
    _add_server_arguments(sv)
    sv.set_defaults(func=_serve)
    br = sub.add_parser("browse", help="look at a test set (and a system's hypotheses with MaxBLEU) in the browser",
                        description="Serve a read-only page of a test set: each query with its groups of references "
                                    "(or its candidates); with --hypotheses, the system's hypotheses, the group each "
                                    "aligns to, and MaxBLEU.")
    src = br.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", metavar="FOLDER", help="dataset folder (test_grouped, else test_candidates)")
    src.add_argument("--references", metavar="FILE", help="the public LSDSCC JSON file (test.group.json) or JSON lines")
    br.add_argument("--config", default=None,
                    help="config of --dataset to show, e.g. test_candidates (default: test_grouped when present)")
    br.add_argument("--hypotheses", "-H", metavar="FILE",
                    help="system outputs as JSON lines (id or query; hypotheses or hypothesis), as for `multiref score`")
    _add_server_arguments(br)
    br.set_defaults(func=_browse)
