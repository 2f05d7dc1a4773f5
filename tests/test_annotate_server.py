"""The annotation server over real HTTP on 127.0.0.1 (lsdscc/annotation/session.py,
lsdscc/annotation/server.py, lsdscc/annotation/browse.py; docs/algorithms.md#test-set-step-6-annotation).

Data: the hand-made ``test_candidates`` of tests/data/testset/candidates.json (three
queries: t3_qa with 5 candidates, t1_qb with 3, t1_qc with 2), built as in
tests/test_annotation.py. Expected groups follow the import rule with one annotator: the
relevant rows, grouped by the labels chosen.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from multiref.util.errors import UserError
from tests.test_annotation import make_candidates

QA = [f"t3_qa#{k}" for k in range(1, 6)]
QB = [f"t1_qb#{k}" for k in range(1, 4)]
QC = [f"t1_qc#{k}" for k in range(1, 3)]
# One annotator's full labelling and the public JSON that `annotate import` makes of it.
LABELS = {QA[0]: ("1", "a"), QA[1]: ("1", "a"), QA[2]: ("1", "b"), QA[3]: ("0", ""), QA[4]: ("1", "c"),
          QB[0]: ("1", "1"), QB[1]: ("0", ""), QB[2]: ("1", "1"), QC[0]: ("0", ""), QC[1]: ("0", "")}
EXPECTED_PUBLIC = {
    "what is the best batman movie": {"1": ["the dark knight for sure", "the dark knight obviously"],
                                      "2": ["batman begins"], "3": ["i like turtles"]},
    "favorite horror movie": {"1": ["the thing", "hereditary"]},
}


@pytest.fixture()
def dataset(tmp_path):
    folder = tmp_path / "corpus"
    make_candidates(folder)
    return str(folder)


def request(url, method="GET", body=None, content_type="application/json"):
    """``(status, parsed JSON or text)`` of one HTTP request."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None and content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, raw, ctype = resp.status, resp.read(), resp.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        status, raw, ctype = exc.code, exc.read(), exc.headers["Content-Type"]
    return status, (json.loads(raw) if ctype.startswith("application/json") else raw.decode())


def changes(labels):
    return {"changes": [{"row_id": rid, "relevant": rel, "group": grp} for rid, (rel, grp) in labels.items()]}


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture()
def running(tmp_path):
    """Start an in-process server for an app; yields a function app -> base URL."""
    from lsdscc.annotation.server import make_server

    servers = []

    def start(app):
        server = make_server(app, "127.0.0.1", 0)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        servers.append((server, thread, app))
        host, port = server.server_address[:2]
        return f"http://{host}:{port}"

    yield start
    for server, thread, app in servers:
        server.shutdown()
        server.server_close()
        thread.join(5)
        if app.page == "annotate":
            app.session.close()


@pytest.fixture()
def annotate(dataset, tmp_path, running):
    from lsdscc.annotation.server import AnnotateApp
    from lsdscc.annotation.session import AnnotationSession

    out = str(tmp_path / "ann" / "alice.csv")
    session = AnnotationSession.open(dataset, out, annotator="alice")
    return running(AnnotateApp(session)), session, out


def test_state_query_and_first_save(annotate):
    from lsdscc.annotation.roundtrip import COLUMNS

    url, session, out = annotate
    status, state = request(url + "/api/state")
    assert status == 200 and state["annotator"] == "alice" and state["resume"] == 0
    assert (state["done"], state["total"]) == (0, 3) and [q["id"] for q in state["queries"]] == ["t3_qa", "t1_qb", "t1_qc"]
    status, view = request(url + "/api/query/0")
    assert [c["proposed_group"] for c in view["candidates"]] == ["1", "1", "2", "3", "4"]  # as `annotate export`
    assert view["candidates"][2]["lucene_score"] == 3.5 and view["done"] is False
    rows = read_csv(out)  # written at start: the export rows, unlabelled
    assert list(rows[0]) == list(COLUMNS) and len(rows) == 10 and all(r["relevant"] == "" for r in rows)
    status, answer = request(url + "/api/label", "POST", changes({QC[0]: ("0", ""), QC[1]: ("1", "z")}))
    assert status == 200 and answer["progress"] == {"done": 1, "total": 3}
    assert [(c["relevant"], c["group"]) for c in answer["query"]["candidates"]] == [("0", ""), ("1", "z")]
    assert [(r["relevant"], r["group"]) for r in read_csv(out)[8:]] == [("0", ""), ("1", "z")]
    assert request(url + "/api/state")[1]["resume"] == 0 and request(url + "/")[1].startswith("<!doctype html>")


