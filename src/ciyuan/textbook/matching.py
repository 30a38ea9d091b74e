"""Document 004: dictionary matching - forward and backward maximum matching (FMM, BMM) - and
WordPiece chosen by pointwise mutual information, encoded by FMM over its vocabulary.

Maximum matching. At each position take the longest dictionary word that starts there (FMM,
left to right) or ends there (BMM, right to left), trying lengths ``max_len`` down to 1; when
no length matches, the one character is a word. Whitespace is an ordinary character: it is a
word of its own unless the dictionary holds it. Runs natively on ciyuan's segmenter
(:mod:`ciyuan.segment`) in its SIGHAN ``baseline`` mode, where every unmatched character is a
word (its default mode would join ASCII letters and digits into runs) and ``max_word_len`` is
``max_len`` (by default it would be the longest word's length). That mode drops whitespace and
never matches across it, so each whitespace character is put back as a word of its own - what
the document's loop gives, since no word a native dictionary holds contains whitespace. A
dictionary the native segmenter cannot hold (a word with whitespace or a lone surrogate), or a
sentence with a lone surrogate, runs the same rule in plain Python
(:mod:`ciyuan.reference.segment`).

WordPiece by PMI. "The same flow as BPE": words start as characters (``"word"`` ->
``w ##o ##r ##d``, as document 003 splits them) and each step merges the adjacent pair (a, b)
with the largest ``PMI(a, b) = P(a, b) / (P(a) P(b))``. With P(a, b) = count(ab) / (number of
adjacent pairs) and P(a) = count(a) / (number of symbols), PMI is
``count(ab) / (count(a) count(b))`` times a factor that is the same for every pair of a step,
so the pair with the largest PMI is the pair with the largest WordPiece score: exactly what
ciyuan's native trainer (:class:`ciyuan.trainers.WordPieceTrainer`, criterion
``"likelihood"``) merges. Ties (equal PMI, compared exactly) go to the pair seen more often,
then to the smaller (left id, right id) - the document names none. Encoding cuts each word by
FMM over the vocabulary: the longest token at each position, ``##``-prefixed after the first
piece, with no length cap (the native WordPiece model's greedy longest-match-first).

Example:
    >>> words = {"大模型", "学习", "模型", "我要", "要"}
    >>> "/".join(forward_max_matching("我要学习大模型", words))
    '我要/学习/大模型'
    >>> vocab, merges = train_wordpiece_pmi({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5},
    ...                                     num_merges=3)
    >>> merges
    [('##g', '##s'), ('p', '##u'), ('h', '##u')]
    >>> wordpiece_encode("hugs bug", vocab)
    ['hu', '##gs', 'b', '##u', '##g']
"""

from __future__ import annotations

import re
from typing import Collection, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple, Union

from ciyuan._text import is_utf8_encodable
from ciyuan.errors import InvalidInputError, check_count
from ciyuan.models import WordPiece
from ciyuan.pre_tokenizers import WhitespaceSplit
from ciyuan.reference import segment as reference_segment
from ciyuan.reference.wordpiece import fmm_word
from ciyuan.segment import Dictionary, Segmenter
from ciyuan.textbook.merge_table import word_counts
from ciyuan.tokenizer import Tokenizer
from ciyuan.trainers import WordPieceTrainer

__all__ = [
    "forward_max_matching",
    "backward_max_matching",
    "train_wordpiece_pmi",
    "wordpiece_encode",
    "WordPieceVocabulary",
]

WordSource = Union[Dictionary, Iterable[str]]
Corpus = Union[str, Iterable[str], Mapping[str, int]]

_SPACE = re.compile(r"\s")  # Python's str.isspace() characters, as the native segmenter's
_SPACE_RUNS = re.compile(r"(\s+)")


# -- maximum matching -------------------------------------------------------------------------------


