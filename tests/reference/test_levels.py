"""The reference word level (ciyuan.reference.levels.word_level): whitespace chunks, Chinese
chunks cut by the given segmenter, punctuation glued to its word."""

from __future__ import annotations

from ciyuan.reference.levels import word_level


def test_word_level_rules():
    chars = list  # a "segmenter" that cuts every character
    assert word_level("I like books.", chars) == ["I", "like", "books."]  # no Han: whole chunks
    assert word_level("“好，走吧。”", chars) == ["“好，", "走", "吧。”"]
    assert word_level("《红楼梦》 。", chars) == ["《红", "楼", "梦》", "。"]
    assert word_level("豈𠀀", chars) == ["豈", "𠀀"]  # compatibility and extension-B ideographs are Han
    assert word_level("", chars) == []