def test_labelled_file_imports_and_resumes(annotate, dataset, tmp_path):
    from lsdscc.annotation.session import AnnotationSession
    from lsdscc.annotation.roundtrip import import_annotations

    url, session, out = annotate
    assert request(url + "/api/label", "POST", changes({QA[0]: ("1", "a"), QA[1]: ("0", "")}))[0] == 200
    # an unfinished file is well-formed, but import refuses it until every query is done
    with pytest.raises(UserError, match=r"missing relevance label for row t3_qa#3"):
        import_annotations(dataset, [out], str(tmp_path / "public"))
    from pipelines.lsdscc.publish import publish_annotations  # the command's path: nothing left beside the dataset

    beside = sorted(os.listdir(os.path.dirname(os.path.realpath(dataset))))
    with pytest.raises(UserError, match=r"missing relevance label for row t3_qa#3"):
        publish_annotations(dataset, [out], str(tmp_path / "public"))
    assert sorted(os.listdir(os.path.dirname(os.path.realpath(dataset)))) == beside
    # ... or imports the queries finished so far with partial=True: none while the first is half done,
    counts = import_annotations(dataset, [out], str(tmp_path / "partial"), partial=True)
    assert (counts["queries_unfinished"], counts["queries"]) == (3, 0)
    # the first one once it is done
    assert request(url + "/api/label", "POST", changes({q: LABELS[q] for q in QA}))[0] == 200
    counts = import_annotations(dataset, [out], str(tmp_path / "partial"), partial=True)
    assert (counts["queries_unfinished"], counts["queries"]) == (2, 1)
    public = json.loads((tmp_path / "partial" / "test.group.json").read_text())
    assert public == {"what is the best batman movie": EXPECTED_PUBLIC["what is the best batman movie"]}
    assert request(url + "/api/label", "POST", changes(LABELS))[1]["progress"] == {"done": 3, "total": 3}
    import_annotations(dataset, [out], str(tmp_path / "public"))
    assert json.loads((tmp_path / "public" / "test.group.json").read_text()) == EXPECTED_PUBLIC
    session.close()
    resumed = AnnotationSession.open(dataset, out)
    assert resumed.annotator == "alice"  # from the file name
    assert {r["row_id"]: (r["relevant"], r["group"]) for r in resumed.rows} == LABELS
    resumed.close()


