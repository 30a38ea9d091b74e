"""The founding documents' systems, under the documents' own names (``../shared/seeds``).

Each module is one document's face of ciyuan's core: the names, arguments and printed results
are the document's; the loops that matter run natively. docs/seeds.md maps every section and
worked example to its function and test, and lists where ciyuan deliberately differs from a
document's code (an evident defect, fixed as the document's text intends).

- ``bpe_tokenizer`` (document 000): ``BPETokenizer`` with ``fit`` / ``tokenize`` /
  ``encode`` / ``decode``, and ``wordpunct_tokenize``.
- ``levels`` (document 003): ``word_level``, ``char_level`` and their printed form
  (``format_split``, ``print_word_level``, ``print_char_level``); WordPiece's
  ``wordpiece_split`` and ``wordpiece_score``.
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

__all__ = [
    "BPETokenizer", "wordpunct_tokenize",
    "word_level", "char_level", "format_split", "print_word_level", "print_char_level", "wordpiece_split",
    "wordpiece_score",
    "forward_max_matching", "backward_max_matching", "train_wordpiece_pmi", "wordpiece_encode", "WordPieceVocabulary",
]