def _words(dictionary: WordSource) -> Union[Dictionary, Set[str]]:
    """The dictionary as a native :class:`Dictionary` when it can be one, else as a set of words."""
    if isinstance(dictionary, Dictionary):
        return dictionary
    if isinstance(dictionary, (str, bytes)):
        raise InvalidInputError("the dictionary must be a collection of words (a set, list or Dictionary), not a "
                                "single string (`in` on a string would match any substring)")
    try:
        words = set(dictionary)
    except TypeError:
        raise InvalidInputError(f"the dictionary must be a collection of words, not {type(dictionary).__name__}") \
            from None
    for w in words:
        if not isinstance(w, str):
            raise InvalidInputError(f"dictionary words must be str, got {w!r}")
    words.discard("")  # never matched: the document tries lengths 1..max_len
    if any(_SPACE.search(w) for w in words) or not is_utf8_encodable("".join(words)):
        return words  # the native segmenter cannot hold these: plain Python
    return Dictionary(words)


def _max_matching(sentence: str, dictionary: WordSource, max_len: int, method: str) -> List[str]:
    if not isinstance(sentence, str):
        raise InvalidInputError(f"the sentence must be a str, not {type(sentence).__name__}")
    check_count(max_len, "max_len", least=1)
    words = _words(dictionary)
    if not isinstance(words, Dictionary) or not is_utf8_encodable(sentence):
        plain = reference_segment.fmm if method == "fmm" else reference_segment.bmm
        return plain(sentence, words if not isinstance(words, Dictionary) else set(words), max_len)
    seg = Segmenter(words, method, baseline=True, max_word_len=max_len)
    if not _SPACE.search(sentence):
        return seg.lcut(sentence)
    # The document's whitespace is a character like any other, which no word contains: each is a
    # word of its own, and the runs between them are matched apart (baseline mode would delete it
    # and match across).
    out: List[str] = []
    for run in _SPACE_RUNS.split(sentence):
        if run and _SPACE.match(run):
            out.extend(run)
        elif run:
            out.extend(seg.lcut(run))
    return out


def forward_max_matching(sentence: str, dictionary: WordSource, max_len: int = 6) -> List[str]:
    """Forward maximum matching: from the left, the longest dictionary word (at most ``max_len``
    characters) at each position, or one character when none matches.

    Args:
        sentence: the text to cut.
        dictionary: the words: any collection of strings (a set, list, dict keys...) or a
            :class:`ciyuan.segment.Dictionary` (build one once to cut many sentences with a large
            word list).
        max_len: the longest word to try, in characters.

    Example:
        >>> forward_max_matching("研究生命起源", {"研究", "研究生", "生命", "起源"})
        ['研究生', '命', '起源']
    """
    return _max_matching(sentence, dictionary, max_len, "fmm")


def backward_max_matching(sentence: str, dictionary: WordSource, max_len: int = 6) -> List[str]:
    """Backward maximum matching: from the right, the longest dictionary word (at most ``max_len``
    characters) ending at each position, or one character when none matches.

    Arguments as :func:`forward_max_matching`.

    Example:
        >>> backward_max_matching("研究生命起源", {"研究", "研究生", "生命", "起源"})
        ['研究', '生命', '起源']
    """
    return _max_matching(sentence, dictionary, max_len, "bmm")


# -- WordPiece by PMI -------------------------------------------------------------------------------


class WordPieceVocabulary(NamedTuple):
    """What :func:`train_wordpiece_pmi` learns."""

    #: The tokens in id order: the special tokens, every character, every ``##`` character, then
    #: the merged tokens in the order they were made.
    vocab: List[str]
    #: The merged pairs (left, right), in order.
    merges: List[Tuple[str, str]]


def _count_words(corpus: Corpus) -> Dict[str, int]:
    """``{word: count}`` of a corpus: a mapping as given, texts split on whitespace (``str.split``,
    the whitespace wordpiece_encode splits on)."""
    return dict(corpus) if isinstance(corpus, Mapping) else word_counts(corpus)


