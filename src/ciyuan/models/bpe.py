"""The BPE model: a vocabulary of tokens plus a rule for merging adjacent symbols.

A piece (one pre-tokenized word) starts as single symbols - its bytes for byte-level models,
its characters otherwise, the last one carrying ``end_of_word_suffix`` (e.g. ``</w>``) if set -
and adjacent symbols are merged, lowest rank first and leftmost on ties, until no pair can
merge. The rank of a pair comes from the ``merges`` list (Hugging Face, subword-nmt, GPT-2's
``vocab.bpe``) or, with ``rank_by_token=True``, from the id of the token the pair would make
(tiktoken). ``encode_mode="longest_match"`` switches to the textbook greedy longest-match.

The loops run in the native core; see ``ciyuan.reference.bpe`` for the same algorithm in a page
of Python.
"""

from __future__ import annotations

from itertools import compress
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

from ciyuan import _core
from ciyuan.byte_alphabet import CHAR_TO_BYTE, bytes_to_printable, printable_to_bytes
from ciyuan.decoders.base import DECODERS, Decoder
from ciyuan.errors import InvalidInputError, ModelError, UnknownIdError
from ciyuan.models.base import MODELS, Model, check_alpha, check_id_limit

__all__ = ["BPE", "looks_byte_level"]

TokenLike = Union[str, bytes]
# token -> id with str tokens, bytes tokens or both (a Mapping is invariant in its key type).
BpeVocab = Union[Mapping[str, int], Mapping[bytes, int], Mapping[TokenLike, int]]
_ENCODE_MODES = ("merges", "longest_match")


