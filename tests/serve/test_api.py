"""The JSON API through Starlette's TestClient: what each route answers, and the errors the
issue names (oversize -> 413 with a message, unknown tokenizer -> 404 JSON, a path outside
--allow-dir -> 403), each followed by a request that must still be served."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict

import pytest
from starlette.testclient import TestClient

from ciyuan import Tokenizer
from ciyuan.segment import Dictionary, Segmenter
from tests.serve.conftest import TEXT


def _still_serving(client: TestClient) -> None:
    """The server answers an ordinary request after an error."""
    r = client.post("/api/encode", json={"text": "still here", "tokenizers": ["bpe"]})
    assert r.status_code == 200
    assert r.json()["results"][0]["counts"]["characters"] == len("still here")


def _error(r: Any, status: int) -> str:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["status"] == status and isinstance(body["error"], str) and body["error"]
    return body["error"]


def test_tokenizers_lists_command_line_entries_and_dictionaries(client: TestClient) -> None:
    data = client.get("/api/tokenizers").json()
    by_name = {t["name"]: t for t in data["tokenizers"]}
    assert set(by_name) == {"bpe", "wp"}
    assert by_name["bpe"]["origin"] == "command line" and by_name["bpe"]["loaded"]
    assert by_name["wp"]["model"] == "WordPiece"
    assert data["dictionaries"] == [{"name": "words", "words": 21, "frequencies": True}]
    assert data["methods"] == ["fmm", "bmm", "bimm", "dag"]
    assert set(data["models"]) == {"bpe", "wordpiece", "unigram"}
    assert data["limits"]["request"] == 2 << 20


@pytest.mark.parametrize("name,file", [("bpe", "tok-bpe.json"), ("wp", "wp/tokenizer.json")])
def test_encode_equals_tokenizer_encode(client: TestClient, tiny_files: Path, name: str, file: str) -> None:
    tok = Tokenizer.load(tiny_files / file)
    enc = tok.encode(TEXT)
    result = client.post("/api/encode", json={"text": TEXT, "tokenizers": [name]}).json()["results"][0]
    assert result["name"] == name
    assert result["ids"] == enc.ids
    assert [t["id"] for t in result["tokens"]] == enc.ids
    assert [t["token"] for t in result["tokens"]] == enc.tokens
    assert [(t["start"], t["end"]) for t in result["tokens"]] == list(enc.offsets)
    assert [bytes.fromhex(t["bytes"]) for t in result["tokens"]] == [tok.decode_bytes([i]) for i in enc.ids]
    n_bytes = len(TEXT.encode())
    assert result["counts"] == {"tokens": len(enc.ids), "characters": len(TEXT), "bytes": n_bytes,
                                "bytes_per_token": round(n_bytes / len(enc.ids), 3)}


def test_encode_draws_at_most_max_drawn_tokens(client: TestClient, tiny_files: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from ciyuan.serve import api

    monkeypatch.setattr(api, "MAX_DRAWN", 5)
    enc = Tokenizer.load(tiny_files / "tok-bpe.json").encode(TEXT)
    data = client.post("/api/encode", json={"text": TEXT, "tokenizers": ["bpe", "wp"]}).json()
    bpe = data["results"][0]
    assert len(bpe["tokens"]) == 5 and bpe["hidden"] == len(enc.ids) - 5
    assert bpe["ids"] == enc.ids and bpe["counts"]["tokens"] == len(enc.ids)
    # The boundary differences are those of every token, drawn or not.
    monkeypatch.setattr(api, "MAX_DRAWN", 10**6)
    assert client.post("/api/encode", json={"text": TEXT, "tokenizers": ["bpe", "wp"]}).json()["differ"] == \
        data["differ"]


def test_encode_marks_kinds(client: TestClient) -> None:
    results = client.post("/api/encode", json={"text": TEXT, "tokenizers": ["bpe", "wp"]}).json()["results"]
    bpe, wp = ({t["kind"] for t in r["tokens"]} for r in results)
    assert {"text", "space", "byte"} <= bpe  # the emoji is not in 400 tokens: its bytes are pieces
    assert "special" in wp  # [CLS] and [SEP] around the text
    assert [t["token"] for t in results[1]["tokens"] if t["kind"] == "special"] == ["[CLS]", "[SEP]"]


def test_encode_two_tokenizers_gives_boundary_differences(client: TestClient, tiny_files: Path) -> None:
    data = client.post("/api/encode", json={"text": TEXT, "tokenizers": ["bpe", "wp"]}).json()
    assert [r["name"] for r in data["results"]] == ["bpe", "wp"]
    cuts = {}
    for name, file in (("bpe", "tok-bpe.json"), ("wp", "wp/tokenizer.json")):
        cut = set()
        for s, e in Tokenizer.load(tiny_files / file).encode(TEXT).offsets:
            if e > s:
                cut.update(p for p in (s, e) if 0 < p < len(TEXT))
        cuts[name] = cut
    expected = sorted((p, [n for n in ("bpe", "wp") if p in cuts[n]]) for p in cuts["bpe"] ^ cuts["wp"])
    assert [(d["pos"], d["by"]) for d in data["differ"]] == expected
    assert data["differ"]  # the byte-level BPE and WordPiece cut differently somewhere


def test_decode(client: TestClient, tiny_files: Path) -> None:
    tok = Tokenizer.load(tiny_files / "tok-bpe.json")
    ids = tok.encode_ids(TEXT)
    data = client.post("/api/decode", json={"tokenizer": "bpe", "ids": ids}).json()
    assert data["text"] == TEXT
    assert [t["id"] for t in data["tokens"]] == ids
    assert [t["token"] for t in data["tokens"]] == [tok.id_to_token(i) for i in ids]


def test_decode_unknown_id_is_400_and_names_it(client: TestClient) -> None:
    message = _error(client.post("/api/decode", json={"tokenizer": "bpe", "ids": [1, 10**9]}), 400)
    assert "1000000000" in message and "position 1" in message
    _still_serving(client)


def test_segment_every_method_equals_segmenter(client: TestClient, tiny_files: Path) -> None:
    text = "研究生命起源。他说的确实在理。结婚的和尚未结婚的都来了。"
    data = client.post("/api/segment", json={"text": text}).json()
    dictionary = Dictionary.load(tiny_files / "words.txt")
    assert [m["method"] for m in data["methods"]] == ["fmm", "bmm", "bimm", "dag"]
    words = {}
    for m in data["methods"]:
        expected = Segmenter(dictionary, m["method"]).tokenize(text)
        assert [(w["text"], w["start"], w["end"]) for w in m["words"]] == expected
        assert m["count"] == len(expected)
        words[m["method"]] = [w["text"] for w in m["words"]]
    assert words["fmm"] != words["bmm"]  # the dictionary was made so that they differ
    assert data["differ"]
    one = client.post("/api/segment", json={"text": text, "methods": ["bmm"], "dictionary": "words"}).json()
    assert [m["method"] for m in one["methods"]] == ["bmm"] and one["differ"] == []


def test_segment_errors(make_client: Callable[..., TestClient], client: TestClient) -> None:
    assert "method" in _error(client.post("/api/segment", json={"text": "x", "methods": ["crf"]}), 400)
    assert "no dictionary named" in _error(client.post("/api/segment", json={"text": "x", "dictionary": "no"}), 404)
    bare = make_client(dictionaries=[])
    assert "--dict" in _error(bare.post("/api/segment", json={"text": "研究"}), 404)
    _still_serving(client)


# -- the errors: 413, 404, 403, and the server keeps serving after each ----------------------

def test_oversize_request_is_413_with_a_message(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_request_bytes=1000)
    message = _error(client.post("/api/encode", json={"text": "x" * 2000, "tokenizers": ["bpe"]}), 413)
    assert "too large" in message and "--max-request-size" in message and "1000 bytes" in message
    _still_serving(client)


def test_oversize_request_without_length_is_413(make_client: Callable[..., TestClient]) -> None:
    """A chunked body (no Content-Length) is cut off at the limit."""
    client = make_client(max_request_bytes=1000)

    def chunks():  # a generator body makes httpx send it chunked
        for _ in range(10):
            yield b"x" * 300

    r = client.post("/api/encode", content=chunks(), headers={"content-type": "application/json"})
    assert "too large" in _error(r, 413)
    _still_serving(client)


def test_oversize_upload_is_413(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_upload_bytes=5000)
    r = client.put("/api/upload/tokenizer?name=big.json", content=b"{" + b" " * 6000 + b"}")
    message = _error(r, 413)
    assert "upload too large" in message and "--max-upload-size" in message
    _still_serving(client)


def test_unknown_tokenizer_is_404_json(client: TestClient) -> None:
    message = _error(client.post("/api/encode", json={"text": "x", "tokenizers": ["bpe", "nope"]}), 404)
    assert "'nope'" in message
    _error(client.post("/api/decode", json={"tokenizer": "nope", "ids": [1]}), 404)
    _error(client.get("/api/tokenizers/nope/tokenizer.json"), 404)
    _still_serving(client)


def test_path_outside_allow_dir_is_403(make_client: Callable[..., TestClient], tiny_files: Path,
                                       tmp_path: Path) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (tmp_path / "secret.tiktoken").write_text("c2VjcmV0 0\n")
    client = make_client(allow_dirs=[str(allowed)])
    outside = (str(tmp_path / "secret.tiktoken"), "../secret.tiktoken", str(tiny_files / "tok-bpe.json"), "/etc/passwd")
    for path in outside:
        message = _error(client.post("/api/tokenizers/load", json={"path": path}), 403)
        assert "outside the allowed folders" in message
        _still_serving(client)
    # A link inside the allowed folder that leads out of it is refused too.
    (allowed / "link.tiktoken").symlink_to(tmp_path / "secret.tiktoken")
    _error(client.post("/api/tokenizers/load", json={"path": "link.tiktoken"}), 403)
    assert all(t["name"] != "link" for t in client.get("/api/tokenizers").json()["tokenizers"])
    _still_serving(client)


def test_no_allow_dir_means_every_path_is_403(client: TestClient, tiny_files: Path) -> None:
    _error(client.post("/api/tokenizers/load", json={"path": str(tiny_files / "tok-bpe.json")}), 403)
    _still_serving(client)


def test_allow_dir_files_are_listed_and_loaded_on_first_use(make_client: Callable[..., TestClient],
                                                            tiny_files: Path) -> None:
    client = make_client(tokenizers=[], allow_dirs=[str(tiny_files)])
    entries = {t["name"]: t for t in client.get("/api/tokenizers").json()["tokenizers"]}
    assert entries["tok-bpe"]["origin"] == "folder" and not entries["tok-bpe"]["loaded"]
    assert entries["wp"]["kind"] == "huggingface"  # wp/tokenizer.json takes its folder's name
    result = client.post("/api/encode", json={"text": TEXT, "tokenizers": ["tok-bpe"]}).json()["results"][0]
    assert result["ids"] == Tokenizer.load(tiny_files / "tok-bpe.json").encode(TEXT).ids
    assert {t["name"]: t for t in client.get("/api/tokenizers").json()["tokenizers"]}["tok-bpe"]["loaded"]
    # Loading by path a file the scan already offers gives the same entry, not a second one.
    loaded = client.post("/api/tokenizers/load", json={"path": "wp/tokenizer.json"}).json()
    assert loaded["name"] == "wp" and loaded["loaded"]
    missing = _error(client.post("/api/tokenizers/load", json={"path": "nothing.json"}), 404)
    assert "no such file" in missing


def test_a_file_that_is_no_tokenizer_is_400_and_stays_listed_with_its_error(
        make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    (tmp_path / "broken.tiktoken").write_text("not base64 at all\n")
    client = make_client(tokenizers=[], allow_dirs=[str(tmp_path)])
    message = _error(client.post("/api/encode", json={"text": "x", "tokenizers": ["broken"]}), 400)
    assert "broken.tiktoken" in message
    entry = client.get("/api/tokenizers").json()["tokenizers"][0]
    assert entry["name"] == "broken" and entry["error"] == message


def test_upload_a_tokenizer_then_use_it(client: TestClient, tiny_files: Path) -> None:
    data = (tiny_files / "wp" / "tokenizer.json").read_bytes()
    entry = client.put("/api/upload/tokenizer?name=../../tokenizer.json", content=data).json()
    assert entry["origin"] == "upload" and entry["name"] == "tokenizer" and entry["loaded"]
    result = client.post("/api/encode", json={"text": TEXT, "tokenizers": [entry["name"]]}).json()["results"][0]
    assert result["ids"] == Tokenizer.load(tiny_files / "wp" / "tokenizer.json").encode(TEXT).ids
    # The upload stays in the server's temporary folder, under a name that cannot climb out of it.
    api = client.app.state.api  # type: ignore[attr-defined]
    saved = list(api.upload_dir.rglob("tokenizer.json"))
    assert len(saved) == 1 and api.upload_dir in saved[0].parents


def test_upload_of_garbage_is_400(client: TestClient) -> None:
    _error(client.put("/api/upload/tokenizer?name=x.model", content=b"\x00\x01garbage"), 400)
    _error(client.put("/api/upload/tokenizer?name=x.json", content=b""), 400)
    _still_serving(client)


def test_uploads_are_removed_when_the_server_stops(make_client: Callable[..., TestClient], tiny_files: Path) -> None:
    client = make_client()
    client.put("/api/upload/corpus?name=c.txt", content=b"some text\n")
    folder = client.app.state.api.upload_dir  # type: ignore[attr-defined]
    assert any(folder.rglob("c.txt"))
    client.__exit__(None, None, None)
    assert not folder.exists()


@pytest.mark.parametrize("body,fragment", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"tokenizers": ["bpe"]}', "missing field 'text'"),
    (b'{"text": 5, "tokenizers": ["bpe"]}', "field 'text' must be str"),
    (b'{"text": "x", "tokenizers": []}', "1 to 8 tokenizers"),
])
def test_bad_requests_are_400_and_say_what_is_wrong(client: TestClient, body: bytes, fragment: str) -> None:
    r = client.post("/api/encode", content=body, headers={"content-type": "application/json"})
    assert fragment in _error(r, 400)
    _still_serving(client)


def test_unknown_route_and_method(client: TestClient) -> None:
    _error(client.get("/api/nothing"), 404)
    _error(client.get("/api/encode"), 405)
    _still_serving(client)


def test_the_page_and_its_files_are_served_without_any_remote_reference(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for path in ("/static/app.js", "/static/style.css"):
        r = client.get(path)
        assert r.status_code == 200
        assert "http://" not in r.text and "https://" not in r.text, path
    assert "http://" not in page.text and "https://" not in page.text


def _train(client: TestClient, body: Dict[str, Any]) -> Dict[str, Any]:
    r = client.post("/api/train", json=body)
    assert r.status_code == 202, r.text
    job = r.json()["job"]
    api = client.app.state.api  # type: ignore[attr-defined]
    api.jobs.wait(job["id"], timeout=120)
    return client.get(f"/api/train/{job['id']}").json()


@pytest.mark.parametrize("model,vocab", [("bpe", 300), ("wordpiece", 120), ("unigram", 320)])
def test_train_from_text_then_use_and_download(client: TestClient, tmp_path: Path, model: str, vocab: int) -> None:
    from tests.serve.conftest import CORPUS

    job = _train(client, {"model": model, "vocab_size": vocab, "text": "\n".join(CORPUS), "name": f"mine-{model}"})
    assert job["state"] == "done", job
    assert job["tokenizer"] == f"mine-{model}" and job["fraction"] == 1.0
    encoded = client.post("/api/encode", json={"text": TEXT, "tokenizers": [job["tokenizer"]]}).json()["results"][0]
    download = client.get(f"/api/tokenizers/{job['tokenizer']}/tokenizer.json")
    assert download.status_code == 200
    assert download.headers["content-disposition"] == 'attachment; filename="tokenizer.json"'
    saved = tmp_path / "tokenizer.json"
    saved.write_bytes(download.content)
    # The file is Hugging Face's format, and it encodes as the page did.
    assert Tokenizer.load(saved).encode(TEXT).ids == encoded["ids"]
    tokenizers = pytest.importorskip("tokenizers")
    assert tokenizers.Tokenizer.from_file(str(saved)).encode(TEXT).ids == encoded["ids"]


def test_train_from_an_uploaded_file(client: TestClient) -> None:
    from tests.serve.conftest import CORPUS

    upload = client.put("/api/upload/corpus?name=corpus.txt", content="\n".join(CORPUS).encode()).json()
    assert upload["name"] == "corpus.txt" and upload["bytes"] > 0
    job = _train(client, {"model": "bpe", "vocab_size": 290, "upload": upload["upload"]})
    assert job["state"] == "done", job
    assert job["done"] == job["total"] > 0  # merges done out of the merges asked for
    assert job["tokenizer"] in {t["name"] for t in client.get("/api/tokenizers").json()["tokenizers"]}


@pytest.mark.parametrize("body,status,fragment", [
    ({"model": "crf", "vocab_size": 300, "text": "x"}, 400, "model must be one of"),
    ({"model": "bpe", "vocab_size": 100, "text": "x"}, 400, "from 257 to 50000"),
    ({"model": "bpe", "vocab_size": 10**9, "text": "x"}, 400, "from 257 to 50000"),
    ({"model": "bpe", "vocab_size": "300", "text": "x"}, 400, "field 'vocab_size' must be int"),
    ({"model": "bpe", "vocab_size": 300, "text": "   "}, 400, "empty"),
    ({"model": "bpe", "vocab_size": 300}, 400, "one of them"),
    ({"model": "bpe", "vocab_size": 300, "upload": "99"}, 404, "no uploaded corpus"),
])
def test_train_bad_requests(client: TestClient, body: Dict[str, Any], status: int, fragment: str) -> None:
    assert fragment in _error(client.post("/api/train", json=body), status)
    _still_serving(client)


def test_a_failed_training_run_reports_its_error(client: TestClient) -> None:
    upload = client.put("/api/upload/corpus?name=bad.txt", content=b"fine line\nbad \xff byte\n").json()
    job = _train(client, {"model": "bpe", "vocab_size": 300, "upload": upload["upload"]})
    assert job["state"] == "error" and "invalid UTF-8" in job["error"] and "bad.txt" in job["error"]
    _error(client.get("/api/train/999"), 404)
    _still_serving(client)


# -- the plots view: ciyuan eval's figures and plots ----------------------------------------------

def test_eval_measures_the_text_box_and_serves_the_plots(client: TestClient) -> None:
    pytest.importorskip("matplotlib")
    info = client.get("/api/tokenizers").json()["eval"]
    assert info == {"unavailable": None, "corpora": ["text"]}
    r = client.post("/api/eval", json={"tokenizers": ["bpe", "wp"], "corpora": ["text"], "text": TEXT})
    assert r.status_code == 202, r.text
    job_id = r.json()["job"]["id"]
    client.app.state.api.evals.wait(job_id, timeout=120)  # type: ignore[attr-defined]
    run = client.get(f"/api/eval/{job_id}").json()
    assert run["state"] == "done", run
    rows = {m["tokenizer"]: m for m in run["report"]["metrics"]}
    assert set(rows) == {"bpe", "wp"}
    # The figures are ciyuan eval's (tests/evaluation holds them against plain Python); here the
    # page's run must have measured the text it was sent: its non-blank lines, without specials.
    lines = [line for line in TEXT.split("\n") if line.strip()]
    assert rows["bpe"]["bytes"] == sum(len(line.encode()) for line in lines)
    assert rows["bpe"]["tokens"] == sum(len(client.post("/api/encode", json={"text": line, "tokenizers": ["bpe"]})
                                            .json()["results"][0]["ids"]) for line in lines)
    assert [p["name"] for p in run["plots"]] == ["tokens_per_char_by_script.png", "token_lengths.png"]
    for plot in run["plots"]:
        png = client.get(plot["url"])
        assert png.status_code == 200 and png.headers["content-type"] == "image/png"
        assert png.content.startswith(b"\x89PNG")
    _error(client.get(f"/api/eval/{job_id}/plots/..%2F..%2Ftext.txt"), 404)
    _error(client.get("/api/eval/99"), 404)
    _still_serving(client)


@pytest.mark.parametrize("body,status,fragment", [
    ({"tokenizers": [], "corpora": ["text"], "text": "x"}, 400, "at least one tokenizer"),
    ({"tokenizers": ["nope"], "corpora": ["text"], "text": "x"}, 404, "'nope'"),
    ({"tokenizers": ["bpe"], "corpora": ["udhr"], "text": "x"}, 400, "no corpus named 'udhr'"),
    ({"tokenizers": ["bpe"], "corpora": ["text"], "text": "  "}, 400, "text box is empty"),
])
def test_eval_bad_requests(client: TestClient, body: Dict[str, Any], status: int, fragment: str) -> None:
    pytest.importorskip("matplotlib")
    assert fragment in _error(client.post("/api/eval", json=body), status)
    _still_serving(client)


def test_eval_on_a_named_corpus(make_client: Callable[..., TestClient], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    corpus = tmp_path / "small.txt"
    corpus.write_text("one line\n\nanother line\n", encoding="utf-8")
    client = make_client(corpora=[f"small={corpus}"])
    r = client.post("/api/eval", json={"tokenizers": ["bpe"], "corpora": ["small"]})
    job = client.app.state.api.evals.wait(r.json()["job"]["id"], timeout=120)  # type: ignore[attr-defined]
    assert job.state == "done", job.error
    assert [(m["corpus"], m["lines"]) for m in job.report["metrics"]] == [("small", 2)]