def test_resume_starts_at_first_unfinished_query(dataset, tmp_path):
    from lsdscc.annotation.session import AnnotationSession
    from lsdscc.annotation.roundtrip import export

    out = tmp_path / "bob.csv"
    export(dataset, str(out))  # a file from `annotate export`, labelled by hand in a spreadsheet
    rows = read_csv(out)
    for r in rows[:5]:
        r["relevant"], r["group"] = "yes", "k"
    rows[5]["relevant"], rows[5]["proposed_group"] = "no", "7"
    with open(out, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    session = AnnotationSession.open(dataset, str(out))
    overview = session.overview()
    assert (overview["done"], overview["resume"]) == (1, 1)
    assert [(r["relevant"], r["group"]) for r in session.rows[:6]] == [("1", "k")] * 5 + [("0", "")]
    assert session.rows[5]["proposed_group"] == "7"  # the file's proposal is kept
    with pytest.raises(UserError, match="another annotation server is writing"):
        AnnotationSession.open(dataset, str(out))
    session.close()
    assert not (tmp_path / "bob.csv.lock").exists()


@pytest.mark.parametrize(
    "line, message",
    [
        ("t3_zz#1,,1,a", r"bad\.csv:2: unknown row id 't3_zz#1'"),
        ("t3_qa#1,the dark knight,1,a", r"bad\.csv:2: reference text of row t3_qa#1 differs"),
        ("t3_qa#1,the dark knight for sure,maybe,a", r"bad\.csv:2: relevance of row t3_qa#1 must be 1/0"),
        ("t3_qa#1,the dark knight for sure,1,", r"bad\.csv:2: row t3_qa#1: a relevant row needs a group"),
        ("t3_qa#1,the dark knight for sure,1,a;b", r"bad\.csv:2: row t3_qa#1: group 'a;b' must be one word"),
        ("t3_qa#2,the dark knight obviously,1,a\nt3_qa#2,the dark knight obviously,0,", r"bad\.csv:3: row t3_qa#2 given twice"),
        ("t3_qa#1,the dark knight for sure,1,a,nice", r"bad\.csv:1: column\(s\) 'notes' are not among the columns"),
    ],
)
def test_resume_rejects_bad_files(dataset, tmp_path, line, message):
    from lsdscc.annotation.session import AnnotationSession

    bad = tmp_path / "bad.csv"
    header = "row_id,reference,relevant,group" + (",notes" if line.endswith(",nice") else "")
    bad.write_text(header + "\n" + line + "\n")
    before = bad.read_text()
    with pytest.raises(UserError, match=message):
        AnnotationSession.open(dataset, str(bad))
    assert bad.read_text() == before and not (tmp_path / "bad.csv.lock").exists()


@pytest.mark.parametrize(
    "method, path, body, content_type, status, message",
    [
        ("POST", "/api/label", b"{not json", "application/json", 400, "not valid JSON"),
        ("POST", "/api/label", changes({QA[0]: ("1", "a")}), "text/plain", 415, "Content-Type: application/json"),
        ("POST", "/api/label", {"change": []}, "application/json", 400, "body must be an object"),
        ("POST", "/api/label", {"changes": []}, "application/json", 400, "non-empty list"),
        ("POST", "/api/label", changes({"t3_qa#9": ("1", "a")}), "application/json", 400, "unknown row id 't3_qa#9'"),
        ("POST", "/api/label", changes({QA[0]: ("maybe", "a")}), "application/json", 400, "'relevant' must be"),
        ("POST", "/api/label", changes({QA[0]: ("1", "")}), "application/json", 400, "needs a group"),
        ("POST", "/api/label", changes({QA[0]: ("1", "a b")}), "application/json", 400, "must be one word"),
        ("POST", "/api/label", changes({QA[1]: ("0", ""), "t3_qa#9": ("1", "a")}), "application/json", 400, "unknown row id"),
        ("GET", "/api/label", None, None, 405, "GET is not allowed"),
        ("DELETE", "/api/state", None, None, 405, "DELETE is not allowed"),
        ("OPTIONS", "/api/label", None, None, 405, "OPTIONS is not allowed"),
        ("BREW", "/api/label", None, None, 405, "Unsupported method"),
        ("GET", "/api/query/-1", None, None, 400, "must be a number"),
        ("GET", "/api/query/", None, None, 400, "must be a number"),
        ("POST", "/api/label", b"[" * 100_000, "application/json", 400, "not valid JSON"),
        ("POST", "/api/label", b'{"changes": ' + b"9" * 5000 + b"}", "application/json", 400, "not valid JSON"),
        ("POST", "/api/label", b'{"changes": "\xff"}', "application/json", 400, "not valid JSON"),
        ("POST", "/api/state", changes({QA[0]: ("1", "a")}), "application/json", 405, "POST is not allowed"),
        ("GET", "/api/query/3", None, None, 404, "no query 3"),
        ("GET", "/api/query/x", None, None, 400, "must be a number"),
        ("GET", "/static/../setup.py", None, None, 404, "no such page"),
        ("GET", "/nothing", None, None, 404, "no such page"),
    ],
)
def test_bad_requests_get_4xx_and_change_nothing(annotate, method, path, body, content_type, status, message):
    url, session, out = annotate
    before = open(out, "rb").read()
    got, answer = request(url + path, method, body, content_type)
    assert got == status and message in answer["error"]
    assert open(out, "rb").read() == before  # all or nothing: the valid change of a bad batch is not applied


def raw_request(url, data: bytes, timeout=10):
    """``(status, JSON body, raw response)`` of bytes sent as they are on a new connection."""
    import socket

    host, port = url.split("//")[1].rsplit(":", 1)
    data = data.replace(b"{HOST}", f"{host}:{port}".encode())  # the Host the server answers
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:  # every error answer closes the connection
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    raw = b"".join(chunks)
    assert raw.startswith(b"HTTP/1."), raw[:200]  # an HTTP answer, not a dropped connection
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"application/json" in head, head
    return int(head.split()[1]), (json.loads(body) if body else None), raw  # HEAD: no body


def _post(length_header: bytes, body: bytes = b'{"changes": []}') -> bytes:
    return (b"POST /api/label HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            + length_header + b"Connection: close\r\n\r\n" + body)


@pytest.mark.parametrize(
    "data, status, message",
    [
        (b"GET /api/query/\xb2 HTTP/1.1\r\nHost: {HOST}\r\n\r\n", 400, "must be a number"),  # str.isdigit('\xb2')
        ("GET /api/query/\u0663 HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode(), 400, "must be a number"),
        (b"GET /api/query/%C2%B2 HTTP/1.1\r\nHost: {HOST}\r\n\r\n", 400, "must be a number"),
        (b"HEAD /api/query/\xb2 HTTP/1.1\r\nHost: {HOST}\r\n\r\n", 400, None),
        (_post(b"Content-Length: \xb2\r\n"), 411, "Content-Length"),
        (_post(b"Content-Length: -5\r\n"), 411, "Content-Length"),
        (_post(b"Content-Length: 1e3\r\n"), 411, "Content-Length"),
        (_post(b""), 411, "Content-Length"),
        (_post(b"Content-Length: " + b"9" * 5000 + b"\r\n"), 413, "over"),
        (_post(b"Content-Length: 99999999999999999999\r\n"), 413, "over"),
        (_post(b"Content-Length: 4\r\n", b"\xff\xfe[]"), 400, "not valid JSON"),
        (b"GARBAGE\r\n\r\n", 400, "Bad request"),
        (b"GET /api/state\r\n\r\n", 400, "HTTP/0.9"),
        (b"\xff\xfe\x00\x01 / HTTP/1.1\r\n\r\n", 405, "Unsupported method"),
        (b"GET / HTTP/2.0\r\nHost: {HOST}\r\n\r\n", 400, "version"),
        (b"GET / HTTP/1.1 extra\r\n\r\n", 400, "Bad request"),
        (b"BREW /api/label HTTP/1.1\r\nHost: {HOST}\r\n\r\n", 405, "Unsupported method"),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", 414, None),
        (b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 120 + b"\r\n", 431, None),
        (b"GET /api/state HTTP/1.1\r\nHost: \xff\xfe\r\n\r\n", 403, "unexpected Host header"),
        (b"GET /api/state HTTP/1.0\r\n\r\n", 403, "unexpected Host header"),
    ],
)
def test_malformed_requests_get_a_4xx_json_answer(annotate, data, status, message):
    url, session, out = annotate
    before = open(out, "rb").read()
    got, body, raw = raw_request(url, data)
    assert got == status and 400 <= got < 500, raw[:300]
    if message is not None:
        assert message in body["error"], body
    assert open(out, "rb").read() == before


def test_a_body_shorter_than_its_length_times_out_with_408(annotate, monkeypatch):
    from lsdscc.annotation import server as annotate_server

    monkeypatch.setattr(annotate_server.Handler, "timeout", 1.0)
    url, session, out = annotate
    got, body, raw = raw_request(url, _post(b"Content-Length: 100\r\n", b'{"cha'), timeout=20)
    assert got == 408 and "body" in body["error"]


def test_200_concurrent_requests_without_a_reset(annotate):
    """socketserver's listen backlog of 5 reset connections under load; every one of 200 clients
    connecting at once must get an HTTP answer."""
    import socket
    import time

    url, session, out = annotate
    host, port = url.split("//")[1].rsplit(":", 1)
    n = 200
    barrier = threading.Barrier(n, timeout=60)
    results = [None] * n

    def client(i):
        try:
            barrier.wait()
            with socket.create_connection((host, int(port)), timeout=30) as sock:
                sock.sendall(f"GET /api/state HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
            results[i] = data
        except Exception as exc:  # noqa: BLE001 - what a client saw is the result
            results[i] = exc

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    failures = [r for r in results if not isinstance(r, bytes)]
    assert not failures, f"{len(failures)} of {n} failed, e.g. {failures[:3]!r}"
    assert all(r.startswith(b"HTTP/1.1 200 ") for r in results)
    assert time.perf_counter() - start < 60


def test_an_error_closes_the_connection(annotate):
    """A refused POST's unread body must not be taken for the next request on the connection."""
    import http.client

    url, session, out = annotate
    conn = http.client.HTTPConnection(url.split("//")[1], timeout=10)
    conn.request("POST", "/api/label", body=b'{"changes": []}GET / HTTP/1.1', headers={"Content-Type": "text/plain"})
    resp = conn.getresponse()
    assert resp.status == 415 and resp.getheader("Connection") == "close"
    assert json.loads(resp.read())["error"].startswith("send the body as")
    conn.close()


def test_foreign_host_header_is_refused(annotate):
    url, session, out = annotate
    req = urllib.request.Request(url + "/api/state", headers={"Host": "evil.example:80"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=10)
    assert caught.value.code == 403 and "unexpected Host header" in json.loads(caught.value.read())["error"]
    port = url.rsplit(":", 1)[1]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"LOCALHOST:{port}"):
        req = urllib.request.Request(url + "/api/state", headers={"Host": host})
        assert urllib.request.urlopen(req, timeout=10).status == 200, host
    for host in ("localhost:1", "127.0.0.1:1", "localhost", f"127.0.0.2:{port}", f"evil.example:{port}"):
        got, body, _ = raw_request(url, f"GET /api/state HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        assert got == 403 and "unexpected Host header" in body["error"], host


@pytest.mark.parametrize("bind", ["127.0.0.2", "127.1.2.3"])
def test_host_check_holds_for_any_bound_address(dataset, tmp_path, bind):
    # --host 127.0.0.2 used to turn the check off: the allowed Hosts come from the bound address
    from lsdscc.annotation.server import AnnotateApp, make_server
    from lsdscc.annotation.session import AnnotationSession

    session = AnnotationSession.open(dataset, str(tmp_path / "b.csv"), annotator="bob")
    server = make_server(AnnotateApp(session), bind, 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        url = f"http://{bind}:{port}"
        for host, status in [(f"{bind}:{port}", 200), (f"localhost:{port}", 200), ("evil.example", 403),
                             (f"evil.example:{port}", 403), (f"{bind}:{port + 1}", 403), (f"127.0.0.1:{port}", 403)]:
            got, body, raw = raw_request(url, f"GET /api/state HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            assert got == status, (host, raw[:200])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        session.close()


def test_allowed_hosts_for_a_wildcard_or_lan_address():
    from lsdscc.annotation.server import allowed_hosts, host_allowed

    assert allowed_hosts("127.0.0.1", 8765) == {"127.0.0.1:8765", "localhost:8765"}
    assert allowed_hosts("::1", 8765) == {"[::1]:8765", "localhost:8765"}
    assert allowed_hosts("192.168.1.5", 80) == {"192.168.1.5:80", "192.168.1.5"}
    assert allowed_hosts("0.0.0.0", 8765) is None  # any IP literal: DNS rebinding needs a name
    for host, ok in [("192.168.1.5:8765", True), ("[::1]:8765", True), ("LOCALHOST:8765", True), ("10.0.0.1:8766", False),
                     ("evil.example:8765", False), ("", False), ("[::1]", False), ("1.2.3.4:x", False)]:
        assert host_allowed(host, "0.0.0.0", 8765) is ok, host
    assert host_allowed("[::1]", "::", 80) and host_allowed("127.0.0.1", "127.0.0.1", 80)


def test_two_tabs_never_interleave(annotate, dataset, tmp_path):
    from lsdscc.annotation.roundtrip import import_annotations

    url, session, out = annotate
    errors = []

    def tab(rows, rounds):
        for i in range(rounds):
            # both tabs write every row of their half; the final round writes LABELS
            labels = {rid: LABELS[rid] if i == rounds - 1 else ("1", f"t{i}") for rid in rows}
            status, answer = request(url + "/api/label", "POST", changes(labels))
            if status != 200:
                errors.append(answer)

    ids = list(LABELS)
    tabs = [threading.Thread(target=tab, args=(ids[:5], 15)), threading.Thread(target=tab, args=(ids[5:], 15))]
    for t in tabs:
        t.start()
    for t in tabs:
        t.join()
    assert errors == []
    assert {r["row_id"]: (r["relevant"], r["group"]) for r in read_csv(out)} == LABELS
    assert sorted(os.listdir(os.path.dirname(out))) == ["alice.csv", "alice.csv.lock"]  # no temporary file left
    import_annotations(dataset, [out], str(tmp_path / "public"))
    assert json.loads((tmp_path / "public" / "test.group.json").read_text()) == EXPECTED_PUBLIC


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_cleanly_and_the_csv_imports(dataset, tmp_path, signum):
    from lsdscc.annotation.roundtrip import import_annotations

    out = tmp_path / "carol.csv"
    proc = subprocess.Popen([sys.executable, "-m", "multiref_cli", "lsdscc", "annotate", "serve", "--dataset", dataset,
                             "--output", str(out), "--port", "0", "--annotator", "Carol"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split()[1].rstrip("/")
        assert request(url + "/api/state")[1]["annotator"] == "Carol"
        assert request(url + "/api/label", "POST", changes(LABELS))[0] == 200
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode in (0, 130), err
    assert "Traceback" not in err and "stopped: 3 of 3 queries done" in err
    assert not (tmp_path / "carol.csv.lock").exists()
    import_annotations(dataset, [str(out)], str(tmp_path / "public"))
    assert json.loads((tmp_path / "public" / "test.group.json").read_text()) == EXPECTED_PUBLIC


def test_cli_errors_are_one_line(dataset, tmp_path):
    base = [sys.executable, "-m", "multiref_cli", "lsdscc", "annotate"]
    done = subprocess.run(base + ["serve", "--dataset", str(tmp_path / "nope"), "--output", str(tmp_path / "a.csv"),
                                  "--port", "0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stderr.startswith("multiref: error:") and len(done.stderr.splitlines()) == 1
    done = subprocess.run(base + ["browse", "--dataset", dataset, "--hypotheses", str(tmp_path / "h.jsonl"), "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "--hypotheses needs reference groups" in done.stderr


# ---------------------------------------------------------------- browse

HYPS = [{"query": "what is the best batman movie", "hypotheses": ["the dark knight", "batman begins is great"]},
        {"query": "favorite horror movie", "hypothesis": "the thing"}]


def _write_public(tmp_path):
    refs, hyps = tmp_path / "test.group.json", tmp_path / "system.jsonl"
    refs.write_text(json.dumps(EXPECTED_PUBLIC, indent=2))
    hyps.write_text("".join(json.dumps(h) + "\n" for h in HYPS))
    return str(refs), str(hyps)


def test_browse_public_json_with_hypotheses(tmp_path, running):
    from lsdscc.annotation.browse import browse_document
    from lsdscc.annotation.server import BrowseApp
    from multiref.metrics import get_metric

    refs, hyps = _write_public(tmp_path)
    url = running(BrowseApp(browse_document(references=refs, hypotheses=hyps)))
    status, doc = request(url + "/api/state")
    assert status == 200 and doc["kind"] == "references" and [i["query"] for i in doc["items"]] == list(EXPECTED_PUBLIC)
    first = doc["items"][0]
    assert first["groups"][1] == {"id": "2", "references": ["batman begins"]}
    metric = get_metric("maxbleu")
    groups = list(EXPECTED_PUBLIC["what is the best batman movie"].values())
    # each hypothesis's BLEU is its own MaxBLEU (the best group); the query's is their mean
    assert [h["group"] for h in first["hypotheses"]] == ["1", "2"]
    for h in first["hypotheses"]:
        assert h["bleu"] == pytest.approx(metric.group_score([h["text"]], groups), abs=1e-12)
    assert first["maxbleu"] == pytest.approx(metric.group_score(HYPS[0]["hypotheses"], groups), abs=1e-12)
    second = metric.group_score(["the thing"], list(EXPECTED_PUBLIC["favorite horror movie"].values()))
    assert doc["items"][1]["maxbleu"] == pytest.approx(second, abs=1e-12)
    assert doc["maxbleu"]["score"] == pytest.approx((first["maxbleu"] + second) / 2, abs=1e-12)
    assert doc["maxbleu"]["signature"].startswith("maxbleu|") and doc["maxbleu"]["queries"] == 2
    assert request(url + "/api/label", "POST", changes({QA[0]: ("1", "a")}))[0] == 404  # read-only
    assert request(url + "/api/query/0")[0] == 404
    assert "browse.js" in request(url + "/")[1] and "function api(" in request(url + "/static/common.js")[1]


def test_browse_dataset_configs(dataset, tmp_path):
    from lsdscc.annotation.browse import browse_document
    from lsdscc.annotation.roundtrip import import_annotations, propose_groups

    doc = browse_document(dataset=dataset)  # no test_grouped yet: the candidates
    assert doc["kind"] == "test_candidates" and doc["maxbleu"] is None
    assert [c["proposed_group"] for c in doc["items"][0]["candidates"]] == propose_groups(
        [c["text"] for c in doc["items"][0]["candidates"]], 0.2)
    assert doc["items"][0]["candidates"][2]["source_query"] == "best batman movie ever"
    labelled = tmp_path / "labels.csv"
    labelled.write_text("row_id,relevant,group\n" + "".join(f"{k},{r},{g}\n" for k, (r, g) in LABELS.items()))
    import_annotations(dataset, [str(labelled)], str(tmp_path / "public"))
    _, hyps = _write_public(tmp_path)
    doc = browse_document(dataset=dataset, hypotheses=hyps)
    assert doc["kind"] == "test_grouped" and [i["id"] for i in doc["items"]] == ["t3_qa", "t1_qb"]
    assert [g["references"] for g in doc["items"][1]["groups"]] == [["the thing", "hereditary"]]
    assert doc["maxbleu"]["queries"] == 2 and len(doc["items"][0]["hypotheses"]) == 2
    assert browse_document(dataset=dataset, config="test_candidates")["kind"] == "test_candidates"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "exactly one of --dataset"),
        ({"dataset": "D", "references": "R"}, "exactly one of --dataset"),
        ({"dataset": "D", "hypotheses": "H"}, "--hypotheses needs reference groups"),
        ({"dataset": "D", "config": "nope"}, "no config 'nope'"),
        ({"references": "R", "config": "test_grouped"}, "--config applies to --dataset"),
        ({"dataset": "missing"}, "no such folder"),
    ],
)
def test_browse_errors(dataset, tmp_path, kwargs, message):
    from lsdscc.annotation.browse import browse_document

    paths = {"D": dataset, "R": _write_public(tmp_path)[0], "H": _write_public(tmp_path)[1], "missing": str(tmp_path / "x")}
    with pytest.raises(UserError, match=message):
        browse_document(**{k: paths.get(v, v) for k, v in kwargs.items()})
