"""Compression against vocabulary size, from prefixes of one BPE tokenizer's merge list.

A BPE vocabulary is its base symbols plus one token per merge, in the order training made
them; the first k merges are the tokenizer that training would have given with a vocabulary of
``base + k`` tokens. So one trained tokenizer gives the whole curve: cut its merge list at 1k,
2k, 4k ... tokens and the full size, and measure bytes per token of each cut on the same text.
With tiktoken's ranks (``rank_by_token``) the ranks are the merge order: the cut keeps the
single bytes and the first k longer tokens.

Example:
    >>> from ciyuan import Tokenizer                                      # doctest: +SKIP
    >>> [p.vocab_size for p in compression_curve("gpt2", Tokenizer.load("gpt2/"), lines)]  # doctest: +SKIP
    [1024, 2048, 4096, 8192, 16384, 32768, 50257]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ciyuan.evaluation.metrics import ratio
from ciyuan.evaluation.report import CurvePoint
from ciyuan.models.bpe import BPE

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["compression_curve", "merge_prefix", "default_sizes"]


def default_sizes(base: int, full: int) -> List[int]:
    """Vocabulary sizes 1024, 2048, ... (powers of two above ``base``) below ``full``, then ``full``.

    Example:
        >>> default_sizes(256, 5000)
        [1024, 2048, 4096, 5000]
    """
    sizes, size = [], 1024
    while size < full:
        if size > base:
            sizes.append(size)
        size *= 2
    return sizes + [full]


def _rank_prefix(model: BPE, size: int) -> Tuple[Dict[bytes, int], int]:
    """tiktoken ranks: the single bytes and the first longer tokens, ``size`` in all."""
    vocab: Dict[bytes, int] = {}
    longer = size - sum(1 for i in range(model.id_limit) if len(model.id_bytes(i) or b"..") == 1)
    for i in range(model.id_limit):
        data = model.id_bytes(i)
        if data is None:
            continue
        if len(data) == 1:
            vocab[data] = i
        elif longer > 0:
            vocab[data] = i
            longer -= 1
    return vocab, sum(1 for t in vocab if len(t) > 1)


def _base_and_merges(model: BPE) -> Tuple[List[str], List[Tuple[str, str]], List[str]]:
    """The tokens no merge makes, the merges, and the token each merge makes (as id_to_token
    writes them)."""
    merges = model.merges
    prefix = model.continuing_subword_prefix
    made = [a + (b[len(prefix):] if prefix and b.startswith(prefix) else b) for a, b in merges]
    made_set = set(made)
    base = [t for t in model.get_vocab() if t not in made_set]
    return base, merges, made


def merge_prefix(tok: "Tokenizer", size: int) -> Tuple["Tokenizer", int, int]:
    """``tok`` with its BPE model cut to a vocabulary of ``size`` tokens (base symbols plus the
    first merges; see the module's doc): (tokenizer, its vocabulary size, merges kept). The
    normalizer, pre-tokenizer and decoder are ``tok``'s; special tokens are left out."""
    from ciyuan.tokenizer import Tokenizer

    model = tok.model
    if not isinstance(model, BPE):
        raise TypeError("merge_prefix needs a BPE tokenizer")
    options = dict(byte_level=model.byte_level, end_of_word_suffix=model.end_of_word_suffix,
                   end_of_word_symbol=model.end_of_word_symbol, fuse_unk=model.fuse_unk,
                   continuing_subword_prefix=model.continuing_subword_prefix, byte_fallback=model.byte_fallback,
                   drop_unknown=model.drop_unknown, ignore_merges=model.ignore_merges)
    if model.rank_by_token:
        vocab, kept = _rank_prefix(model, size)
        cut = BPE(dict(vocab), byte_level=model.byte_level, rank_by_token=True, ignore_merges=model.ignore_merges)
        return Tokenizer(cut, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer, decoder=tok.decoder), \
            len(vocab), kept
    base, merges, made = _base_and_merges(model)
    kept = max(0, min(len(merges), size - len(base)))
    words = base + [t for t in dict.fromkeys(made[:kept]) if t not in set(base)]
    vocab_s = {t: i for i, t in enumerate(words)}
    unk = model.unk_token if model.unk_token in vocab_s else None
    cut = BPE(vocab_s, merges[:kept], unk_token=unk, **options)  # type: ignore[arg-type]
    return Tokenizer(cut, normalizer=tok.normalizer, pre_tokenizer=tok.pre_tokenizer, decoder=tok.decoder), \
        len(vocab_s), kept


def _base_size(model: BPE) -> int:
    if model.rank_by_token:
        return sum(1 for i in range(model.id_limit) if len(model.id_bytes(i) or b"..") == 1)
    return len(_base_and_merges(model)[0])


def compression_curve(name: str, tok: "Tokenizer", lines: Union[Sequence[str], Callable[[], Iterable[Sequence[str]]]],
                      sizes: Optional[Sequence[int]] = None, threads: Optional[int] = None) -> List[CurvePoint]:
    """Bytes and characters per token of ``tok`` cut at each vocabulary size (default:
    :func:`default_sizes`), on ``lines`` (the texts, or a function giving them anew, block by
    block, for each cut); [] for a tokenizer whose model is not BPE."""
    model = tok.model
    if not isinstance(model, BPE):
        return []
    if callable(lines):
        blocks = lines
    else:
        texts = lines

        def blocks() -> Iterable[Sequence[str]]:
            return [texts]

    full = model.vocab_size
    wanted = sorted(set(sizes)) if sizes else default_sizes(_base_size(model), full)
    n_bytes = n_chars = 0
    for block in blocks():
        n_bytes += sum(len(line.encode("utf-8", "surrogatepass")) for line in block)
        n_chars += sum(len(line) for line in block)
    points = []
    for size in wanted:
        cut, vocab_size, kept = merge_prefix(tok, min(size, full))
        tokens = sum(sum(cut.count_tokens_batch(block, threads=threads, allowed_special=(), disallowed_special=()))
                     for block in blocks())
        points.append(CurvePoint(tokenizer=name, vocab_size=vocab_size, merges=kept, tokens=tokens,
                                 bytes_per_token=ratio(n_bytes, tokens), chars_per_token=ratio(n_chars, tokens)))
    return points
