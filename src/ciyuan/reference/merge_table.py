"""BPE with a merge table (document 003) and byte-level BPE, in plain Python (the oracle for
``ciyuan.textbook.merge_table``).

Training is ``reference.bpe_train.train_bpe`` with the end-of-word symbol ``</w>`` and ties
going to the pair seen first. Applying goes through the merge table rule by rule, each rule
merging its pair everywhere in the split, left to right: one pass over the split per rule.

Example:
    >>> tokens, merges = train_merge_table(["hi hi highest"], max_iterations=1)
    >>> merges
    [('h', 'i')]
    >>> segment("highest", merges)
    ['hi', 'g', 'h', 'e', 's', 't', '</w>']
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from ciyuan.reference.bpe_train import Symbol, train_bpe

__all__ = ["apply_merge_table", "segment", "train_merge_table"]

END_OF_WORD = "</w>"

S = TypeVar("S", str, bytes)


def apply_merge_table(split: Sequence[S], merges: Sequence[Tuple[S, S]]) -> List[S]:
    """``split`` after every rule of ``merges``, in order."""
    out = list(split)
    for left, right in merges:
        i = 0
        while i < len(out) - 1:
            if out[i] == left and out[i + 1] == right:
                out[i : i + 2] = [left + right]
            i += 1
    return out


def train_merge_table(documents: Iterable[str], vocab_size: Optional[int] = None,
                      max_iterations: Optional[int] = None, byte_level: bool = False
                      ) -> Tuple[List[Symbol], List[Tuple[Symbol, Symbol]]]:
    """(vocabulary in id order, merge table) learned from the whitespace-separated words."""
    counts: Dict[str, int] = {}
    for doc in documents:
        for word in doc.split():
            counts[word] = counts.get(word, 0) + 1
    return train_bpe(counts, vocab_size=vocab_size, max_merges=max_iterations, byte_level=byte_level,
                     end_of_word_symbol=END_OF_WORD, tie_break="first")


def segment(text: str, merges: Sequence[Tuple[Symbol, Symbol]], byte_level: bool = False) -> List[Symbol]:
    """The symbols of ``text``: each word's characters (or UTF-8 bytes) and ``</w>``, merged."""
    out: List[Symbol] = []
    done: Dict[str, List[Symbol]] = {}  # a word's symbols depend on the word alone: merged once
    for word in text.split():
        if word not in done:
            if byte_level:
                split: List[Symbol] = [bytes([b]) for b in word.encode("utf-8")]
                split.append(END_OF_WORD.encode("utf-8"))
            else:
                split = [*word, END_OF_WORD]
            done[word] = apply_merge_table(split, merges)  # type: ignore[type-var]  # all str or all bytes
        out += done[word]
    return out
