"""The ChineseWords pre-tokenizer, alone and inside a Tokenizer (encode, train, save/load)."""

from __future__ import annotations

import pytest

from ciyuan import Tokenizer, pre_tokenizers
from ciyuan.pre_tokenizers import ChineseWords
from ciyuan.segment import Dictionary
from tests.conftest import read_prefix, shared


@pytest.fixture()
def dict_path(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("研究\n研究生\n生命\n起源\n词元\n", encoding="utf-8")
    return path


def test_split_and_serialization(dict_path):
    pre = ChineseWords(str(dict_path), method="bmm")
    assert pre.native_pattern is None
    assert pre.split("研究生命起源 ok") == [(0, 2), (2, 4), (4, 6), (6, 7), (7, 9)]
    assert pre.pre_tokenize_str("词元x") == [("词元", (0, 2)), ("x", (2, 3))]
    data = pre.to_dict()
    assert data == {"type": "ChineseWords", "method": "bmm", "baseline": False, "max_word_len": None,
                    "dictionary": {"paths": [str(dict_path)]}}
    again = pre_tokenizers.from_dict(data)
    assert again == pre and again is not pre and "bmm" in repr(again)
    # An in-memory dictionary is stored with its words.
    mem = ChineseWords(Dictionary([("词元", 3)]), method="dag")
    assert mem.to_dict()["dictionary"] == {"words": [["词元", 3]]}
    assert pre_tokenizers.from_dict(mem.to_dict()) == mem
    assert ChineseWords(Dictionary(["a"])) != ChineseWords(Dictionary(["b"]))


def test_train_and_encode_word_segmented_chinese(tmp_path, dict_path):
    trainers = pytest.importorskip("ciyuan.trainers")
    text = read_prefix(shared("zh-bpe-sample", "smalltrain.txt"), 60_000)
    pre = ChineseWords(Dictionary.load(shared("dicts", "jieba_dict_small.txt")), method="dag")
    tok = Tokenizer.train(text.split("\n"), trainers.BpeTrainer(vocab_size=800, byte_level=True), pre_tokenizer=pre)
    sample = "研究生命起源，iPhone 很贵。"
    enc = tok.encode(sample)
    assert tok.decode(enc.ids) == sample
    # No token crosses a word boundary.
    bounds = {s for s, _ in pre.split(sample)} | {len(sample)}
    for s, e in enc.offsets:
        inner = {b for b in bounds if s < b < e}
        assert not inner, (sample[s:e], inner)
    path = tmp_path / "tok.json"
    tok.save(path)
    back = Tokenizer.from_file(path)
    assert back.encode(sample).ids == enc.ids