def train_wordpiece_pmi(
    corpus: Corpus,
    vocab_size: Optional[int] = None,
    num_merges: Optional[int] = None,
    *,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 0,
    prefix: str = "##",
) -> WordPieceVocabulary:
    """Learn a WordPiece vocabulary, merging the pair with the largest PMI at each step.

    Args:
        corpus: a text, an iterable of texts (each split on whitespace into words; a list of
            words is one word per text), or ``{word: count}``.
        vocab_size: stop when the vocabulary (special tokens included) has this many tokens.
        num_merges: stop after this many merges. With neither limit, merge until every word is
            one token.
        special_tokens: tokens placed first in the vocabulary.
        min_frequency: never merge a pair seen fewer times.
        prefix: the continuation prefix of pieces after a word's first.

    Returns:
        ``(vocab, merges)``: see :class:`WordPieceVocabulary`.

    Example:
        >>> train_wordpiece_pmi(["low lower", "newest widest"], num_merges=2).merges
        [('w', '##i'), ('wi', '##d')]
    """
    counts = _count_words(corpus)
    trainer = WordPieceTrainer(
        0 if vocab_size is None else check_count(vocab_size, "vocab_size", least=1),
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        continuing_subword_prefix=prefix,
        criterion="likelihood",
        max_merges=num_merges,
        unk_token=None,
    )
    vocab = trainer.train_vocab(counts)
    return WordPieceVocabulary(vocab, list(trainer.merges))


# Whitespace to str.split() but not to the native whitespace pre-tokenizer (\S+, Unicode White_Space).
_PYTHON_ONLY_SPACE = re.compile("[\x1c-\x1f]")


def _no_match_token(vocab: Collection[str]) -> str:
    """A token that is not in ``vocab`` and matches no word (it holds a space): it stands for "no
    match" in the native model's output."""
    token = " no match "
    while token in vocab:
        token += " "
    return token


def wordpiece_encode(text: str, vocab: Iterable[str], *, prefix: str = "##",
                     unk_token: Optional[str] = None) -> List[str]:
    """Cut ``text`` into WordPiece tokens: words by whitespace, each word by forward maximum
    matching over ``vocab``.

    At each position of a word the longest vocabulary token that matches is taken, written with
    ``prefix`` unless it starts the word. A position no token matches gives its one character
    (``prefix``-ed after the first position), as FMM gives an unmatched character; with
    ``unk_token`` the whole word becomes ``unk_token`` instead (BERT's rule).

    Example:
        >>> wordpiece_encode("unaffable", ["un", "##aff", "##able", "##a"])
        ['un', '##aff', '##able']
        >>> wordpiece_encode("unx", ["un"]), wordpiece_encode("unx", ["un"], unk_token="[UNK]")
        (['un', '##x'], ['[UNK]'])
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"the text must be a str, not {type(text).__name__}")
    if isinstance(vocab, (str, bytes)):
        raise InvalidInputError("the vocabulary must be a collection of tokens, not a single string")
    tokens = [t for t in dict.fromkeys(vocab) if t != ""]  # an empty token matches nothing
    if not all(isinstance(t, str) for t in tokens):
        raise InvalidInputError("vocabulary tokens must be str")
    token_set = set(tokens)
    words = text.split()
    if not words:
        return []
    if not tokens or not is_utf8_encodable(text) or not is_utf8_encodable("".join(tokens)):
        # Nothing the native model can hold: the same rule in plain Python.
        return [t for w in words for t in _fmm_or_unk(w, token_set, prefix, unk_token)]
    miss = _no_match_token(token_set)
    model = WordPiece(tokens + [miss], unk_token=miss, continuing_subword_prefix=prefix,
                      max_input_chars_per_word=1 << 62)
    miss_id = len(tokens)
    if not _PYTHON_ONLY_SPACE.search(text):
        # The whole text in one native call, split where str.split() splits.
        ids = Tokenizer(model, pre_tokenizer=WhitespaceSplit()).encode_batch_ids([text], disallowed_special=())[0]
        if miss_id not in ids:
            return [tokens[i] for i in ids]
    # Word by word, to find the words with a position no token matches.
    tokenizer = Tokenizer(model, pre_tokenizer=None)
    out: List[str] = []
    for word, ids in zip(words, tokenizer.encode_batch_ids(words, disallowed_special=())):
        if ids == [miss_id]:  # some position matches no token
            out.extend([unk_token] if unk_token is not None else fmm_word(word, token_set, prefix=prefix))
        else:
            out.extend(tokens[i] for i in ids)
    return out


def _fmm_or_unk(word: str, vocab: Collection[str], prefix: str, unk_token: Optional[str]) -> List[str]:
    pieces = fmm_word(word, vocab, prefix=prefix)
    if unk_token is not None and any(p not in vocab for p in pieces):
        return [unk_token]
    return pieces
