"""The founding documents' systems, under the documents' own names (``../shared/seeds``).

Each module is one document's face of ciyuan's core: the names, arguments and printed results
are the document's; the loops that matter run natively. docs/seeds.md maps every section and
worked example to its function and test, and lists where ciyuan deliberately differs from a
document's code (an evident defect, fixed as the document's text intends).

- ``bpe_tokenizer`` (document 000): ``BPETokenizer`` with ``fit`` / ``tokenize`` /
  ``encode`` / ``decode``, and ``wordpunct_tokenize``.
- ``sennrich`` (document 001, and document 004's BPE run): ``build_vocab``, ``get_stats``,
  ``merge_vocab``, ``learn_bpe`` (the native merge loop), ``bpe`` / ``run_bpe`` (the printed
  run), ``build_dict_from_vocab``, ``subword_tokenize``, ``tokenize``,
  ``tokenize_word_by_substrings``, ``detokenize``.
- ``merge_table`` (document 003's BPE with a merge table; BBPE of documents 003 and 004):
  ``MergeTableBPE``, ``BBPE``, ``MergeTable``, ``split_word``, ``format_split``.
"""

from ciyuan.textbook.bpe_tokenizer import BPETokenizer, wordpunct_tokenize
from ciyuan.textbook.merge_table import BBPE, MergeTable, MergeTableBPE, format_split, split_word, word_counts
from ciyuan.textbook.sennrich import (
    bpe,
    build_dict_from_vocab,
    build_vocab,
    detokenize,
    format_top_subwords,
    get_stats,
    learn_bpe,
    merge_vocab,
    run_bpe,
    sort_by_length,
    subword_tokenize,
    tokenize,
    tokenize_word_by_substrings,
)

__all__ = [
    "BBPE", "BPETokenizer", "MergeTable", "MergeTableBPE", "bpe", "build_dict_from_vocab", "build_vocab", "detokenize",
    "format_split", "format_top_subwords", "get_stats", "learn_bpe", "merge_vocab", "run_bpe", "sort_by_length",
    "split_word", "subword_tokenize", "tokenize", "tokenize_word_by_substrings", "word_counts", "wordpunct_tokenize",
]
