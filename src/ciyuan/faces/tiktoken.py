"""``tiktoken.Encoding``'s API over a ciyuan :class:`~ciyuan.Tokenizer` (``tok.as_tiktoken()``).

Code written for tiktoken switches by one line::

    enc = tiktoken.get_encoding("cl100k_base")                              # before
    enc = Tokenizer.from_tiktoken("cl100k_base.tiktoken").as_tiktoken()    # after

The ids are the tokenizer's (identical to tiktoken's for the same file, pattern and special
tokens), and so is the behaviour at the edges, as tiktoken's own tests pin it: special-token
text not allowed and not excluded from ``disallowed_special`` raises ``ValueError``;
``allowed_special="all"`` allows every special token and wins over ``disallowed_special``;
lone surrogates are encoded as U+FFFD and surrogate pairs as their character; an id that is
no token raises ``KeyError`` (``OverflowError`` outside 0..2^32-1); ``n_vocab`` is the highest
id plus one.

Example:
    >>> enc = Tokenizer.from_tiktoken("cl100k_base.tiktoken").as_tiktoken()    # doctest: +SKIP
    >>> enc.encode("hello <|endoftext|>", allowed_special="all")                # doctest: +SKIP
    [15339, 220, 100257]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Any, Collection, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ciyuan.errors import InvalidInputError, UnknownIdError
from ciyuan.pre_tokenizers import Split
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["TiktokenEncoding"]

Special = Union[str, AbstractSet[str], Collection[str]]  # "all" or token texts


def _sequence(tokens: Any) -> Any:
    """``tokens`` as the tokenizer reads them: a list, a tuple or an integer buffer (numpy,
    ``array.array``) as they are; any other iterable as a list (read once)."""
    if isinstance(tokens, (list, tuple)):
        return tokens
    try:
        memoryview(tokens)
    except TypeError:
        return list(tokens)
    return tokens


def _int_list(tokens: Any) -> List[Any]:
    """The items as Python objects (a buffer's as ints), for tiktoken's error checks."""
    return tokens.tolist() if hasattr(tokens, "tolist") else list(tokens)


class TiktokenEncoding:
    """An object with ``tiktoken.Encoding``'s methods and properties, encoding with ``tok``.

    Args:
        tok: the tokenizer. Its post-processor, truncation and padding are not applied
            (tiktoken has none): the ids are the model's and the special tokens'.
        name: the encoding's name; by default the tokenizer's pattern name (``"cl100k_base"``)
            or ``"ciyuan"``.
    """

    def __init__(self, tok: "Tokenizer", name: Optional[str] = None) -> None:
        self._tok = tok
        pre = tok.pre_tokenizer
        # The pattern's name: as given (Split("cl100k_base")), else the native scanner a written-out
        # regex was recognised as (a Split read back from JSON holds the regex itself).
        pattern: Optional[str] = None
        if isinstance(pre, Split):
            given = pre.pattern if isinstance(pre.pattern, str) else pre.pattern.get("Regex")
            pattern = given if given in NAMED_PATTERNS else pre.native_pattern or given
        if name is None:
            name = pattern if pattern in NAMED_PATTERNS else "ciyuan"
        self.name = name
        self._pat_str = str(getattr(pre, "source", "")) if isinstance(pre, Split) else ""
        self._special_tokens: Dict[str, int] = dict(tok.special_tokens)
        self._special_ids = frozenset(self._special_tokens.values())
        self._special_bytes = {i: t.encode("utf-8") for t, i in self._special_tokens.items()}
        limit = tok.model.id_limit
        self.max_token_value = max([limit - 1, *self._special_tokens.values()])
        # The plain path gives the model's ids with no template around them (tiktoken has none).
        self._plain = tok.post_processor is None and tok.truncation is None and tok.padding is None
        self._ranks: Optional[Dict[bytes, int]] = None

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    # -- encoding ----------------------------------------------------------------------------

    def _rules(self, allowed_special: Special, disallowed_special: Special) -> Tuple[Any, Any, frozenset]:
        """The tokenizer's (allowed, disallowed) for a call, and the disallowed texts that are no
        special token (tiktoken refuses those too when the text holds them)."""
        specials = frozenset(self._special_tokens)
        allowed = specials if allowed_special == "all" else frozenset(allowed_special) & specials
        if disallowed_special == "all":
            disallowed = specials - allowed
            others: frozenset = frozenset()
        else:
            asked = frozenset(disallowed_special)
            disallowed, others = (asked & specials) - allowed, asked - specials
        return allowed, disallowed, others

    @staticmethod
    def _refuse_others(text: str, others: frozenset) -> None:
        for other in others:
            if other and other in text:
                raise ValueError(f"the text contains {other!r}, which disallowed_special excludes; pass "
                                 "disallowed_special=() to allow it")

    def encode(self, text: str, *, allowed_special: Special = frozenset(),
               disallowed_special: Special = "all") -> List[int]:
        """The ids of ``text``; special-token text raises ``ValueError`` unless allowed (then it
        is the special token) or left out of ``disallowed_special`` (then it is ordinary text)."""
        allowed, disallowed, others = self._rules(allowed_special, disallowed_special)
        if others:
            self._refuse_others(text, others)
        if self._plain:
            return self._tok.encode_ids(text, allowed_special=allowed, disallowed_special=disallowed)
        return self._tok.encode(text, add_special_tokens=False, allowed_special=allowed,
                                disallowed_special=disallowed).ids

    def encode_ordinary(self, text: str) -> List[int]:
        """The ids of ``text`` with special-token text encoded as ordinary text."""
        return self.encode(text, disallowed_special=())

    def encode_batch(self, text: Sequence[str], *, num_threads: int = 8, allowed_special: Special = frozenset(),
                     disallowed_special: Special = "all") -> List[List[int]]:
        """:meth:`encode` for each text (on ``num_threads`` threads)."""
        allowed, disallowed, others = self._rules(allowed_special, disallowed_special)
        if others:
            for t in text:
                self._refuse_others(t, others)
        return self._tok.encode_batch_ids(list(text), add_special_tokens=False, threads=num_threads,
                                          allowed_special=allowed, disallowed_special=disallowed)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> List[List[int]]:
        """:meth:`encode_ordinary` for each text."""
        return self.encode_batch(text, num_threads=num_threads, disallowed_special=())

    def encode_to_numpy(self, text: str, *, allowed_special: Special = frozenset(),
                        disallowed_special: Special = "all") -> Any:
        """:meth:`encode` as a numpy array of ``uint32`` (numpy must be installed, as for
        tiktoken), made without a Python int per id.

        Example:
            >>> enc.encode_to_numpy("hello world")                        # doctest: +SKIP
            array([15339,  1917], dtype=uint32)
        """
        import numpy as np

        allowed, disallowed, others = self._rules(allowed_special, disallowed_special)
        if others:
            self._refuse_others(text, others)
        if self._plain:
            return np.asarray(self._tok.encode_ids(text, allowed_special=allowed, disallowed_special=disallowed,
                                                   as_array=True))
        return np.array(self.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special),
                        dtype=np.uint32)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of a text (or bytes) that is exactly one token; ``KeyError`` otherwise."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        token = self._mergeable_ranks.get(data)
        if token is not None:
            return token
        try:
            return self._special_tokens[data.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise KeyError(text_or_bytes) from None

    # -- decoding ----------------------------------------------------------------------------

    def _check_ids(self, tokens: Sequence[int]) -> None:
        # tiktoken's order of failures: a non-integer is a TypeError, an id outside u32 an
        # OverflowError, an id that is no token a KeyError.
        for t in tokens:
            if not isinstance(t, int):
                raise TypeError(f"'{type(t).__name__}' object cannot be interpreted as an integer")
            if not 0 <= t < 1 << 32:
                raise OverflowError("out of range integral type conversion attempted")
        for t in tokens:
            if t not in self._special_ids and self._tok.model.id_bytes(t) is None:
                raise KeyError(f"Invalid token for decoding: {t}")

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The bytes of the tokens, joined; ``tokens`` may also be an integer array (numpy,
        ``array.array``), read without a Python int per id."""
        tokens = _sequence(tokens)
        try:
            return self._tok.decode_bytes(tokens)
        except (UnknownIdError, TypeError, OverflowError, InvalidInputError):
            self._check_ids(_int_list(tokens))
            raise

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of the tokens (invalid UTF-8 handled by ``errors``, as ``bytes.decode``)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token; ``KeyError`` for an id that is no token."""
        if not isinstance(token, int) or not 0 <= token < 1 << 32:
            self._check_ids([token])  # raises tiktoken's TypeError or OverflowError
        special = self._special_bytes.get(token)
        if special is not None:
            return special
        data = self._tok.model.id_bytes(token)
        if data is None:
            raise KeyError(str(token))
        return data

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> List[bytes]:
        """The bytes of each token."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Iterable[int]) -> Tuple[str, List[int]]:
        """The text and, for each token, the character offset where it starts (a token that
        starts inside a character counts from that character)."""
        pieces = self.decode_tokens_bytes(list(tokens))
        offsets: List[int] = []
        chars = 0
        for piece in pieces:
            # A token whose first byte continues a character began in the previous character.
            starts_inside = 1 if piece and 0x80 <= piece[0] < 0xC0 else 0
            offsets.append(max(0, chars - starts_inside))
            chars += sum(1 for b in piece if not 0x80 <= b < 0xC0)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> List[str]:
        """:meth:`decode` for each list (or array) of ids, on ``num_threads`` threads."""
        return [b.decode("utf-8", errors=errors) for b in self.decode_bytes_batch(batch, num_threads=num_threads)]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> List[bytes]:
        """:meth:`decode_bytes` for each list (or array) of ids, on ``num_threads`` threads."""
        batch = [_sequence(tokens) for tokens in batch]
        try:
            return self._tok.decode_bytes_batch(batch, threads=num_threads)
        except (UnknownIdError, TypeError, OverflowError, InvalidInputError):
            for tokens in batch:
                self._check_ids(_int_list(tokens))
            raise

    # -- the vocabulary ----------------------------------------------------------------------

    @property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        """``{token bytes: id}`` of the model's tokens (tiktoken's mergeable ranks)."""
        if self._ranks is None:
            model = self._tok.model
            ranks: Dict[bytes, int] = {}
            for i in range(model.id_limit):
                data = model.id_bytes(i)
                if data is not None and i not in self._special_ids:
                    ranks.setdefault(data, i)
            self._ranks = ranks
        return self._ranks

    def token_byte_values(self) -> List[bytes]:
        """The bytes of every model token, sorted."""
        return sorted(self._mergeable_ranks)

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` when there is none)."""
        return self._special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set:
        """The special tokens' texts."""
        return set(self._special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token."""
        return token in self._special_ids

    @property
    def n_vocab(self) -> int:
        """The highest id plus one."""
        return self.max_token_value + 1
