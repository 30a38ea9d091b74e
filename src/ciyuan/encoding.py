"""Encoding: the result of encoding one text (or a pair of texts) - ids, tokens, the character
span of the input that each token came from, and the masks a model needs.

An Encoding is built in one of two ways:

* **flat** - straight from the model: ids and offsets (or callables that make them on first use);
  the other fields have defaults (type ids 0, attention 1, special-tokens mask 0) and the tokens
  are looked up from the ids when first read;
* **composed** - by post-processing (template, truncation, padding): a list of *parts*, each a
  slice of a flat Encoding, a run of special tokens or a run of padding. Every field is the
  concatenation of its parts' fields, computed on first read, so adding ``[CLS] ... [SEP]`` to a
  plain encode costs a few list operations and never forces the offsets or tokens of the model's
  output until someone reads them.

The composed form follows Hugging Face ``tokenizers``' Encoding exactly: sequence ranges (which
token belongs to which input sequence), overflowing windows (a list of Encodings, possibly with
their own overflowing), truncation windows and padding.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, FrozenSet, List, Optional, Protocol, Sequence, Tuple, Union

import regex

from ciyuan import _core
from ciyuan.errors import InvalidInputError

__all__ = ["Encoding", "AddedTokens", "LayoutPiece", "TokenLookup", "trim_spans"]

Offsets = List[Tuple[int, int]]
Ranges = Dict[int, Tuple[int, int]]

# Kinds of parts. A part is a tuple, never mutated once made:
#   (_SLICE, flat, start, stop, type_id)  tokens flat[start:stop]; type_id None keeps flat's
#   (_SPECIAL, ids, tokens, type_id)      template special tokens: offsets (0, 0), special mask 1
#   (_PAD, n, pad_id, pad_type_id, pad_token)  padding: attention 0, special mask 1
_SLICE, _SPECIAL, _PAD = 0, 1, 2
Part = tuple

_FIELDS = ("ids", "type_ids", "tokens", "offsets", "special_tokens_mask", "attention_mask")


_NONE: List["Encoding"] = []  # the shared "no overflowing windows" (never mutated: always replaced)

# A batch's Encodings are made untracked by the cyclic garbage collector (``_core.gc_track``'s
# note in register_encoder.cc): as made, nothing they hold can point back at them, and tens of
# thousands of tracked objects would be walked by every later full collection. Whatever can give
# an Encoding a reference that may lead back to it (a setter, truncation, padding, merging)
# tracks it again first, so a cycle through a changed Encoding is always collectable.
_track = _core.gc_track

# The slots a native batch sets (Encoding._from_native_batch): the first four per text (data,
# text, ids, length), the others the same for the whole batch.
_NATIVE_SLOTS = ("_native", "_text", "_ids", "_length", "_tokenizer", "_wrap", "_overflowing",
                 "_offsets", "_tokens", "_type_ids", "_attention_mask", "_special_tokens_mask", "_make_ids",
                 "_make_offsets", "_parts", "_range_map")


class TokenLookup(Protocol):
    """What an Encoding needs of its tokenizer: the token of an id (for ``tokens``)."""

    def id_to_token(self, token_id: int) -> str: ...


class AddedTokens:
    """A run of tokens that post-processing adds (a template's ``[CLS]``, ``[SEP]``...): offsets
    ``(0, 0)``, special-tokens mask 1, one type id. Immutable, so a template builds it once.

    Example:
        >>> AddedTokens([101], ["[CLS]"]).encoding().special_tokens_mask
        [1]
    """

    __slots__ = ("part", "length")

    def __init__(self, ids: Sequence[int], tokens: Sequence[str], type_id: int = 0) -> None:
        self.part: Part = (_SPECIAL, tuple(ids), tuple(tokens), type_id)
        self.length = len(ids)

    def encoding(self) -> "Encoding":
        """These tokens as an Encoding of their own."""
        return Encoding._composed(None, [self.part], self.length, {}, [])


# One piece of :meth:`Encoding.concat`'s layout: added tokens, or (index of an input, the type id
# its tokens get - None keeps theirs).
LayoutPiece = Union[AddedTokens, Tuple[int, Optional[int]]]


# What Hugging Face's byte-level post-processors trim (processors.ByteLevel, RobertaProcessing):
# GPT-2's printable space (U+0120) and Unicode's White_Space characters (Rust's
# char::is_whitespace; Python's isspace() would add U+001C..U+001F). _core.OffsetTrim has the same.
_TRIMMED = frozenset("\u0120\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                     "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _count_trimmed(token: str, reverse: bool) -> int:
    n = 0
    for c in (reversed(token) if reverse else token):
        if c not in _TRIMMED:
            break
        n += 1
    return n


def trim_spans(offsets: Offsets, tokens: Sequence[str], start: int, stop: int, add_prefix_space: bool) -> None:
    """Trim ``offsets[start:stop]`` in place as Hugging Face's byte-level post-processors do: a
    span loses the spaces its token starts and ends with (``"Ġworld"``: the space before the
    word), never crossing; the first token (or one starting the text) keeps a single leading
    space with ``add_prefix_space`` (the space the pre-tokenizer added).

    Example:
        >>> offsets = [(0, 6), (6, 12)]
        >>> trim_spans(offsets, ["ĠHello", "Ġworld"], 0, 2, add_prefix_space=False)
        >>> offsets
        [(1, 6), (7, 12)]
    """
    trimmed = _TRIMMED
    for i in range(start, stop):
        token = tokens[i]
        if not token or (token[0] not in trimmed and token[-1] not in trimmed):
            continue  # most tokens: nothing to trim, two set lookups
        s, e = offsets[i]
        leading, trailing = _count_trimmed(token, False), _count_trimmed(token, True)
        if leading == 1 and add_prefix_space and (i == start or s == 0):
            leading = 0  # the space the pre-tokenizer added
        if leading:
            s = min(s + leading, e)
        if trailing and e >= trailing:
            e = max(e - trailing, s)
        offsets[i] = (s, e)


class NativeWrap:
    """How a single-sequence template wraps every text of a batch (e.g. BERT's ``[CLS] $A
    [SEP]``): the added tokens' fields before and after, shared by all the batch's Encodings,
    and ``trim``, a ``_core.OffsetTrim`` when the text's offsets are trimmed first (RoBERTa's
    processor; see :func:`trim_spans`). Never changed once made: the native field getters keep
    what they read of the last one."""

    __slots__ = ("before", "after", "added", "type_id", "fields", "head_ids", "tail_ids", "masks", "trim")

    def __init__(self, head_tokens: List[AddedTokens], type_id: Optional[int], tail_tokens: List[AddedTokens],
                 trim: Any = None) -> None:
        self.trim = trim
        head = [a.part for a in head_tokens]
        tail = [a.part for a in tail_tokens]
        self.before = sum(_part_len(p) for p in head)
        self.after = sum(_part_len(p) for p in tail)
        self.added = self.before + self.after
        self.type_id = 0 if type_id is None else type_id
        self.fields = {
            field: ([v for p in head for v in _part_field(p, field)], [v for p in tail for v in _part_field(p, field)])
            for field in _FIELDS
        }
        self.head_ids, self.tail_ids = self.fields["ids"]
        # Each mask field as (values before, value of each of the text's tokens, values after).
        inner = {"type_ids": self.type_id, "attention_mask": 1, "special_tokens_mask": 0}
        self.masks = {field: (self.fields[field][0], value, self.fields[field][1]) for field, value in inner.items()}

    @classmethod
    def of(cls, head_tokens: List[AddedTokens], type_id: Optional[int], tail_tokens: List[AddedTokens],
           trim: Any = None) -> "NativeWrap":
        """``NativeWrap(head_tokens, type_id, tail_tokens, trim)``; the last one made, when given the
        same AddedTokens objects and trim again (they are immutable, and a template hands out the
        ones it holds): building it costs more than encoding a batch of a few short texts.

        Example:
            >>> cls_, sep = AddedTokens([101], ["[CLS]"]), AddedTokens([102], ["[SEP]"])
            >>> NativeWrap.of([cls_], 0, [sep]) is NativeWrap.of([cls_], 0, [sep])
            True
        """
        last = _last_wrap[0]
        if last is not None:
            (head, kept_type, tail), wrap = last
            if (kept_type == type_id and wrap.trim is trim and len(head) == len(head_tokens)
                    and len(tail) == len(tail_tokens)
                    and all(a is b for a, b in zip(head, head_tokens))
                    and all(a is b for a, b in zip(tail, tail_tokens))):
                return wrap
        wrap = cls(head_tokens, type_id, tail_tokens, trim)
        _last_wrap[0] = ((tuple(head_tokens), type_id, tuple(tail_tokens)), wrap)
        return wrap


# NativeWrap.of's last wrap and what it was made of (a one-item list: replaced whole, never changed).
_WrapKey = Tuple[Tuple[AddedTokens, ...], Optional[int], Tuple[AddedTokens, ...]]
_last_wrap: List[Optional[Tuple[_WrapKey, NativeWrap]]] = [None]


# A text as (whitespace, the rest, whitespace), \s as the added tokens' lstrip and rstrip take it.
_SPACE_AROUND = regex.compile(r"\s*(.*?)\s*", regex.DOTALL)


def _part_len(part: Part) -> int:
    kind = part[0]
    if kind == _SLICE:
        return part[3] - part[2]
    if kind == _SPECIAL:
        return len(part[1])
    return part[1]


def _part_field(part: Part, field: str) -> list:
    """The values of one field for the tokens of one part."""
    kind = part[0]
    if kind == _SLICE:
        _, flat, start, stop, type_id = part
        if field == "type_ids" and type_id is not None:
            return [type_id] * (stop - start)
        values = getattr(flat, field)
        if start == 0 and stop == len(values):
            return values
        return values[start:stop]
    if kind == _SPECIAL:
        _, ids, tokens, type_id = part
        n = len(ids)
        if field == "ids":
            return list(ids)
        if field == "tokens":
            return list(tokens)
        if field == "type_ids":
            return [type_id] * n
        if field == "offsets":
            return [(0, 0)] * n
        return [1] * n  # special_tokens_mask and attention_mask
    _, n, pad_id, pad_type_id, pad_token = part
    if field == "ids":
        return [pad_id] * n
    if field == "tokens":
        return [pad_token] * n
    if field == "type_ids":
        return [pad_type_id] * n
    if field == "offsets":
        return [(0, 0)] * n
    if field == "special_tokens_mask":
        return [1] * n
    return [0] * n  # attention_mask


def _with_type(part: Part, type_id: int) -> Part:
    """``part`` with every type id replaced (what HF's ``set_type_ids`` does to a sequence)."""
    kind = part[0]
    if kind == _SLICE:
        return (_SLICE, part[1], part[2], part[3], type_id)
    if kind == _SPECIAL:
        return (_SPECIAL, part[1], part[2], type_id)
    return (_PAD, part[1], part[2], type_id, part[4])


def _slice_parts(parts: List[Part], start: int, stop: int) -> List[Part]:
    """The parts covering tokens ``start:stop`` of the concatenation of ``parts``."""
    out: List[Part] = []
    at = 0
    for part in parts:
        n = _part_len(part)
        lo, hi = max(start - at, 0), min(stop - at, n)
        if lo < hi:
            if lo == 0 and hi == n:
                out.append(part)
            elif part[0] == _SLICE:
                out.append((_SLICE, part[1], part[2] + lo, part[2] + hi, part[4]))
            elif part[0] == _SPECIAL:
                out.append((_SPECIAL, part[1][lo:hi], part[2][lo:hi], part[3]))
            else:
                out.append((_PAD, hi - lo, part[2], part[3], part[4]))
        at += n
        if at >= stop:
            break
    return out


class Encoding:
    """Ids, tokens, offsets, type ids and masks of one encoded text or pair of texts.

    ``offsets[i]`` is the character span ``(start, end)`` of the original input that token ``i``
    came from, so ``text[start:end]`` is its source text (special and padding tokens have
    ``(0, 0)``; for a pair, offsets of the second sequence point into the second text). A
    byte-level token that holds only part of a character's bytes points at that whole character.
    Fields are computed on first use.

    Fields, as in Hugging Face ``tokenizers``:
        ids, tokens, offsets: one entry per token.
        type_ids: segment id of each token (0 for the first sequence, 1 for the second in BERT).
        attention_mask: 1 for real tokens, 0 for padding.
        special_tokens_mask: 1 for tokens added by post-processing (special and padding), else 0.
        sequence_ids: 0 or 1 for tokens of the first or second input, None for added tokens.
        n_sequences: how many input sequences this Encoding holds.
        overflowing: the windows truncation cut off, each a full Encoding.

    Example:
        >>> enc = tok.encode("Hello world")          # doctest: +SKIP
        >>> enc.ids, enc.tokens, enc.offsets         # doctest: +SKIP
        ([9906, 1917], ['Hello', 'Ġworld'], [(0, 5), (5, 11)])
        >>> bert.encode("hi", "there")               # doctest: +SKIP
        >>> enc.tokens, enc.type_ids, enc.sequence_ids   # doctest: +SKIP
        (['[CLS]', 'hi', '[SEP]', 'there', '[SEP]'], [0, 0, 0, 1, 1], [None, 0, None, 1, None])
    """

    __slots__ = (
        "_ids", "_offsets", "_tokens", "_type_ids", "_attention_mask", "_special_tokens_mask",
        "_make_ids", "_make_offsets", "_tokenizer", "_parts", "_length", "_range_map", "_overflowing",
        "_native", "_text", "_wrap",
    )

    def __init__(
        self,
        tokenizer: Optional[TokenLookup],
        ids: Optional[List[int]] = None,
        offsets: Optional[Offsets] = None,
        make_ids: Optional[Callable[[], List[int]]] = None,
        make_offsets: Optional[Callable[[], Offsets]] = None,
        *,
        tokens: Optional[List[str]] = None,
        type_ids: Optional[List[int]] = None,
        attention_mask: Optional[List[int]] = None,
        special_tokens_mask: Optional[List[int]] = None,
        overflowing: Optional[List["Encoding"]] = None,
    ) -> None:
        self._tokenizer = tokenizer
        self._ids = ids
        self._offsets = offsets
        self._tokens = tokens
        self._type_ids = type_ids
        self._attention_mask = attention_mask
        self._special_tokens_mask = special_tokens_mask
        self._make_ids = make_ids
        self._make_offsets = make_offsets
        self._parts: Optional[List[Part]] = None
        self._length: Optional[int] = None
        self._range_map: Optional[Ranges] = None
        self._overflowing = list(overflowing) if overflowing else _NONE
        self._native: Any = None  # a _core.EncodingData whose fields this Encoding shows
        self._text: Optional[str] = None  # the text it encodes (for character offsets)
        self._wrap: Optional[NativeWrap] = None

    @classmethod
    def _from_native(cls, tokenizer: TokenLookup, data: Any, text: str, wrap: Optional["NativeWrap"] = None
                     ) -> "Encoding":
        """A flat Encoding over a native result (``_core.EncodingData`` of ``text``), optionally
        wrapped in a template's special tokens. Batches make one per text, so it is kept to a
        single object: every field is computed from ``data`` on first read, and the slots are set
        here directly (a batch makes one per text; going through __init__ would cost each one)."""
        enc = cls.__new__(cls)
        enc._tokenizer = tokenizer
        enc._ids = enc._offsets = enc._tokens = enc._type_ids = None
        enc._attention_mask = enc._special_tokens_mask = None
        enc._make_ids = enc._make_offsets = enc._parts = enc._range_map = None
        enc._length = len(data) + (wrap.added if wrap is not None else 0)
        enc._overflowing = _NONE
        enc._native, enc._text, enc._wrap = data, text, wrap
        return enc

    @classmethod
    def _from_native_batch(cls, tokenizer: TokenLookup, datas: List[Any], texts: List[str],
                           wrap: Optional["NativeWrap"] = None) -> List["Encoding"]:
        """``[_from_native(tokenizer, d, t, wrap) for d, t in zip(datas, texts)]``, made natively:
        each object is allocated and its slots set in C++ (no Python call per text), and its ids
        list made at once (every caller reads them)."""
        if _native_maker.cls is not cls:
            return [cls._from_native(tokenizer, d, t, wrap) for d, t in zip(datas, texts)]
        values = (None, None, None, None, tokenizer, wrap, _NONE) + (None,) * (len(_NATIVE_SLOTS) - 7)
        head, tail = (wrap.head_ids, wrap.tail_ids) if wrap is not None else ((), ())
        return _core.native_encodings(_native_maker, values, datas, texts, head, tail)

    @classmethod
    def _encode_native_batch(cls, tokenizer: TokenLookup, encoder: Any, texts: List[str], policy: bytes,
                             threads: int, wrap: Optional["NativeWrap"] = None) -> List["Encoding"]:
        """``_from_native_batch`` of ``encoder.encode_batch(texts, policy, threads)`` in one native
        call (each text's result kept inside its EncodingData object, no list of them made)."""
        values = (None, None, None, None, tokenizer, wrap, _NONE) + (None,) * (len(_NATIVE_SLOTS) - 7)
        head, tail = (wrap.head_ids, wrap.tail_ids) if wrap is not None else ((), ())
        return encoder.encode_batch_encodings(texts, policy, threads, _native_maker, values, head, tail)

    @property
    def _ranges(self) -> Ranges:
        """Which tokens belong to which input sequence: {sequence: (start, stop)} (made on first use)."""
        if self._range_map is None:
            wrap = self._wrap
            self._range_map = {} if wrap is None else {0: (wrap.before, len(self) - wrap.after)}
        return self._range_map

    @_ranges.setter
    def _ranges(self, value: Ranges) -> None:
        _track(self)
        self._range_map = value

    def _native_field(self, field: str) -> list:
        """A field of a native-backed Encoding: the model's tokens, between the wrap's."""
        data, text, wrap = self._native, self._text, self._wrap
        if field == "ids":
            return data.ids if wrap is None else data.wrapped_ids(wrap.head_ids, wrap.tail_ids)
        if field == "offsets":
            if wrap is None:
                return data.char_offsets(text)
            offsets = data.char_offsets(text, wrap.before, wrap.after)
            if wrap.trim is not None:  # the twin of the native getter's trimming (register_encoder.cc)
                trim_spans(offsets, self._native_tokens(), wrap.before, len(offsets) - wrap.after,
                           wrap.trim.add_prefix_space)
            return offsets
        if field == "tokens":
            return self._native_tokens()
        if wrap is None:
            return [0 if field != "attention_mask" else 1] * len(data)
        head, tail = wrap.fields[field]
        inner = [wrap.type_id if field == "type_ids" else 0 if field == "special_tokens_mask" else 1] * len(data)
        return head + inner + tail if head or tail else inner

    def _native_tokens(self) -> List[str]:
        data, text, wrap = self._native, self._text, self._wrap
        tokenizer = self._tokenizer
        head, tail = wrap.fields["tokens"] if wrap is not None else ([], [])
        text_unk = getattr(getattr(tokenizer, "model", None), "text_unk_id", None)
        table = getattr(tokenizer, "_token_table", None)
        if table is not None:
            # Each id's token string is looked up once per tokenizer, then shared (native).
            tokens = data.tokens(table, tokenizer.id_to_token, head, tail)  # type: ignore[union-attr]
        else:
            to_token = tokenizer.id_to_token  # type: ignore[union-attr]
            tokens = head + [to_token(i) for i in data.ids] + tail
        if text is None:
            return tokens
        # Added tokens that took whitespace (lstrip, rstrip): their token is the text they matched,
        # as in Hugging Face. A match is that whitespace around the token's text; the model's own
        # token of the same id (an added token that is also in the vocabulary) never covers
        # whitespace, so it keeps its string.
        stripping: FrozenSet[int] = getattr(tokenizer, "_matched_text_ids", frozenset())
        ids = data.ids if stripping or text_unk is not None else ()
        if stripping and stripping.isdisjoint(ids):
            stripping = frozenset()
        if stripping or (text_unk is not None and text_unk in ids):
            at = len(head)
            for k, (i, (s, e)) in enumerate(zip(ids, data.char_offsets(text))):
                if i == text_unk:  # a model that names its unknown token by its text (HF's Unigram)
                    tokens[at + k] = text[s:e]
                elif i in stripping:
                    core = _SPACE_AROUND.fullmatch(text, s, e)
                    if core is not None and core.group(1) == tokens[at + k]:
                        tokens[at + k] = text[s:e]
        return tokens

    @classmethod
    def _composed(cls, tokenizer: Optional[TokenLookup], parts: List[Part], length: int, ranges: Ranges,
                  overflowing: List["Encoding"]) -> "Encoding":
        """A composed Encoding (no validation; ``parts`` and ``ranges`` are owned by it)."""
        # One per post-processed text: the slots are set here directly (not through __init__).
        enc = cls.__new__(cls)
        enc._tokenizer = tokenizer
        enc._ids = enc._offsets = enc._tokens = enc._type_ids = None
        enc._attention_mask = enc._special_tokens_mask = None
        enc._make_ids = enc._make_offsets = enc._native = enc._text = enc._wrap = None
        enc._parts = parts
        enc._length = length
        enc._range_map = ranges
        enc._overflowing = overflowing
        return enc

    # -- fields ----------------------------------------------------------------------------------

    def _join(self, field: str) -> list:
        parts = self._parts
        out: list = []
        for part in parts:  # type: ignore[union-attr]
            # The slice of a flat encoding is the common part: inlined (one call per field read).
            if part[0] == _SLICE and (field != "type_ids" or part[4] is None):
                values = getattr(part[1], field)
                start, stop = part[2], part[3]
                out += values if start == 0 and stop == len(values) else values[start:stop]
            else:
                out += _part_field(part, field)
        return out

    @property
    def ids(self) -> List[int]:
        if self._ids is None:
            if self._parts is not None:
                self._ids = self._join("ids")
            else:
                self._ids = self._native_field("ids") if self._native is not None else self._make_ids()  # type: ignore[misc]
        return self._ids

    @property
    def offsets(self) -> Offsets:
        if self._offsets is None:
            if self._parts is not None:
                self._offsets = self._join("offsets")
            elif self._native is not None:
                self._offsets = self._native_field("offsets")
            else:
                self._offsets = self._make_offsets()  # type: ignore[misc]
        return self._offsets

    @property
    def tokens(self) -> List[str]:
        if self._tokens is None:
            if self._parts is not None:
                self._tokens = self._join("tokens")
            elif self._native is not None:
                self._tokens = self._native_field("tokens")
            elif self._tokenizer is None:
                raise ValueError("this Encoding has no tokenizer to look its tokens up; pass tokens=...")
            else:
                to_token = self._tokenizer.id_to_token
                self._tokens = [to_token(i) for i in self.ids]
        return self._tokens

    @tokens.setter
    def tokens(self, value: Sequence[str]) -> None:
        self._set("_tokens", value)

    # The three mask fields: a default for a model's own tokens (type ids 0, attention 1, special
    # mask 0), settable as a whole. Written out as three properties (not one descriptor class): a
    # property's getter is a plain function call, and batches read these fields of every
    # Encoding. Over a model's output (a native result) each read makes a new list, as Hugging
    # Face's Encoding does: a list kept by each of a batch's Encodings would cost the garbage
    # collector a walk over every one of them, several times, and making it again is one list
    # repetition. Other Encodings keep the list they made.

    @property
    def type_ids(self) -> List[int]:
        values = self._type_ids
        if values is None:
            if self._native is not None:
                return self._native_mask("type_ids", 0)
            values = self._type_ids = self._mask("type_ids", 0)
        return values

    @type_ids.setter
    def type_ids(self, value: Sequence[int]) -> None:
        self._set("_type_ids", value)

    @property
    def attention_mask(self) -> List[int]:
        values = self._attention_mask
        if values is None:
            if self._native is not None:
                return self._native_mask("attention_mask", 1)
            values = self._attention_mask = self._mask("attention_mask", 1)
        return values

    @attention_mask.setter
    def attention_mask(self, value: Sequence[int]) -> None:
        self._set("_attention_mask", value)

    @property
    def special_tokens_mask(self) -> List[int]:
        values = self._special_tokens_mask
        if values is None:
            if self._native is not None:
                return self._native_mask("special_tokens_mask", 0)
            values = self._special_tokens_mask = self._mask("special_tokens_mask", 0)
        return values

    @special_tokens_mask.setter
    def special_tokens_mask(self, value: Sequence[int]) -> None:
        self._set("_special_tokens_mask", value)

    def _mask(self, field: str, default: int) -> List[int]:
        if self._parts is not None:
            return self._join(field)
        return [default] * len(self)

    def _native_mask(self, field: str, default: int) -> List[int]:
        """A mask field over a native result: ``default`` for the model's tokens, the wrap's
        values for the added tokens around them."""
        wrap = self._wrap
        if wrap is None:
            return [default] * self._length  # type: ignore[operator]
        head, value, tail = wrap.masks[field]
        return head + [value] * (self._length - len(head) - len(tail)) + tail  # type: ignore[operator]

    @property
    def overflowing(self) -> List["Encoding"]:
        """The windows truncation cut off (each a whole Encoding, with special tokens)."""
        return list(self._overflowing)

    @overflowing.setter
    def overflowing(self, value: Sequence["Encoding"]) -> None:
        _track(self)
        self._overflowing = list(value)

    @property
    def has_overflowing(self) -> bool:
        """Whether truncation left overflowing windows (without copying them, as
        :attr:`overflowing` does)."""
        return bool(self._overflowing)

    @property
    def n_sequences(self) -> int:
        """Number of input sequences in this Encoding (1 for a single text, 2 for a pair)."""
        return len(self._ranges) if self._ranges else 1

    @property
    def sequence_ids(self) -> List[Optional[int]]:
        """For each token, the input sequence it came from (0 or 1), None for added tokens."""
        n = len(self)
        # As HF: with no recorded ranges the whole encoding is sequence 0; otherwise sequence k
        # covers its range (a missing k counts as the whole encoding) and the rest is None.
        seq: List[Optional[int]] = [None] * n
        for k in range(self.n_sequences):
            start, stop = self._ranges.get(k, (0, n))
            seq[start:stop] = [k] * (stop - start)
        return seq

    def _set(self, slot: str, value: Sequence) -> None:
        """Set a field directly; a composed Encoding is made flat first so the value sticks."""
        values = list(value)
        if len(values) != len(self):
            raise ValueError(f"{slot[1:]} needs {len(self)} values (one per token), got {len(values)}")
        _track(self)
        self._flatten()
        setattr(self, slot, values)

    def _flatten(self) -> None:
        """Turn a composed Encoding into a flat one holding every field as a list."""
        if self._parts is None:
            return
        for field in _FIELDS:
            getattr(self, field)
        self._parts = None
        self._length = None

    def __len__(self) -> int:
        if self._length is not None:
            return self._length
        return len(self.ids)

    def __repr__(self) -> str:
        shown = self.ids[:8]
        more = ", ..." if len(self.ids) > 8 else ""
        over = f", overflowing={len(self._overflowing)}" if self._overflowing else ""
        return f"Encoding(n={len(self.ids)}, ids={shown}{more}{over})"

    # -- the operations post-processing is made of (HF's encoding.rs semantics) ------------------
    #
    # Public, as in Hugging Face's Encoding: truncate, pad, merge_with / merge, set_sequence_id,
    # plus copy, set_type_id and concat, which templates use to lay sequences and added tokens
    # side by side without touching the model's output.

    @property
    def composed(self) -> bool:
        """True when post-processing made this Encoding (a concatenation of other Encodings'
        tokens and added tokens), False for a model's own output."""
        return self._parts is not None

    def _as_parts(self, type_id: Optional[int] = None) -> List[Part]:
        """This Encoding's tokens as parts (a new list); ``type_id`` replaces every type id."""
        if self._parts is None:
            return [(_SLICE, self, 0, len(self), type_id)]
        if type_id is None:
            return list(self._parts)
        return [_with_type(p, type_id) for p in self._parts]

    def copy(self, type_id: Optional[int] = None) -> "Encoding":
        """A composed copy that owns its structure (the model's output is shared, never copied);
        ``type_id`` replaces the type ids of the copy and of its overflowing windows (one level).

        Example:
            >>> Encoding(None, ids=[5, 6], offsets=[(0, 1), (1, 2)], tokens=["a", "b"]).copy(1).type_ids
            [1, 1]
        """
        overflowing = [o.copy() for o in self._overflowing]
        if type_id is not None:
            for o in overflowing:
                o.set_type_id(type_id)
        return Encoding._composed(self._tokenizer, self._as_parts(type_id), len(self), dict(self._ranges),
                                  overflowing)

    def _set_parts(self, parts: List[Part], length: int) -> None:
        _track(self)
        if self._parts is None:
            # A flat Encoding about to change shape: its current fields become one immutable part.
            snapshot = Encoding(self._tokenizer, self._ids, self._offsets, self._make_ids, self._make_offsets,
                                tokens=self._tokens, type_ids=self._type_ids, attention_mask=self._attention_mask,
                                special_tokens_mask=self._special_tokens_mask)
            if self._native is not None:
                snapshot._native, snapshot._text, snapshot._wrap = self._native, self._text, self._wrap
                snapshot._length, snapshot._range_map = self._length, self._range_map
                self._native = self._text = self._wrap = None
            parts = [(_SLICE, snapshot, p[2], p[3], p[4]) if p[0] == _SLICE and p[1] is self else p
                     for p in parts]
            self._make_ids = self._make_offsets = None
        self._parts = parts
        self._length = length
        self._ids = self._offsets = self._tokens = self._type_ids = None
        self._attention_mask = self._special_tokens_mask = None

    def set_type_id(self, type_id: int) -> None:
        """Every token gets ``type_id`` (overflowing windows keep theirs, as in HF)."""
        self._set_parts(self._as_parts(type_id), len(self))

    def set_sequence_id(self, sequence_id: int, *, overflowing: bool = False) -> None:
        """All tokens belong to input ``sequence_id`` (and, with ``overflowing``, those of every
        overflowing window, at every depth)."""
        self._ranges[sequence_id] = (0, len(self))
        if overflowing:
            for o in self._overflowing:
                o.set_sequence_id(sequence_id, overflowing=True)

    def merge_with(self, pair: "Encoding") -> None:
        """Append ``pair`` in place (offsets not shifted: HF's ``growing_offsets=False``),
        combining overflowing windows as HF's ``merge_with`` does: each of our windows with
        ``pair`` and with each of its windows, then ourselves with each of its windows - clones
        carry their own overflowing, so the result can nest. ``pair`` is not changed."""
        overflowings: List[Encoding] = []
        for mine in self._overflowing:
            n = mine.copy()
            n.merge_with(pair.copy())
            overflowings.append(n)
            for other in pair._overflowing:
                n = mine.copy()
                n.merge_with(other.copy())
                overflowings.append(n)
        for other in pair._overflowing:
            n = self.copy()
            n.merge_with(other.copy())
            overflowings.append(n)
        _track(self)
        shift = len(self)
        for k, (start, stop) in pair._ranges.items():
            self._ranges[k] = (start + shift, stop + shift)
        self._set_parts(self._as_parts() + pair._as_parts(), shift + len(pair))
        self._overflowing = overflowings

    @staticmethod
    def merge(encodings: Sequence["Encoding"]) -> "Encoding":
        """A new Encoding: ``encodings`` one after another (:meth:`merge_with` each in turn)."""
        tokenizer = next((e._tokenizer for e in encodings if e._tokenizer is not None), None)
        result = Encoding._composed(tokenizer, [], 0, {}, [])
        for e in encodings:
            result.merge_with(e)
        return result

    @staticmethod
    def concat(layout: Sequence[LayoutPiece], inputs: Sequence["Encoding"], keep_types: bool = False) -> "Encoding":
        """A new Encoding laid out by ``layout``: :class:`AddedTokens`, or ``(i, type id)`` for
        the tokens of ``inputs[i]`` with that type id (None, or ``keep_types``, keeps theirs);
        each input's tokens are recorded as input sequence ``i``. The inputs' overflowing
        windows are not carried (see :meth:`merge`). One call per encoded text: kept to a single
        pass over the layout.

        Example:
            >>> a = Encoding(None, ids=[7592], offsets=[(0, 5)], tokens=["hello"])
            >>> e = Encoding.concat([AddedTokens([101], ["[CLS]"]), (0, 0), AddedTokens([102], ["[SEP]"])], [a])
            >>> e.ids, e.sequence_ids
            ([101, 7592, 102], [None, 0, None])
        """
        parts: List[Part] = []
        ranges: Ranges = {}
        at = 0
        for piece in layout:
            if piece.__class__ is AddedTokens:
                parts.append(piece.part)
                at += piece.length
                continue
            index, type_id = piece  # type: ignore[misc]
            enc = inputs[index]
            n = len(enc)
            if keep_types:
                type_id = None
            if enc._parts is None:
                parts.append((_SLICE, enc, 0, n, type_id))
            else:
                parts += enc._as_parts(type_id)
            for k, (s, e) in enc._ranges.items():  # ranges an input already had (rare)
                ranges[k] = (s + at, e + at)
            ranges[index] = (at, at + n)
            at += n
        return Encoding._composed(inputs[0]._tokenizer if inputs else None, parts, at, ranges, [])

    def truncate(self, max_length: int, stride: int = 0, direction: str = "right") -> None:
        """Keep ``max_length`` tokens in place; the rest becomes overflowing windows that overlap
        by ``stride`` tokens (HF's ``Encoding.truncate``). ``direction="left"`` keeps the end.

        Raises:
            InvalidInputError: ``stride`` is not smaller than ``max_length`` (when cutting).
        """
        n = len(self)
        if max_length >= n:
            return
        _track(self)
        if self._parts is None:
            # A flat Encoding becomes a part of its own first (a snapshot of its fields): the
            # windows cut below then point at that, not at this Encoding, which changes.
            self._set_parts(self._as_parts(), n)
        if max_length == 0:
            whole = Encoding._composed(self._tokenizer, self._as_parts(), n, self._ranges, self._overflowing)
            self._set_parts([], 0)
            self._ranges = {}
            self._overflowing = [whole]
            return
        if stride >= max_length:
            raise InvalidInputError(f"truncation stride {stride} must be smaller than max_length {max_length}")
        step = max_length - stride
        windows: List[Tuple[int, int]] = []
        if direction != "left":
            for start in range(0, n, step):
                stop = min(start + max_length, n)
                windows.append((start, stop))
                if stop == n:
                    break
        else:
            for last in range(n - 1, -1, -step):
                stop = last + 1
                start = max(stop - max_length, 0)
                windows.append((start, stop))
                if start == 0:
                    break
        parts = self._as_parts()
        self._overflowing = [
            Encoding._composed(self._tokenizer, _slice_parts(parts, s, e), e - s, {}, []) for s, e in windows[1:]
        ]
        s, e = windows[0]
        self._ranges = {}
        self._set_parts(_slice_parts(parts, s, e), e - s)

    def pad(self, length: int, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
            pad_token: str = "[PAD]") -> None:
        """Pad in place to ``length`` tokens (overflowing windows first, as HF; never shortens)."""
        for o in self._overflowing:
            o.pad(length, direction, pad_id, pad_type_id, pad_token)
        n = len(self)
        if n >= length:
            return
        pad = (_PAD, length - n, pad_id, pad_type_id, pad_token)
        if direction == "left":
            shift = length - n
            self._ranges = {k: (s + shift, e + shift) for k, (s, e) in self._ranges.items()}
            self._set_parts([pad] + self._as_parts(), length)
        else:
            self._set_parts(self._as_parts() + [pad], length)


# Encoding's class and slots for native code: batches make their Encodings with it.
_native_maker: Any = _core.SlotClass(Encoding, _NATIVE_SLOTS)


def _native_getters() -> None:
    """Put native getters in front of the fields' Python getters: reading a field that is set
    (ids of a batch, a kept list) or a mask of a native result then costs no Python frame; the
    Python getter (the fallback) still decides every other case, and the setters are unchanged."""
    for field, kind, default in (("ids", 0, 0), ("tokens", 0, 0), ("offsets", 2, 0), ("type_ids", 1, 0),
                                 ("attention_mask", 1, 1), ("special_tokens_mask", 1, 0)):
        prop = Encoding.__dict__[field]
        getter: Any = _core.field_getter(_native_maker, "_" + field, prop.fget, kind, default, field)
        # property(getter, prop.fset, None, prop.__doc__), read without property's call of the getter
        setattr(Encoding, field, _core.field_descriptor(getter, prop.fset, prop.__doc__))


_native_getters()