@MODELS.register
class BPE(Model):
    """Byte-pair-encoding model.

    Args:
        vocab: token -> id. Byte-level models take raw ``bytes`` or GPT-2's printable form
            (``"Ġthe"``); character-level models take ``str``.
        merges: pairs of tokens in rank order. Not used with ``rank_by_token``.
        byte_level: symbols are bytes (GPT-2 / tiktoken) instead of characters.
        rank_by_token: tiktoken's rule: a pair merges if the two tokens joined are a token, and
            that token's id is the pair's rank.
        ignore_merges: a piece that is itself a token is emitted whole (tiktoken does this).
            Defaults to ``rank_by_token``.
        end_of_word_suffix: appended to the last character of a piece (character level, as
            Hugging Face and subword-nmt do: ``"l o w</w>"``).
        end_of_word_symbol: or a separate last symbol of every piece (``"l o w </w>"``, as the
            classic tutorials do); its tokens cover no input (an empty span at the word's end).
        unk_token: token for unknown characters or bytes; without one they raise an error.
        fuse_unk: consecutive unknown symbols become a single unknown token.
        encode_mode: ``"merges"`` (BPE) or ``"longest_match"`` (greedy longest prefix).
        cache_capacity: how many recent pieces each thread remembers with their tokens (rounded
            up to a power of two, at most 131072; 0 disables the cache; pieces with non-ASCII
            bytes have a cache of their own, of at most 8192).
        continuing_subword_prefix: character level: put in front of every character of a piece
            but the first (``"##"``, as Hugging Face's BPE does); a merge ``(a, "##b")`` makes
            ``a + "b"``.
        byte_fallback: character level: a character that is not a token becomes the tokens
            ``<0xXX>`` of its UTF-8 bytes when they are all in the vocabulary (Llama 2, Mistral).
        drop_unknown: without ``unk_token``, leave unknown characters out (Hugging Face) instead
            of raising :class:`~ciyuan.errors.InvalidInputError`.
        missing_unk_ok: an ``unk_token`` the vocabulary lacks is not a ModelError; text that
            needs it is then an InvalidInputError (Hugging Face loads such files too).
        dropout: BPE-dropout (Provilkov et al., 2019), as Hugging Face's ``BPE(dropout=p)``: a
            probability in [0, 1] with which each merge is skipped, on every encode (subword
            regularization for training; seedable through ``Tokenizer.encode(..., seed=)``).
            None or 0 encodes as usual; 1 leaves the bytes (or characters). While sampling, a
            piece that is a token is not taken whole (``ignore_merges``), as in Hugging Face.
            ``Tokenizer.encode(..., sample=True, alpha=p)`` samples with any model without it.

    Example:
        >>> m = BPE({"l": 0, "o": 1, "w": 2, "lo": 3, "low": 4}, [("l", "o"), ("lo", "w")])
        >>> m.id_to_token(4)
        'low'
        >>> from ciyuan import Tokenizer
        >>> tok = Tokenizer(BPE(m.get_vocab(), m.merges, dropout=1.0))
        >>> tok.encode("low").tokens
        ['l', 'o', 'w']
    """

    type_name = "BPE"

    def __init__(
        self,
        vocab: BpeVocab,
        merges: Optional[Sequence[Tuple[TokenLike, TokenLike]]] = None,
        *,
        byte_level: bool = False,
        rank_by_token: bool = False,
        ignore_merges: Optional[bool] = None,
        end_of_word_suffix: str = "",
        end_of_word_symbol: str = "",
        unk_token: Optional[str] = None,
        fuse_unk: bool = False,
        encode_mode: str = "merges",
        cache_capacity: int = 65536,
        dropout: Optional[float] = None,
        continuing_subword_prefix: str = "",
        byte_fallback: bool = False,
        drop_unknown: bool = False,
        missing_unk_ok: bool = False,
    ) -> None:
        if encode_mode not in _ENCODE_MODES:
            raise ModelError(f"encode_mode must be one of {_ENCODE_MODES}, not {encode_mode!r}")
        if byte_level and (end_of_word_suffix or end_of_word_symbol):
            raise ModelError("an end-of-word marker applies to character-level models, not byte-level ones")
        if end_of_word_suffix and end_of_word_symbol:
            raise ModelError("give end_of_word_suffix or end_of_word_symbol, not both")
        if dropout is not None:
            try:
                dropout = check_alpha(dropout, at_most=1.0, what="dropout")
            except InvalidInputError as e:
                raise ModelError(str(e)) from None
            if dropout and encode_mode == "longest_match":
                raise ModelError("dropout skips merges, and encode_mode='longest_match' has none; "
                                 "use encode_mode='merges'")
        if not isinstance(continuing_subword_prefix, str) or not isinstance(end_of_word_suffix, str):
            raise ModelError("continuing_subword_prefix and end_of_word_suffix must be strings")
        if byte_level and continuing_subword_prefix:
            raise ModelError("continuing_subword_prefix applies to character-level models, not byte-level ones")
        if rank_by_token and merges:
            raise ModelError("rank_by_token models take their ranks from token ids: pass no merges")
        self.byte_level = bool(byte_level)
        self.rank_by_token = bool(rank_by_token)
        self.ignore_merges = self.rank_by_token if ignore_merges is None else bool(ignore_merges)
        self.end_of_word_suffix = end_of_word_suffix
        self.end_of_word_symbol = end_of_word_symbol
        self.unk_token = unk_token
        self.fuse_unk = bool(fuse_unk)
        self.encode_mode = encode_mode
        self.cache_capacity = int(cache_capacity)
        self.dropout: Optional[float] = dropout
        self.continuing_subword_prefix = continuing_subword_prefix
        self.byte_fallback = bool(byte_fallback)
        self.drop_unknown = bool(drop_unknown)

        self._tokens: List[Optional[bytes]] = self._tokens_by_id(vocab)
        self._ids_cache: Optional[Dict[bytes, int]] = None
        self._texts: List[Optional[str]] = [None] * len(self._tokens)  # id_to_token's, made on first use
        fast_merges = self._merge_ids_fast(vocab, merges)
        self._merges: List[Tuple[int, int]] = (
            fast_merges if fast_merges is not None
            else [self._merge_ids(i, pair) for i, pair in enumerate(merges or ())])
        config = _core.BpeConfig()
        config.byte_level = self.byte_level
        config.rank_by_token = self.rank_by_token
        config.ignore_merges = self.ignore_merges
        config.end_of_word_suffix = end_of_word_suffix
        config.end_of_word_symbol = end_of_word_symbol
        config.fuse_unk = self.fuse_unk
        config.cache_capacity = self.cache_capacity
        config.longest_match = encode_mode == "longest_match"
        config.continuing_subword_prefix = continuing_subword_prefix
        config.byte_fallback = self.byte_fallback
        config.drop_unknown = self.drop_unknown
        if unk_token is not None:
            if not isinstance(unk_token, str):
                raise ModelError(f"unk_token must be a str or None, got {unk_token!r}")
            try:
                unk_bytes = self._token_bytes(unk_token) if self.byte_level else unk_token.encode("utf-8")
            except ModelError:
                unk_bytes = b""
            if unk_bytes in self._ids:
                config.unk_id = self._ids[unk_bytes]
            elif not missing_unk_ok:
                raise ModelError(f"unk_token {unk_token!r} is not in the vocabulary")
            else:
                # Hugging Face loads such a model and fails only on text that needs the unknown
                # token: unknown text is then an error here too, not left out.
                config.drop_unknown = self.drop_unknown = False
        try:
            self._native = _core.BpeModel(self._tokens, self._merges, config)
        except UnicodeEncodeError:
            raise ModelError("a token holds a lone surrogate, which is not valid text") from None

    # -- construction helpers -----------------------------------------------------------------

    def _token_bytes(self, token: TokenLike) -> bytes:
        if isinstance(token, bytes):
            return token
        if not isinstance(token, str):
            raise ModelError(f"tokens must be str or bytes, got {type(token).__name__}")
        if self.byte_level:
            try:
                return printable_to_bytes(token)
            except KeyError:
                raise ModelError(
                    f"byte-level token {token!r} is not written in GPT-2's printable byte alphabet; "
                    "pass raw bytes instead"
                ) from None
        try:
            return token.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 form, so no token can be it
            raise ModelError(f"token {token!r} holds a lone surrogate, which has no UTF-8 form") from None

    def _merge_ids_fast(self, vocab: BpeVocab, merges: Optional[Sequence[Tuple[TokenLike, TokenLike]]]
                        ) -> Optional[List[Tuple[int, int]]]:
        """The merges as id pairs looked up in ``vocab`` itself when it maps the merges' tokens
        as written (str tokens, as tokenizer.json has them: 200,000 merges in a tenth of a
        second); None when any lookup fails, so the checked path names the culprit."""
        if not merges:
            return []
        lookup: Any = vocab
        try:
            return [(lookup[a], lookup[b]) for a, b in merges]
        except (KeyError, TypeError, ValueError):
            return None

    def _tokens_by_id(self, vocab: BpeVocab) -> List[Optional[bytes]]:
        if not vocab:
            raise ModelError("the vocabulary is empty")
        size = max(vocab.values()) + 1
        if min(vocab.values()) < 0:
            raise ModelError("token ids must be non-negative")
        check_id_limit(size - 1, len(vocab))  # before the table of size entries is made
        tokens: List[Optional[bytes]] = [None] * size
        if self.byte_level:
            fast = _printable_tokens_by_id(vocab, size)
            if fast is not None:
                return fast
        for token, i in vocab.items():
            data = token if type(token) is bytes else self._token_bytes(token)
            if tokens[i] is not None:
                raise ModelError(f"id {i} is given to both {tokens[i]!r} and {data!r}")
            tokens[i] = data
        return tokens

    def _merge_ids(self, rank: int, pair: Tuple[TokenLike, TokenLike]) -> Tuple[int, int]:
        try:
            left, right = pair
        except (TypeError, ValueError):
            raise ModelError(f"merge {rank + 1} must be a pair of tokens, got {pair!r}") from None
        ids = []
        for t in (left, right):
            data = self._token_bytes(t)
            if data not in self._ids:
                raise ModelError(f"merge {rank + 1} ({left!r}, {right!r}) uses {t!r}, which is not in the vocabulary")
            ids.append(self._ids[data])
        return (ids[0], ids[1])

    # -- vocabulary ---------------------------------------------------------------------------

    def token_bytes(self, token_id: int) -> bytes:
        """The raw bytes of a token (UTF-8 text for character-level models)."""
        if not 0 <= token_id < len(self._tokens) or self._tokens[token_id] is None:
            raise UnknownIdError(f"id {token_id} is not in the model's vocabulary (0..{len(self._tokens) - 1})")
        return self._tokens[token_id]  # type: ignore[return-value]

    def id_to_token(self, token_id: int) -> str:
        """A token as text: GPT-2's printable form for byte-level models."""
        try:  # each id's text is made once (Encoding.tokens asks for every token of every text)
            text = self._texts[token_id] if token_id >= 0 else None
        except (IndexError, TypeError):
            text = None
        if text is None:
            data = self.token_bytes(token_id)
            text = bytes_to_printable(data) if self.byte_level else data.decode("utf-8", "replace")
            self._texts[token_id] = text
        return text

    def token_to_id(self, token: TokenLike) -> Optional[int]:
        """The id of a token (printable form or raw bytes for byte-level models), or None."""
        try:
            return self._ids.get(self._token_bytes(token))
        except ModelError:
            return None

    def get_vocab(self) -> Dict[str, int]:
        """token -> id, tokens as :meth:`id_to_token` writes them."""
        texts = self._texts
        for i in [i for i, t in enumerate(texts) if t is None and self._tokens[i] is not None]:
            self.id_to_token(i)  # made once, then kept
        # Built at C level (a comprehension calling id_to_token cost 0.15 s for 100,000 tokens,
        # paid by every encode-dataset run's tokenizer fingerprint).
        if None not in texts:
            return dict(zip(cast(List[str], texts), range(len(texts))))
        present = [t is not None for t in texts]
        return dict(zip(compress(texts, present), compress(range(len(texts)), present)))  # type: ignore[arg-type]

    @property
    def merges(self) -> List[Tuple[str, str]]:
        """The merges in rank order, tokens written as :meth:`id_to_token` does."""
        return [(self.id_to_token(a), self.id_to_token(b)) for a, b in self._merges]

    @property
    def merge_ids(self) -> List[Tuple[int, int]]:
        """The merges in rank order, as pairs of token ids."""
        return list(self._merges)

    # -- the pipeline's view of a model --------------------------------------------------------

    def default_decoder(self) -> Decoder:
        """The decoder this model's tokens need: the end-of-word marker's, or byte-level."""
        marker = self.end_of_word_suffix or self.end_of_word_symbol
        return DECODERS.from_dict({"type": "BPESuffix", "suffix": marker} if marker else {"type": "ByteLevel"})

    # -- subword regularization ---------------------------------------------------------------

    def sample_options(self, alpha: float, nbest_size: int) -> _core.SampleOptions:
        """BPE-dropout with probability ``alpha`` (in [0, 1]); ``nbest_size`` does not apply."""
        if self.encode_mode == "longest_match":
            raise ModelError("BPE-dropout skips merges, and this BPE model encodes by longest match "
                             "(encode_mode='longest_match'); use encode_mode='merges'")
        return _core.SampleOptions(alpha=check_alpha(alpha, at_most=1.0, what="alpha (the BPE-dropout probability)"),
                                   nbest_size=-1)

    def default_sampling(self) -> Optional[_core.SampleOptions]:
        """BPE-dropout with :attr:`dropout`, when it is set and not 0."""
        return _core.SampleOptions(alpha=self.dropout) if self.dropout else None

    # -- serialization ------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """Hugging Face's form of the model (``tokenizer.json``'s ``"model"``), followed by the
        options Hugging Face lacks (which ``tokenizers`` ignores): ``byte_level``,
        ``drop_unknown`` and, when set, ``rank_by_token``, ``end_of_word_symbol``, ``encode_mode``.

        Example:
            >>> d = BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]).to_dict()
            >>> d["merges"], d["unk_token"], d["byte_level"]
            ([['a', 'b']], None, False)
        """
        data: Dict[str, Any] = {
            "type": self.type_name,
            "dropout": self.dropout,
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix or None,
            "end_of_word_suffix": self.end_of_word_suffix or None,
            "fuse_unk": self.fuse_unk,
            "byte_fallback": self.byte_fallback,
            "ignore_merges": self.ignore_merges,
            "vocab": self.get_vocab(),
            "merges": [list(m) for m in self.merges],
            "byte_level": self.byte_level,
            "drop_unknown": self.drop_unknown,
        }
        if self.rank_by_token:
            data["rank_by_token"] = True
        if self.end_of_word_symbol:
            data["end_of_word_symbol"] = self.end_of_word_symbol
        if self.encode_mode != "merges":
            data["encode_mode"] = self.encode_mode
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "BPE":
        """Read :meth:`to_dict`'s form, Hugging Face's (``tokenizer.json``, tokenizers 0.13 to
        1.0: merges as ``"a b"`` strings or ``["a", "b"]`` pairs, ``null`` for unset options) or
        ciyuan's older one (with ``encode_mode``).

        Hugging Face's form does not say whether the model is byte-level: a ``"byte_level"`` key
        decides (the tokenizer.json reader sets it from the ByteLevel pre-tokenizer); without
        one, the model is byte-level when every token is written in GPT-2's printable byte
        alphabet and some token holds one of the alphabet's stand-ins for a non-printable byte
        (``Ġ`` for the space, ...), as byte-level vocabularies do and character-level ones do
        not. Hugging Face leaves unknown characters out when there is no ``unk_token``; the
        older ciyuan form raises an error on them (``drop_unknown``).

        Example:
            >>> m = BPE.from_dict({"type": "BPE", "vocab": {"Ġ": 0, "a": 1, "Ġa": 2}, "merges": ["Ġ a"]})
            >>> m.byte_level, m.merges
            (True, [('Ġ', 'a')])
        """
        if not isinstance(data, Mapping) or "vocab" not in data:
            raise ModelError("BPE model description lacks the key 'vocab'")
        vocab = data["vocab"]
        if not isinstance(vocab, Mapping):
            raise ModelError(f"the BPE vocab must be a mapping token -> id, not {type(vocab).__name__}")
        ids = vocab.values()
        # All ints in range is told in C-speed passes (200,000 ids); else the loop names the culprit.
        if ids and not (set(map(type, ids)) == {int} and min(ids) >= 0 and max(ids) < 1 << 31):
            for token, i in vocab.items():
                if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 31:
                    raise ModelError(f"the id of {token!r} must be an integer in [0, 2^31), got {i!r}")
        merges = _read_merges(data.get("merges") or [])
        hf_form = "encode_mode" not in data and "rank_by_token" not in data
        byte_level = data.get("byte_level")
        if byte_level is None:
            byte_level = hf_form and looks_byte_level(vocab)
        drop_unknown = data.get("drop_unknown", hf_form)
        dropout = data.get("dropout")
        ignore_merges = data.get("ignore_merges")
        return cls(
            vocab,
            merges,
            byte_level=bool(byte_level),
            rank_by_token=data.get("rank_by_token", False),
            ignore_merges=bool(ignore_merges) if hf_form else ignore_merges,
            end_of_word_suffix=data.get("end_of_word_suffix") or "",
            end_of_word_symbol=data.get("end_of_word_symbol") or "",
            unk_token=data.get("unk_token"),
            fuse_unk=bool(data.get("fuse_unk", False)),
            encode_mode=data.get("encode_mode", "merges"),
            dropout=dropout if dropout else None,
            continuing_subword_prefix=data.get("continuing_subword_prefix") or "",
            byte_fallback=bool(data.get("byte_fallback", False)),
            drop_unknown=bool(drop_unknown),
            missing_unk_ok=hf_form,
        )

    def __repr__(self) -> str:
        kind = "byte-level" if self.byte_level else "character-level"
        dropout = f", dropout={self.dropout!r}" if self.dropout is not None else ""
        return (f"BPE({kind}, {self.vocab_size} tokens, {len(self._merges)} merges, "
                f"encode_mode={self.encode_mode!r}{dropout})")


# The printable alphabet's stand-ins for bytes that are not printable Latin-1 (U+0100 onwards).
_STAND_INS = frozenset(c for c in CHAR_TO_BYTE if ord(c) >= 0x100)
_ALPHABET = frozenset(CHAR_TO_BYTE)


def looks_byte_level(vocab: Mapping[str, int]) -> bool:
    """Whether a Hugging Face BPE vocabulary is byte-level: every token written in GPT-2's
    printable alphabet, and some token holding a stand-in for a non-printable byte.

    Example:
        >>> looks_byte_level({"Ġthe": 0, "a": 1}), looks_byte_level({"▁the": 0, "a": 1})
        (True, False)
    """
    chars = set("".join(t for t in vocab if isinstance(t, str)))
    return chars <= _ALPHABET and not chars.isdisjoint(_STAND_INS)


# GPT-2's printable characters -> the Latin-1 character of their byte; every other character of
# U+0000..U+00FF -> one that Latin-1 cannot encode, so that a token outside the alphabet fails.
_TO_LATIN1 = {**dict.fromkeys(range(256), 1114112 - 1), **{ord(c): b for c, b in CHAR_TO_BYTE.items()}}


def _printable_tokens_by_id(vocab: BpeVocab, size: int) -> Optional[List[Optional[bytes]]]:
    """Each id's bytes from a vocabulary of str tokens in GPT-2's printable alphabet (a whole
    tokenizer.json in one translate per token, no per-character Python); None when a token is
    not such a str or two share an id (the checked path then says which)."""
    tokens: List[Optional[bytes]] = [None] * size
    try:
        for token, i in vocab.items():
            tokens[i] = token.translate(_TO_LATIN1).encode("latin-1")  # type: ignore[union-attr, arg-type]
    except (AttributeError, TypeError, UnicodeEncodeError):  # bytes tokens, or not in the alphabet
        return None
    if len(vocab) != sum(t is not None for t in tokens):
        return None
    return tokens


def _read_merges(raw: Any) -> List[Tuple[str, str]]:
    """Merges as Hugging Face writes them: ``"a b"`` strings (up to tokenizers 0.19) or
    ``["a", "b"]`` pairs (0.20 on), or ciyuan's pairs."""
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise ModelError(f"BPE merges must be a list, not {type(raw).__name__}")
    try:  # the common case, at C speed: all "a b" strings, or all two-item lists
        fast = [m.split(" ") if type(m) is str else m for m in raw]
        if all(len(p) == 2 and type(p[0]) is str and type(p[1]) is str for p in fast):
            return [(p[0], p[1]) for p in fast]
    except TypeError:
        pass
    merges: List[Tuple[str, str]] = []
    for rank, m in enumerate(raw):
        if isinstance(m, str):
            parts = m.split(" ")
            if len(parts) != 2:
                raise ModelError(f"merge {rank + 1} {m!r} must be two tokens separated by one space")
            merges.append((parts[0], parts[1]))
        elif isinstance(m, (list, tuple)) and len(m) == 2 and all(isinstance(t, str) for t in m):
            merges.append((m[0], m[1]))
        else:
            raise ModelError(f"merge {rank + 1} must be \"a b\" or [\"a\", \"b\"], got {m!r}")
    return merges
