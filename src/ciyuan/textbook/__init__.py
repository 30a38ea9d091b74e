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
- ``zh_bpe`` (document 002): the Chinese BPE tool behind ``ciyuan zh-bpe``: ``zh_bpe_train``,
  ``zh_bpe_apply``, ``get_vocabulary_from_txt``, ``learn_zh_merges``, ``ZhBpeSegmenter``, ...
- ``levels`` (document 003): ``word_level``, ``char_level`` and their printed form
  (``format_split``, ``print_word_level``, ``print_char_level``); WordPiece's
  ``wordpiece_split`` and ``wordpiece_score``.
- ``merge_table`` (document 003's BPE with a merge table; BBPE of documents 003 and 004):
  ``MergeTableBPE``, ``BBPE``, ``MergeTable``, ``split_word``, ``format_word_split``.
- ``matching`` (document 004): ``forward_max_matching``, ``backward_max_matching``;
  WordPiece by PMI: ``train_wordpiece_pmi`` and ``wordpiece_encode`` (FMM over the vocabulary).
"""

from ciyuan.textbook.bpe_tokenizer import BPETokenizer, wordpunct_tokenize
from ciyuan.textbook.levels import (
    char_level,
    format_split,
    print_char_level,
    print_word_level,
    word_level,
    wordpiece_score,
    wordpiece_split,
)
from ciyuan.textbook.matching import (
    WordPieceVocabulary,
    backward_max_matching,
    forward_max_matching,
    train_wordpiece_pmi,
    wordpiece_encode,
)
from ciyuan.textbook.merge_table import BBPE, MergeTable, MergeTableBPE, format_word_split, split_word, word_counts
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
    # 000
    "BPETokenizer", "wordpunct_tokenize",
    # 001 (and 004's BPE run)
    "build_vocab", "get_stats", "merge_vocab", "learn_bpe", "bpe", "run_bpe", "build_dict_from_vocab",
    "format_top_subwords", "subword_tokenize", "tokenize", "tokenize_word_by_substrings", "sort_by_length",
    "detokenize",
    # 002
    "zh_bpe_train", "zh_bpe_apply", "get_vocabulary_from_txt", "zh_clauses", "learn_zh_merges", "ZhBpeTraining",
    "is_all_chinese", "zh_units", "read_zh_units", "ZhBpeSegmenter", "ZhBpeAnswer",
    # 003
    "word_level", "char_level", "format_split", "print_word_level", "print_char_level", "wordpiece_split",
    "wordpiece_score", "MergeTableBPE", "BBPE", "MergeTable", "split_word", "format_word_split", "word_counts",
    # 004
    "forward_max_matching", "backward_max_matching", "train_wordpiece_pmi", "wordpiece_encode", "WordPieceVocabulary",
]
