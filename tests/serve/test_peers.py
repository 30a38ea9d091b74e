"""What the page shows, held against the peer libraries on the real data: the ids (and for
Hugging Face the tokens and offsets) that ``/api/encode`` answers equal tiktoken's,
``tokenizers``' and sentencepiece's for the same files and text, and ``/api/segment``'s DAG words
equal ``jieba.cut(HMM=False)``'s with the same dictionary. Slow: real corpora."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from starlette.testclient import TestClient

from ciyuan.serve import ServeConfig, api, create_app
from tests.conftest import read_prefix, shared
from tests.serve.conftest import BASE_URL

pytestmark = pytest.mark.slow

BLOCK_LINES = 40  # lines per request: each request is a text of many lines, newlines included


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    tok = shared("tokenizers")
    config = ServeConfig(tokenizers=[f"cl100k={tok / 'tiktoken' / 'cl100k_base.tiktoken'}",
                                     f"o200k={tok / 'tiktoken' / 'o200k_base.tiktoken'}",
                                     f"gpt2={tok / 'gpt2' / 'tokenizer.json'}",
                                     f"bert={tok / 'bert' / 'bert-base-uncased-vocab.txt'}",
                                     f"llama2={tok / 'sentencepiece' / 'llama2.model'}"],
                         dictionaries=[str(shared("dicts", "jieba_dict_small.txt"))], max_request_bytes=8 << 20)
    # Every token drawn, however many (the page draws the first MAX_DRAWN): all are compared.
    with pytest.MonkeyPatch.context() as patch, TestClient(create_app(config), base_url=BASE_URL) as c:
        patch.setattr(api, "MAX_DRAWN", 10**9)
        yield c


def _blocks() -> List[str]:
    """The 485 languages of the UDHR sample, Chinese prose and emoji, cut into blocks of lines."""
    lines = shared("corpora", "multi", "udhr_sample.txt").read_text(encoding="utf-8").split("\n")
    lines += read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 60_000).split("\n")
    lines += read_prefix(shared("corpora", "multi", "emoji.txt"), 20_000).split("\n")
    return ["\n".join(lines[i:i + BLOCK_LINES]) for i in range(0, len(lines), BLOCK_LINES)]


def _encode(client: TestClient, names: List[str], text: str) -> Dict[str, Dict[str, Any]]:
    r = client.post("/api/encode", json={"text": text, "tokenizers": names})
    assert r.status_code == 200, r.text
    return {res["name"]: res for res in r.json()["results"]}


def test_ids_equal_tiktoken(client: TestClient, tiktoken_encodings: Dict[str, Any]) -> None:
    blocks = _blocks()
    for text in blocks:
        got = _encode(client, ["cl100k", "o200k"], text)
        for name, peer in (("cl100k", "cl100k_base"), ("o200k", "o200k_base")):
            expected = tiktoken_encodings[peer].encode(text, disallowed_special=())
            assert got[name]["ids"] == expected, (name, text[:80])
            assert got[name]["counts"]["tokens"] == len(expected)


def test_ids_tokens_offsets_equal_hugging_face(client: TestClient) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    peers = {"gpt2": tokenizers.Tokenizer.from_file(str(shared("tokenizers", "gpt2", "tokenizer.json"))),
             "bert": tokenizers.BertWordPieceTokenizer(str(shared("tokenizers", "bert", "bert-base-uncased-vocab.txt")),
                                                       lowercase=True)}
    for text in _blocks():
        got = _encode(client, list(peers), text)
        for name, peer in peers.items():
            theirs = peer.encode(text)
            mine = got[name]
            assert mine["ids"] == theirs.ids, (name, text[:80])
            assert [t["token"] for t in mine["tokens"]] == theirs.tokens, (name, text[:80])
            assert [(t["start"], t["end"]) for t in mine["tokens"]] == theirs.offsets, (name, text[:80])


def test_ids_equal_sentencepiece(client: TestClient) -> None:
    spm = pytest.importorskip("sentencepiece")
    peer = spm.SentencePieceProcessor(model_file=str(shared("tokenizers", "sentencepiece", "llama2.model")))
    for text in _blocks():
        # sentencepiece encodes one sentence; the page sends the block as one text, so the
        # sentences are the lines, joined the way the page's text joins them.
        assert _encode(client, ["llama2"], text)["llama2"]["ids"] == peer.encode(text), text[:80]


def test_dag_words_equal_jieba(client: TestClient, tmp_path: Path) -> None:
    with warnings.catch_warnings():  # jieba imports pkg_resources, which warns on new setuptools
        warnings.simplefilter("ignore")
        jieba = pytest.importorskip("jieba")
        jieba.setLogLevel(60)
        peer = jieba.Tokenizer(dictionary=str(shared("dicts", "jieba_dict_small.txt")))
        peer.tmp_dir = str(tmp_path)
        peer.initialize()
    lines = read_prefix(shared("sighan2005", "pku_test.utf8"), 200_000).split("\n")
    lines += read_prefix(shared("corpora", "zh", "jinyong_16novels.txt"), 100_000).split("\n")
    differ = []
    for line in lines:
        data = client.post("/api/segment", json={"text": line, "methods": ["dag"]}).json()
        words = [w["text"] for w in data["methods"][0]["words"]]
        if words != list(peer.cut(line, HMM=False)):
            differ.append(line)
    assert not differ[:3], f"{len(differ)} of {len(lines)} lines differ from jieba"
