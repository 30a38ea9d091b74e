"""The founding documents' systems, under the documents' own names (``../shared/seeds``).

Each module is one document's face of ciyuan's core: the names, arguments and printed results
are the document's; the loops that matter run natively. docs/seeds.md maps every section and
worked example to its function and test, and lists where ciyuan deliberately differs from a
document's code (an evident defect, fixed as the document's text intends).

- ``bpe_tokenizer`` (document 000): ``BPETokenizer`` with ``fit`` / ``tokenize`` /
  ``encode`` / ``decode``, and ``wordpunct_tokenize``.
- ``zh_bpe`` (document 002): the Chinese BPE tool behind ``ciyuan zh-bpe``: ``zh_bpe_train``
  (clauses, merges, the vocabulary file) and ``zh_bpe_apply`` (units applied in order).
"""

from ciyuan.textbook.bpe_tokenizer import BPETokenizer, wordpunct_tokenize
from ciyuan.textbook.zh_bpe import (
    ZhBpeAnswer,
    ZhBpeSegmenter,
    ZhBpeTraining,
    get_vocabulary_from_txt,
    is_all_chinese,
    learn_zh_merges,
    read_zh_units,
    zh_bpe_apply,
    zh_bpe_train,
    zh_clauses,
    zh_units,
)

__all__ = [
    "BPETokenizer",
    "wordpunct_tokenize",
    "ZhBpeAnswer",
    "ZhBpeSegmenter",
    "ZhBpeTraining",
    "get_vocabulary_from_txt",
    "is_all_chinese",
    "learn_zh_merges",
    "read_zh_units",
    "zh_bpe_apply",
    "zh_bpe_train",
    "zh_clauses",
    "zh_units",
]
