"""WordPiece in plain Python: the encoder (BERT's greedy longest-match-first) and the
likelihood trainer (Schuster & Nakajima 2012; the WordPiece of BERT).

Encoding. A word is cut from the left: take the longest vocabulary token that starts the rest
of the word (written with the continuation prefix, ``"##"``, unless it starts the word), and
repeat. If some position matches nothing, the whole word becomes the unknown token, as it
does when the word is longer than ``max_input_chars_per_word`` characters. ``fmm_word`` is the
same cut as forward maximum matching (document 004): an unmatched position gives its one
character instead of making the whole word unknown.

Training. Every word starts as its characters, the first plain, the others prefixed
(``"hug"`` -> ``h ##u ##g``). Then repeat: merge the adjacent pair (a, b) with the highest

    score(a, b) = count(ab) / (count(a) * count(b))

where the counts are taken in the current segmentation and weighted by word frequency: the
pair that raises the corpus likelihood most under a unigram model of the symbols. Joining
drops the right part's prefix: ``a + ##b -> ab``, ``##a + ##b -> ##ab``. Unlike frequency BPE,
rare symbols that always occur together merge first.

Ties (equal scores, compared exactly as fractions) go to the higher count(ab), then to the
smaller (left id, right id). Ids: the special tokens, then every alphabet character in code
point order, then its prefixed form (``"##c"``) in the same order - both forms of every
character, as BERT's vocab.txt has them, so any word made of known characters can be encoded -
then merged tokens in the order they are created (a merge whose result is already a token adds
none).

Cost: pair and symbol counts are updated only in the words a merge touches, but each step
takes the best pair by scanning all pairs - O(merges x pairs). Fine for an oracle; the native
trainer (``ciyuan.trainers.WordPieceTrainer``) finds the same pairs with a priority queue.

Example:
    >>> from ciyuan.reference.wordpiece import encode_word, train_wordpiece
    >>> tokens, merges = train_wordpiece({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5},
    ...                                  max_merges=3)
    >>> merges
    [('##g', '##s'), ('p', '##u'), ('h', '##u')]
    >>> encode_word("hugs", tokens)
    ['hu', '##gs']
    >>> encode_word("hux", tokens)
    ['[UNK]']
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Collection, Dict, List, Mapping, Optional, Sequence, Set, Tuple

__all__ = ["encode_word", "fmm_word", "train_wordpiece"]


def encode_word(word: str, vocab: Collection[str], *, unk_token: str = "[UNK]", prefix: str = "##",
                max_input_chars_per_word: int = 100) -> List[str]:
    """Greedy longest-match-first WordPiece tokens of one word (BERT's rule)."""
    if len(word) > max_input_chars_per_word:
        return [unk_token]
    tokens = []
    start = 0
    while start < len(word):
        # The longest piece word[start:end] in the vocabulary (prefixed unless at the start).
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                tokens.append(piece)
                start = end
                break
        else:
            return [unk_token]  # nothing matches here: the whole word is unknown
    return tokens


def fmm_word(word: str, vocab: Collection[str], *, prefix: str = "##") -> List[str]:
    """Forward maximum matching of one word over a WordPiece vocabulary (document 004's
    encoding): the longest token at each position (``prefix`` + piece after the first
    position); a position no token matches gives its one character, prefixed the same way."""
    pieces = []
    start = 0
    while start < len(word):
        mark = prefix if start else ""
        for end in range(len(word), start, -1):
            if mark + word[start:end] in vocab:
                break
        else:
            end = start + 1  # nothing matches: one character
        pieces.append(mark + word[start:end])
        start = end
    return pieces


def train_wordpiece(
    word_counts: Mapping[str, int],
    *,
    vocab_size: Optional[int] = None,
    max_merges: Optional[int] = None,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    limit_alphabet: Optional[int] = None,
    initial_alphabet: Sequence[str] = (),
    prefix: str = "##",
    max_token_length: Optional[int] = None,
) -> Tuple[List[str], List[Tuple[str, str]]]:
    """Learn a WordPiece vocabulary from ``{word: count}`` with the likelihood score.

    Returns the tokens in id order and the merges (left, right) in order. Pairs occurring fewer
    than ``min_frequency`` times are never merged; ``max_token_length`` bounds a token's
    length in characters (prefix not counted). Training stops at ``vocab_size`` tokens, after
    ``max_merges`` merges, or when no pair is left.
    """
    # 1. The alphabet: every character (weighted count); limit_alphabet keeps the most frequent
    #    (equally frequent: the smaller code point), initial_alphabet characters always.
    freq: Counter = Counter()
    for text, n in word_counts.items():
        for c in text:
            freq[c] += n
    forced = {s[0] for s in initial_alphabet if s}
    chars = set(freq) | forced
    if limit_alphabet is not None and len(chars) > limit_alphabet:
        ranked = sorted(chars, key=lambda c: (0, 0, ord(c)) if c in forced else (1, -freq[c], ord(c)))
        chars = set(ranked[:limit_alphabet])
    alphabet = sorted(chars)

    tokens: List[str] = []
    ids: Dict[str, int] = {}

    def add(token: str) -> str:
        if token not in ids:
            ids[token] = len(tokens)
            tokens.append(token)
        return token

    for t in special_tokens:
        add(t)
    for c in alphabet:
        add(c)
    for c in alphabet:
        add(prefix + c)
    length = dict.fromkeys(tokens, 1)  # characters in each symbol (prefix not counted)

    # 2. Words as symbol lists: the first character plain, the others prefixed (a character
    #    outside the alphabet is dropped, but still counts as a position).
    words: List[List[str]] = []
    counts: List[int] = []
    for text, n in word_counts.items():
        symbols = [c if i == 0 else prefix + c for i, c in enumerate(text) if c in chars]
        if symbols and n > 0:
            words.append(symbols)
            counts.append(n)

    # 3. Symbol counts, pair counts, and which words hold each pair.
    sym_count: Counter = Counter()
    pair_count: Counter = Counter()
    where: Dict[Tuple[str, str], Set[int]] = defaultdict(set)

    def tally(w: int, sign: int) -> None:
        word, n = words[w], counts[w]
        for s in word:
            sym_count[s] += sign * n
        for pair in zip(word, word[1:]):
            pair_count[pair] += sign * n
            if sign > 0:
                where[pair].add(w)

    for w in range(len(words)):
        tally(w, +1)

    def better(p: Tuple[str, str], q: Tuple[str, str]) -> bool:
        """Is pair p preferred to pair q? Scores compared exactly (cross-multiplied)."""
        lhs = pair_count[p] * sym_count[q[0]] * sym_count[q[1]]
        rhs = pair_count[q] * sym_count[p[0]] * sym_count[p[1]]
        if lhs != rhs:
            return lhs > rhs
        if pair_count[p] != pair_count[q]:
            return pair_count[p] > pair_count[q]
        return (ids[p[0]], ids[p[1]]) < (ids[q[0]], ids[q[1]])

    def join(a: str, b: str) -> str:
        return a + (b[len(prefix):] if prefix and b.startswith(prefix) else b)

    merges: List[Tuple[str, str]] = []
    while (vocab_size is None or len(tokens) < vocab_size) and (max_merges is None or len(merges) < max_merges):
        # 4. The best eligible pair.
        best = None
        for p, n in pair_count.items():
            if n <= 0 or n < min_frequency:
                continue
            if max_token_length is not None and length[p[0]] + length[p[1]] > max_token_length:
                continue
            if best is None or better(p, best):
                best = p
        if best is None:
            break
        a, b = best
        merged = add(join(a, b))
        # A token keeps the length it was first made with (with '#' in the text, "##" + "##a"
        # spells the token "##a" of the prefixed "a" again).
        length.setdefault(merged, length[a] + length[b])
        merges.append(best)
        # 5. Merge it, left to right, in the words that hold it; recount only those words.
        for w in sorted(where.pop(best)):
            word = words[w]
            if not any(x == a and y == b for x, y in zip(word, word[1:])):
                continue
            tally(w, -1)
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            words[w] = out
            tally(w, +1)
        for p in [p for p, n in pair_count.items() if n == 0]:
            del pair_count[p]
            where.pop(p, None)
    return tokens, merges
