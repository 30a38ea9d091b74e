"""Fixtures of the serve tests: small tokenizer and dictionary files made in the test's folder
(fast, no real data), and a Starlette TestClient on an app made from them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from ciyuan import Tokenizer  # noqa: E402
from ciyuan.serve import ServeConfig, create_app  # noqa: E402
from ciyuan.trainers import BpeTrainer, WordPieceTrainer  # noqa: E402

#: English and Chinese, with runs of spaces, a tab, a newline and an emoji.
TEXT = "The quick brown fox jumps over the lazy dog.\n研究生命起源，  他说的确实在理。\tok 🙂"

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A lazy dog sleeps; the quick fox runs over the hills.",
    "研究生命的起源是科学的问题。他说的确实在理。",
    "结婚的和尚未结婚的都来了。生命起源研究。",
] * 20

#: A jieba-style dictionary (word, frequency, tag) where FMM, BMM and DAG disagree.
DICT_LINES = ["研究 50 v", "研究生 20 n", "生命 60 n", "起源 30 n", "他 100 r", "说 80 v", "的 500 u",
              "的确 20 d", "确实 40 d", "实在 30 d", "在理 10 a", "在 200 p", "理 20 n", "结婚 40 v",
              "和尚 20 n", "尚未 20 d", "未 30 d", "和 300 c", "都 100 d", "来 80 v", "了 400 u"]

BASE_URL = "http://127.0.0.1:8765"


@pytest.fixture(scope="session")
def tiny_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a byte-level BPE (``bpe.json``, ciyuan JSON), a WordPiece as
    ``tokenizer.json`` (Hugging Face's format) and a dictionary ``words.txt``."""
    root = tmp_path_factory.mktemp("serve-files")
    Tokenizer.train(CORPUS, BpeTrainer(400, byte_level=True, show_progress=False)).save(root / "tok-bpe.json")
    (root / "wp").mkdir()
    Tokenizer.train(CORPUS, WordPieceTrainer(200, show_progress=False)).save(root / "wp" / "tokenizer.json")
    (root / "words.txt").write_text("\n".join(DICT_LINES) + "\n", encoding="utf-8")
    return root


@pytest.fixture()
def make_client(tiny_files: Path) -> Iterator[Callable[..., TestClient]]:
    """``make_client(**config)``: a TestClient (as 127.0.0.1, the only host the server answers
    to by default) on an app with the tiny files unless told otherwise; closed at the end."""
    clients = []

    def make(**options: Any) -> TestClient:
        options.setdefault("tokenizers", [f"bpe={tiny_files / 'tok-bpe.json'}",
                                          f"wp={tiny_files / 'wp' / 'tokenizer.json'}"])
        options.setdefault("dictionaries", [str(tiny_files / "words.txt")])
        client = TestClient(create_app(ServeConfig(**options)), base_url=BASE_URL, raise_server_exceptions=False)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture()
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()
