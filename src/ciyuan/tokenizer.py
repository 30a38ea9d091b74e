"""Tokenizer: the pipeline normalizer -> pre-tokenizer -> model, plus special tokens and a decoder.

When the normalizer and pre-tokenizer have a native form in front of the model (every model -
BPE, WordPiece, WordLevel - encodes natively; :func:`ciyuan.front_end.native_front_end` says which
stages do) a whole text or batch is encoded by one call into the C++ core with the GIL released;
otherwise the Python stages prepare the pieces and the core encodes them. Both paths give the
same ids and offsets.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import random
from itertools import accumulate, compress
from operator import not_
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Tuple,
    Union,
    cast,
    overload,
)

from ciyuan import _core, _id_arrays, decoders, models, normalizers, pre_tokenizers, processors
from ciyuan._io import PathLike, atomic_write_text, read_utf8
from ciyuan._text import replace_surrogates
from ciyuan.decoders import Decoder
from ciyuan.encoding import Encoding, NativeWrap
from ciyuan.errors import CiyuanError, FileFormatError, InvalidInputError, ModelError, UnknownIdError, check_count
from ciyuan.formats.bert_vocab import bert_vocab_parts
from ciyuan.formats.detect import detect_format
from ciyuan.formats.gpt2 import gpt2_parts
from ciyuan.formats.hf_json import looks_like_hf_json, read_hf_json, save_hf_json
from ciyuan.formats.sentencepiece import looks_like_sentencepiece, save_sentencepiece, sentencepiece_parts
from ciyuan.formats.tiktoken import tiktoken_parts
from ciyuan.front_end import native_front_end, nfc_front_end
from ciyuan.models.base import Model
from ciyuan.normalizers import NormalizedString, Normalizer
from ciyuan.normalizers.unicode import hf_unchanged
from ciyuan.pre_tokenizers import PreTokenizer
from ciyuan.processors import Padding, PostProcessor, Truncation, pad_batch, post_process
from ciyuan.special_tokens import (
    AddedToken,
    SpecialSet,
    SpecialTokenRules,
    added_pattern,
    added_tokens_from_list,
    find_added,
)

if TYPE_CHECKING:
    from ciyuan.faces.tiktoken import TiktokenEncoding

__all__ = ["Tokenizer"]

EncodeInput = Union[str, Tuple[str, str]]  # one text, or a pair of texts (BERT's A and B)
# Ids to decode: a sequence of ints, or any integer buffer (numpy array, array.array, memoryview).
IdSequence = Union[Iterable[int], Any]
FORMAT_VERSION = 1


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Keep the cyclic garbage collector off while a batch of results is built: the many small
    objects would start collections again and again (each walking every live object), and none
    of them form cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _split_pairs(inputs: List[Any]) -> Tuple[List[str], List[Optional[str]]]:
    """The first texts, and the second text of each input (None for single texts)."""
    firsts: List[str] = []
    seconds: List[Optional[str]] = []
    for i, item in enumerate(inputs):
        if isinstance(item, str):
            firsts.append(item)
            seconds.append(None)
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            firsts.append(item[0])
            seconds.append(item[1])
        else:
            raise InvalidInputError(f"input {i} must be a text or a (text, pair) tuple, not {type(item).__name__}")
    return firsts, seconds


def _original_offsets(data: Any, norm: NormalizedString, start: int) -> List[Tuple[int, int]]:
    """The character offsets in the original text of the tokens ``data`` (a native result over
    ``norm.text``) of the segment that starts at ``start``."""
    spans = norm.spans
    if spans is None:  # the text unchanged (most segments): only the shift
        return [(start + s, start + e) for s, e in data.char_offsets(norm.text)] if start else \
            data.char_offsets(norm.text)
    original_span = norm.original_span
    offsets = []
    for s, e in data.char_offsets(norm.text):
        if s < e:  # (original_span, inlined for the common case)
            offsets.append((start + spans[s][0], start + spans[e - 1][1]))
        else:
            os_, oe = original_span(s, e)
            offsets.append((start + os_, start + oe))
    return offsets


def _added_flags(token: AddedToken) -> int:
    """The native encoder's flags of an added token found in its added-token passes: the first
    pass for the tokens not normalized, the second for the normalized ones."""
    return ((_core.ADDED_SECOND if token.normalized else _core.ADDED_RAW)
            | (_core.ADDED_LSTRIP if token.lstrip else 0) | (_core.ADDED_RSTRIP if token.rstrip else 0)
            | (_core.ADDED_SINGLE_WORD if token.single_word else 0))


def _sample_seed(seed: Optional[int]) -> int:
    """A call's seed as the native core takes it (0 .. 2**64 - 1): any int (reduced modulo
    2**64), or a fresh one from Python's ``random`` module for None."""
    if seed is None:
        return random.getrandbits(64)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidInputError(f"seed must be an integer or None (a fresh random seed), not {seed!r}")
    return seed % (1 << 64)


class _Sampling:
    """How one encode call samples: the model's native options and the call's seed. Text
    ``index`` of the call draws from ``rng(index)``, as the native batch does for its text i."""

    __slots__ = ("options", "seed")

    def __init__(self, options: _core.SampleOptions, seed: int) -> None:
        self.options = options
        self.seed = seed

    def rng(self, index: int) -> _core.SampleRng:
        return _core.SampleRng(self.seed, index)


def _byte_offsets(text: str) -> List[int]:
    """UTF-8 byte offset of every character index of ``text`` (and of its end)."""
    if text.isascii():
        return list(range(len(text) + 1))
    return [0, *accumulate(len(c.encode("utf-8")) for c in text)]




class Tokenizer:
    """A complete tokenizer: encode text to ids and decode ids back to text.

    Args:
        model: the model (e.g. :class:`ciyuan.models.BPE`, :class:`ciyuan.models.WordPiece`).
        normalizer: optional first stage (e.g. ``normalizers.NFKC()``).
        pre_tokenizer: splits text into pieces (e.g. ``pre_tokenizers.Split("cl100k_base")``);
            None encodes each text as one piece.
        post_processor: adds the model's special tokens around one text or a pair (e.g.
            ``processors.BertProcessing()``: ``[CLS] A [SEP] B [SEP]`` with type ids).
        decoder: turns token bytes into text; defaults to what the model needs.
        special_tokens: special-token text -> id (e.g. ``{"<|endoftext|>": 100257}``).
        truncation, padding: see :meth:`enable_truncation` and :meth:`enable_padding`.
        sentencepiece_proto: the serialized ``ModelProto`` of a ``.model`` file (set by
            :meth:`from_file`; :meth:`save` to ``.model`` keeps its other fields).
        added_tokens: id -> :class:`~ciyuan.special_tokens.AddedToken`: Hugging Face's added
            tokens, found in every input before the model (see :meth:`add_tokens`).

    Example:
        >>> tok = Tokenizer.from_tiktoken("cl100k_base.tiktoken")          # doctest: +SKIP
        >>> tok.encode("hello world").ids                                  # doctest: +SKIP
        [15339, 1917]
        >>> tok.decode([15339, 1917])                                      # doctest: +SKIP
        'hello world'
    """

    def __init__(
        self,
        model: Model,
        *,
        normalizer: Optional[Normalizer] = None,
        pre_tokenizer: Optional[PreTokenizer] = None,
        post_processor: Optional[PostProcessor] = None,
        decoder: Optional[Decoder] = None,
        special_tokens: Optional[Mapping[str, int]] = None,
        truncation: Optional[Truncation] = None,
        padding: Optional[Padding] = None,
        sentencepiece_proto: Optional[bytes] = None,
        added_tokens: Optional[Mapping[int, AddedToken]] = None,
    ) -> None:
        self.model: Model = model
        #: The ``ModelProto`` (serialized) of the ``.model`` file this tokenizer was read from:
        #: saving as ``.model`` starts from it, so what ciyuan does not use is kept.
        self.sentencepiece_proto = sentencepiece_proto
        self.normalizer: Optional[Normalizer] = normalizer
        self.pre_tokenizer: Optional[PreTokenizer] = pre_tokenizer
        self.post_processor: Optional[PostProcessor] = post_processor
        self.truncation = truncation
        self.padding = padding
        self.decoder: Decoder = decoder if decoder is not None else model.default_decoder()
        self.special_tokens: Dict[str, int] = dict(special_tokens or {})
        #: id -> AddedToken, in id order (Hugging Face's added vocabulary).
        self.added_tokens: Dict[int, AddedToken] = dict(sorted((added_tokens or {}).items()))
        self._build()
        # The sampling every encode does unasked (a BPE model's dropout), fixed with the model.
        self._always_sampling = model.default_sampling()

    def _build(self) -> None:
        """Check the special and added tokens against the model and make the native encoder
        (again, after :meth:`add_tokens`)."""
        model = self.model
        self._special_ids = {i: t for t, i in self.special_tokens.items()}
        for text, i in self.special_tokens.items():
            if not isinstance(text, str) or not text:
                raise ModelError(f"special tokens must be non-empty strings, got {text!r}")
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 32:
                raise ModelError(f"special token {text!r} needs an integer id in 0..2**32-1, got {i!r}")
            # The model's own piece of that text (a SentencePiece control piece such as "<s>") may
            # serve as the special token; any other piece may not.
            if 0 <= i < model.id_limit and model.id_bytes(i) not in (None, text.encode("utf-8")) \
                    and model.id_to_token(i) != text:
                raise ModelError(f"special token {text!r} has id {i}, "
                                 f"which the model uses for {model.id_to_token(i)!r}")
        if len(self._special_ids) != len(self.special_tokens):
            raise ModelError("two special tokens share an id")
        front_end = native_front_end(self.normalizer, self.pre_tokenizer, model)
        # NFC before a scanner (Qwen2's files): native for the texts NFC leaves unchanged (_not_nfc).
        nfc = front_end is None and self.normalizer is not None
        if nfc:
            front_end = nfc_front_end(self.normalizer, self.pre_tokenizer, model)
        self._native_path = front_end is not None
        self._build_added()
        self._nfc_gate = nfc and self._native_path
        # Every special and added token's text (as given and normalized): a text NFC changes that
        # holds one takes the Python stages even for ids (see _nfc_for_ids).
        self._token_texts = sorted({*self.special_tokens, *(t.content for t in self.added_tokens.values()),
                                    *self._added_texts.values()})
        # Every added token is one of the encoder's specials (so that it decodes); on the Python
        # path the policy bytes are never sent to the encoder, so only the native path needs them.
        self._encoder = model.make_encoder(front_end, [*self.special_tokens.items(),
                                                       *((t, i) for i, t in self._added_texts.items())],
                                           [0] * len(self.special_tokens) + self._added_flags
                                           if self._added_flags else [])
        # Token strings by id for Encoding.tokens, each looked up once (anew with the tokens), and
        # the byte-level offset trimming that counts their spaces (by add_prefix_space).
        self._token_table = _core.TokenTable()
        self._offset_trims: Dict[bool, Any] = {}

    def _build_added(self) -> None:
        """How the added tokens are found, as Hugging Face does it: the tokens not normalized on
        the input, then the normalized ones on each normalized piece, with their flags
        (single_word, lstrip, rstrip).

        - None has a flag and all match on the same text (the input as given: not normalized, or
          no normalizer): by the native encoder, in one pass beside the special tokens.
        - Otherwise, with a native front end and the normalized ones (if any) matching the input
          itself (no normalizer): by the native encoder, in its added-token passes
          (``_core.ADDED_RAW``, ``ADDED_SECOND``) after the special tokens.
        - Otherwise on the Python path."""
        model = self.model
        self._added_by_text: Dict[str, Tuple[int, AddedToken]] = {}
        self._added_flags: List[int] = []  # per added token (id order), for the native passes
        #: The added tokens whose token, in an Encoding, is the text they matched (with the
        #: whitespace lstrip or rstrip took), as in Hugging Face.
        self._matched_text_ids: FrozenSet[int] = frozenset()
        for i, token in self.added_tokens.items():
            if not isinstance(token, AddedToken):
                raise ModelError(f"added token {i} must be an AddedToken, not {token!r}")
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 32:
                raise ModelError(f"added token {token.content!r} needs an integer id in 0..2**32-1, got {i!r}")
            if token.content in self._added_by_text:
                raise ModelError(f"the added token {token.content!r} has two ids: "
                                 f"{self._added_by_text[token.content][0]} and {i}")
            if token.content in self.special_tokens or i in self._special_ids:
                raise ModelError(f"the added token {token.content!r} (id {i}) is also a special token")
            if 0 <= i < model.id_limit and model.id_bytes(i) not in (None, token.content.encode("utf-8")) \
                    and model.id_to_token(i) != token.content:
                raise ModelError(f"added token {token.content!r} has id {i}, "
                                 f"which the model uses for {model.id_to_token(i)!r}")
            self._added_by_text[token.content] = (i, token)
        tokens = list(self.added_tokens.values())
        # One pass over the input finds them all as Hugging Face's two passes would.
        one_pass = all(not t.normalized for t in tokens) or (self.normalizer is None and all(t.normalized
                                                                                             for t in tokens))
        if not tokens or (one_pass and all(t.plain for t in tokens)):
            self._raw_added = self._norm_added = None
            always = {t.content: i for i, t in self.added_tokens.items()}
        else:
            always = {}
            raw = [t.content for t in tokens if not t.normalized]
            pattern = added_pattern(raw)
            self._raw_added = (pattern, self._added_by_text) if pattern is not None else None
            normalized: Dict[str, Tuple[int, AddedToken]] = {}
            for i, t in self.added_tokens.items():
                if t.normalized:
                    text = self.normalizer.normalize_str(t.content) if self.normalizer is not None else t.content
                    if text:
                        normalized.setdefault(text, (i, t))
            pattern = added_pattern(normalized)
            self._norm_added = (pattern, normalized) if pattern is not None else None
            if self._native_path and (self.normalizer is None or not any(t.normalized for t in tokens)):
                self._added_flags = [_added_flags(t) for t in self.added_tokens.values()]
                self._matched_text_ids = frozenset(i for i, t in self.added_tokens.items() if t.lstrip or t.rstrip)
            else:
                self._native_path = False
        self._specials = SpecialTokenRules(self.special_tokens, always, self._added_by_text)
        self._policy = self._specials.policy  # (allowed_special, disallowed_special) -> policy bytes
        # What an added token's id stands for (id_to_token, decode): its content, normalized
        # when it matches normalized text (Hugging Face's added vocabulary does the same).
        self._added_texts = {i: (self.normalizer.normalize_str(t.content) or t.content
                                 if t.normalized and self.normalizer is not None else t.content)
                             for i, t in self.added_tokens.items()}
        # What skip_special_tokens leaves out: as Hugging Face decides it, by the token's string -
        # an added token whose string is a special token's content. So a special token that
        # normalizing changed ("Hel" after Lowercase is "hel") is kept, as in Hugging Face.
        special_texts = set(self.special_tokens) | {t.content for t in self.added_tokens.values() if t.special}
        self._skipped_ids = set(self._special_ids) | {i for i, text in self._added_texts.items()
                                                      if text in special_texts}

    # -- encoding ------------------------------------------------------------------------------

    def encode(
        self,
        text: str,
        pair: Optional[str] = None,
        *,
        add_special_tokens: bool = True,
        allowed_special: SpecialSet = (),
        disallowed_special: SpecialSet = "all",
        sample: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: Optional[int] = None,
    ) -> Encoding:
        """Encode one text, or a pair of texts, into an :class:`~ciyuan.encoding.Encoding`.

        With a post-processor (BERT's ``[CLS] $A [SEP] $B [SEP]``) its special tokens are added
        unless ``add_special_tokens=False``; truncation and padding apply when enabled
        (:meth:`enable_truncation`, :meth:`enable_padding`), exactly as Hugging Face does.

        Special-token text in ``text`` raises :class:`~ciyuan.errors.DisallowedSpecialTokenError`
        unless listed in ``allowed_special`` (then it becomes the special token) or left out of
        ``disallowed_special`` (then it is encoded as ordinary text) - tiktoken's rules. Lone
        surrogates are encoded as U+FFFD.

        Subword regularization: with ``sample=True`` the model samples each piece's
        segmentation instead of taking the best one.

        - BPE models: BPE-dropout; ``alpha`` is the probability (0 to 1) that each merge is
          skipped (0: plain encoding, 1: bytes or characters). ``nbest_size`` does not apply.
        - Unigram models: as sentencepiece's ``enable_sampling``; ``alpha`` (>= 0) smooths the
          distribution (segmentations weighted by exp(alpha * score)), ``nbest_size`` is 1 for
          the best segmentation, 0 or negative to sample from all of them, k > 1 to sample from
          the k best.

        ``seed`` (an int) makes the draw reproducible; None draws a fresh seed from Python's
        ``random`` module. A BPE model made with ``dropout=p`` samples on every call (``seed``
        applies; ``sample=True`` then uses ``alpha`` in place of ``p``). WordPiece, WordLevel and
        CharLevel models do not sample (:class:`~ciyuan.errors.ModelError`); a bad ``alpha`` or
        ``nbest_size`` raises :class:`~ciyuan.errors.InvalidInputError`.

        Example:
            >>> tok.encode("<|endoftext|>", allowed_special="all").ids   # doctest: +SKIP
            [100257]
            >>> bert.encode("Hello", "world").type_ids                  # doctest: +SKIP
            [0, 0, 0, 1, 1]
            >>> tok.encode("tokenization", sample=True, alpha=0.3, seed=1).tokens   # doctest: +SKIP
            ['token', 'iz', 'ation']
        """
        policy = self._policy(allowed_special, disallowed_special)
        sampling = self._sampling(sample, alpha, nbest_size, seed) if sample or self._always_sampling else None
        return self._encode_one(text, pair, policy, sampling, add_special_tokens)

    def _encode_one(self, text: str, pair: Optional[str], policy: bytes, sampling: Optional[_Sampling],
                    add_special_tokens: bool) -> Encoding:
        encoding = self._encode_raw(text, policy, sampling)
        if pair is None and not self._post_processing:
            return encoding
        second = self._encode_raw(pair, policy, sampling, 1) if pair is not None else None
        encoding = self._post_process(encoding, second, add_special_tokens)
        return pad_batch([encoding], self.padding)[0] if self.padding is not None else encoding

    def _sampling(self, sample: bool, alpha: float, nbest_size: int, seed: Optional[int]) -> Optional[_Sampling]:
        """How a call samples: the options ``sample=True`` asks for (checked by the model) or the
        model's own (BPE's ``dropout``), with the call's seed; None for plain encoding."""
        if sample:
            is_int = isinstance(nbest_size, int) and not isinstance(nbest_size, bool)
            if not is_int or not -(1 << 31) <= nbest_size < 1 << 31:
                raise InvalidInputError(f"nbest_size must be an integer (1: no sampling, <= 0: sample from all "
                                        f"segmentations, k > 1: from the k best), not {nbest_size!r}")
            options = self.model.sample_options(alpha, nbest_size)
        elif self._always_sampling is not None:
            options = self._always_sampling
        else:
            return None
        return _Sampling(options, _sample_seed(seed))

    def _encode_raw(self, text: str, policy: bytes, sampling: Optional[_Sampling] = None, index: int = 0) -> Encoding:
        """What the model gives for one text: no post-processing. ``index``: the text's place
        in its call (a pair's second text is 1), which picks its random generator."""
        if not self._native_path or self._not_nfc([text]):
            return self._encode_python(text, policy, sampling, index)
        try:
            data = (self._encoder.encode(text, policy) if sampling is None
                    else self._encoder.encode_sampled(text, policy, sampling.options, sampling.rng(index)))
        except UnicodeEncodeError:
            text = replace_surrogates(text)
            data = (self._encoder.encode(text, policy) if sampling is None
                    else self._encoder.encode_sampled(text, policy, sampling.options, sampling.rng(index)))
        return Encoding._from_native(self, data, text)

    @property
    def _post_processing(self) -> bool:
        return self.post_processor is not None or self.truncation is not None or self.padding is not None

    def _post_process(self, encoding: Encoding, pair: Optional[Encoding], add_special_tokens: bool) -> Encoding:
        return post_process(encoding, pair, processor=self.post_processor, truncation=self.truncation,
                            add_special_tokens=add_special_tokens)

    @overload
    def encode_ids(self, text: str, *, allowed_special: SpecialSet = (), disallowed_special: SpecialSet = "all",
                   sample: bool = False, alpha: float = 0.1, nbest_size: int = -1, seed: Optional[int] = None,
                   as_array: Literal[False] = False) -> List[int]: ...

    @overload
    def encode_ids(self, text: str, *, allowed_special: SpecialSet = (), disallowed_special: SpecialSet = "all",
                   sample: bool = False, alpha: float = 0.1, nbest_size: int = -1, seed: Optional[int] = None,
                   as_array: Literal[True]) -> Any: ...

    def encode_ids(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = (),
        disallowed_special: SpecialSet = "all",
        sample: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: Optional[int] = None,
        as_array: bool = False,
    ) -> Any:
        """Just the ids of :meth:`encode` (the fastest path; no offsets are kept). ``sample``,
        ``alpha``, ``nbest_size`` and ``seed`` as for :meth:`encode` (the same seed gives the
        same ids).

        ``as_array=True`` returns the ids as a numpy ``uint32`` array when numpy is installed,
        else as an ``array.array`` of 4-byte unsigned ints - without making a Python int per
        id (numpy's array shares the encoder's memory). Both export the buffer protocol, and
        :meth:`decode` reads them directly. Use :meth:`count_tokens` when only the number is
        wanted.

        Example:
            >>> tok.encode_ids("hello world")                             # doctest: +SKIP
            [15339, 1917]
            >>> tok.encode_ids("hello world", as_array=True)              # doctest: +SKIP
            array([15339,  1917], dtype=uint32)
        """
        policy = self._policy(allowed_special, disallowed_special)
        sampling = self._sampling(sample, alpha, nbest_size, seed) if sample or self._always_sampling else None
        if as_array:
            return self._encode_ids_array(text, policy, sampling)
        return self._encode_ids(text, policy, sampling)

    def _encode_ids_array(self, text: str, policy: bytes, sampling: Optional[_Sampling]) -> Any:
        """encode_ids as an array: the encoder's own buffer when the ids are the model's alone
        (or a template's ids around them), else an array of the ids the other paths give."""
        if (self._native_path and sampling is None and self.truncation is None and self.padding is None
                and not self._not_nfc([text])):
            wrap = self._single_template()
            if wrap == ([], []):
                try:
                    return _id_arrays.uint32_array(self._encoder.encode_ids_array(text, policy))
                except UnicodeEncodeError:
                    return _id_arrays.uint32_array(self._encoder.encode_ids_array(replace_surrogates(text), policy))
            if wrap is not None and isinstance(text, str):
                flat = self._native_flat([text], 1, policy, wrap)[0]
                return _id_arrays.uint32_array(flat)
        return _id_arrays.uint32_from_ints(self._encode_ids(text, policy, sampling))

    def _encode_ids(self, text: str, policy: bytes, sampling: Optional[_Sampling]) -> List[int]:
        if self._post_processing:
            return self._encode_one(text, None, policy, sampling, True).ids
        if not self._native_path or self._not_nfc([text]):
            return self._encode_python(text, policy, sampling).ids
        if sampling is not None:
            try:
                return self._encoder.encode_sampled_ids(text, policy, sampling.options, sampling.rng(0))
            except UnicodeEncodeError:
                return self._encoder.encode_sampled_ids(replace_surrogates(text), policy, sampling.options,
                                                        sampling.rng(0))
        try:
            return self._encoder.encode_ids(text, policy)
        except UnicodeEncodeError:
            return self._encoder.encode_ids(replace_surrogates(text), policy)

    def encode_batch(
        self,
        inputs: Iterable[EncodeInput],
        *,
        add_special_tokens: bool = True,
        threads: Optional[int] = None,
        allowed_special: SpecialSet = (),
        disallowed_special: SpecialSet = "all",
        sample: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: Optional[int] = None,
    ) -> List[Encoding]:
        """Encode many texts (or ``(text, pair)`` tuples) on ``threads`` threads (default: all
        cores) with the GIL released; padding ``"longest"`` pads to the longest of the batch.

        ``sample``, ``alpha``, ``nbest_size`` and ``seed`` as for :meth:`encode`. Each text has a
        random generator of its own, made from ``seed`` and its place in the batch (the first
        texts in order, then the second texts of pairs), so a seed gives the same results
        whatever ``threads`` is, and ``encode_batch([t], seed=s)[0]`` is ``encode(t, seed=s)``.

        Example:
            >>> [e.ids for e in tok.encode_batch(["hello", "world"])]     # doctest: +SKIP
            [[15339], [14957]]
            >>> tok.encode_batch(["tokenization"] * 2, sample=True, alpha=0.5, seed=3)  # doctest: +SKIP
        """
        sampling = self._sampling(sample, alpha, nbest_size, seed) if sample or self._always_sampling else None
        return self._encode_batch(list(inputs), add_special_tokens, threads, allowed_special, disallowed_special,
                                  sampling)

    def _encode_batch(self, inputs: List[Any], add_special_tokens: bool, threads: Optional[int],
                      allowed_special: SpecialSet, disallowed_special: SpecialSet,
                      sampling: Optional[_Sampling]) -> List[Encoding]:
        if self._native_path and sampling is None and self.truncation is None and not self._not_nfc(inputs):
            # Single texts, each encoded and made into its Encoding in one native call (the
            # common case: plain texts, or a template that only wraps each text).
            direct = self._direct_batch(inputs, add_special_tokens, threads, allowed_special, disallowed_special)
            if direct is not None:
                return pad_batch(direct, self.padding) if self.padding is not None else direct
        datas: Any = None
        firsts: List[str]
        seconds: List[Optional[str]]
        if self._native_path:
            # Single texts first (the common case): the native batch checks that every input is
            # a str as it reads them, and stops at the first that is not (a pair), before any
            # encoding. A Python pass over the inputs would cost a tenth of a batch of short lines.
            try:
                texts, datas = self._native_batch(inputs, threads, allowed_special, disallowed_special,
                                                  ids_only=False, sampling=sampling)
            except TypeError:
                datas = None
        if datas is not None:
            firsts, seconds, singles = texts, [None] * len(texts), True
        else:
            firsts, seconds = _split_pairs(inputs)
            singles = len(firsts) == len(inputs) and all(t is None for t in seconds)
            texts, datas = self._native_batch(firsts + [t for t in seconds if t is not None], threads,
                                              allowed_special, disallowed_special, ids_only=False,
                                              sampling=sampling)
        not_nfc = self._not_nfc(texts) if datas is not None else []
        with _gc_paused():
            if (datas is not None and singles and self.truncation is None and self.post_processor is not None
                    and not not_nfc):
                wrapped = self._wrap_all(datas, texts, add_special_tokens)
                if wrapped is not None:
                    return pad_batch(wrapped, self.padding) if self.padding is not None else wrapped
            policy = self._policy(allowed_special, disallowed_special)
            if datas is None:
                raws = [self._encode_python(t, policy, sampling, i) for i, t in enumerate(texts)]
            else:
                raws = Encoding._from_native_batch(self, datas, texts)
                for i in not_nfc:  # (the NFC gate: these take the Python stages)
                    raws[i] = self._encode_python(texts[i], policy, sampling, i)
            if not self._post_processing and singles:
                return raws
            rest = iter(raws[len(firsts):])
            out = [self._post_process(raw, next(rest) if second is not None else None, add_special_tokens)
                   for raw, second in zip(raws, seconds)]
            return pad_batch(out, self.padding) if self.padding is not None else out

    def _direct_batch(self, inputs: List[Any], add_special_tokens: bool, threads: Optional[int],
                      allowed_special: SpecialSet, disallowed_special: SpecialSet) -> Optional[List[Encoding]]:
        """The Encodings of a batch of single texts made in one native call, or None when the
        batch holds anything else (a pair) or the post-processor does more than wrap each text.
        The native call checks that every input is a str as it reads them and stops at the first
        that is not, before any encoding: a Python pass over the inputs would cost a tenth of a
        batch of short lines."""
        wrap: Optional[NativeWrap] = None
        if self.post_processor is not None:
            wrap = self._native_wrap(add_special_tokens)
            if wrap is None:
                return None
        policy = self._policy(allowed_special, disallowed_special)
        texts = list(inputs)
        n = self._threads(threads)
        with _gc_paused():
            try:
                return Encoding._encode_native_batch(self, self._encoder, texts, policy, n, wrap)
            except TypeError:
                return None
            except UnicodeEncodeError:
                texts = [replace_surrogates(t) for t in texts]
                return Encoding._encode_native_batch(self, self._encoder, texts, policy, n, wrap)

    def _wrap_all(self, datas: List[Any], texts: List[str], add_special_tokens: bool) -> Optional[List[Encoding]]:
        """The post-processed encodings of single texts, built straight from the native results
        when the template just wraps each text (BERT's ``[CLS] $A [SEP]``): the same Encodings
        as :func:`~ciyuan.processors.post_process` gives, without its per-text bookkeeping."""
        wrap = self._native_wrap(add_special_tokens) if self.post_processor is not None else None
        if wrap is None:
            return None
        return Encoding._from_native_batch(self, datas, texts, wrap)

    def _native_wrap(self, add_special_tokens: bool) -> Optional[NativeWrap]:
        """How the post-processor wraps each single text (with the offset trimming it does
        first, RoBERTa's), or None when it does more than that."""
        processor = self.post_processor
        parts = processor.single_wrapper(add_special_tokens) if processor is not None else None
        if parts is None:
            return None
        add_prefix_space = processor.single_trim()  # type: ignore[union-attr]
        if add_prefix_space is None:
            return NativeWrap.of(*parts)
        trim = self._offset_trims.get(add_prefix_space)
        if trim is None:
            text_unk = self.model.text_unk_id
            trim = self._offset_trims[add_prefix_space] = _core.OffsetTrim(
                self._token_table, add_prefix_space, sorted(self._matched_text_ids),
                -1 if text_unk is None else text_unk)
        return NativeWrap.of(*parts, trim=trim)

    @overload
    def encode_batch_ids(self, inputs: Iterable[EncodeInput], *, add_special_tokens: bool = True,
                         threads: Optional[int] = None, allowed_special: SpecialSet = (),
                         disallowed_special: SpecialSet = "all", sample: bool = False, alpha: float = 0.1,
                         nbest_size: int = -1, seed: Optional[int] = None,
                         as_array: Literal[False] = False) -> List[List[int]]: ...

    @overload
    def encode_batch_ids(self, inputs: Iterable[EncodeInput], *, add_special_tokens: bool = True,
                         threads: Optional[int] = None, allowed_special: SpecialSet = (),
                         disallowed_special: SpecialSet = "all", sample: bool = False, alpha: float = 0.1,
                         nbest_size: int = -1, seed: Optional[int] = None,
                         as_array: Literal[True]) -> Tuple[Any, Any]: ...

    def encode_batch_ids(
        self,
        inputs: Iterable[EncodeInput],
        *,
        add_special_tokens: bool = True,
        threads: Optional[int] = None,
        allowed_special: SpecialSet = (),
        disallowed_special: SpecialSet = "all",
        sample: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        seed: Optional[int] = None,
        as_array: bool = False,
    ) -> Any:
        """Just the ids of :meth:`encode_batch` (the fastest path: no offsets are kept); the same
        seed gives the same ids as :meth:`encode_batch`.

        ``as_array=True`` returns ``(ids, offsets)`` instead: all the ids in one flat uint32
        array and ``len(inputs) + 1`` int64 offsets, text ``i``'s ids being
        ``ids[offsets[i]:offsets[i + 1]]`` - numpy arrays when numpy is installed, else
        ``array.array``; no Python int is made per id, and the texts are encoded on
        ``threads`` threads (default: all cores).

        Example:
            >>> tok.encode_batch_ids(["hello", "world"])                  # doctest: +SKIP
            [[15339], [14957]]
            >>> ids, offsets = tok.encode_batch_ids(["hello", "big world"], as_array=True)  # doctest: +SKIP
            >>> ids, offsets                                              # doctest: +SKIP
            (array([15339, 16548,  1917], dtype=uint32), array([0, 1, 3]))
        """
        inputs = list(inputs)
        sampling = self._sampling(sample, alpha, nbest_size, seed) if sample or self._always_sampling else None
        if as_array:
            return self._encode_batch_ids_array(inputs, add_special_tokens, threads, allowed_special,
                                                disallowed_special, sampling)
        return self._encode_batch_ids(inputs, add_special_tokens, threads, allowed_special, disallowed_special,
                                      sampling)

    def _encode_batch_ids_array(self, inputs: List[Any], add_special_tokens: bool, threads: Optional[int],
                                allowed_special: SpecialSet, disallowed_special: SpecialSet,
                                sampling: Optional[_Sampling]) -> Tuple[Any, Any]:
        """(flat ids, offsets): one native call on the native path, else the lists joined."""
        wrap = self._single_template() if add_special_tokens else ([], [])
        texts = self._nfc_for_ids(inputs) if self._native_path else None
        if (texts is not None and sampling is None and self.truncation is None and self.padding is None
                and wrap is not None and all(isinstance(t, str) for t in texts)):
            policy = self._policy(allowed_special, disallowed_special)
            flat, offsets = self._native_flat(cast(List[str], texts), self._threads(threads), policy, wrap)
            return _id_arrays.uint32_array(flat), _id_arrays.int64_array(offsets)
        lists = self._encode_batch_ids(inputs, add_special_tokens, threads, allowed_special, disallowed_special,
                                       sampling)
        return (_id_arrays.uint32_from_ints(i for ids in lists for i in ids),
                _id_arrays.int64_from_ints(accumulate((len(ids) for ids in lists), initial=0)))

    def _encode_utf8_batch_ids_array(self, data: bytes, ends: List[int], *, add_special_tokens: bool = True,
                                     threads: Optional[int] = None, allowed_special: SpecialSet = (),
                                     disallowed_special: SpecialSet = "all") -> Optional[Tuple[Any, Any]]:
        """``encode_batch_ids(texts, as_array=True, ...)`` of documents given as one UTF-8 buffer
        (document ``i`` is ``data[ends[i - 1]:ends[i]]``, from 0 for the first), without a str
        per document: encode-dataset's JSON Lines reader. None when the tokenizer's pipeline is
        not wholly native (or NFC comes first): the caller then decodes the documents and calls
        :meth:`encode_batch_ids`. Errors as ``encode_batch_ids`` raises them; ValueError for data
        that is not UTF-8."""
        wrap = self._single_template() if add_special_tokens else ([], [])
        if (not self._native_path or self._nfc_gate or self._always_sampling is not None
                or self.truncation is not None or self.padding is not None or wrap is None):
            return None
        policy = self._policy(allowed_special, disallowed_special)
        flat, offsets = self._encoder.encode_utf8_batch_ids_array(data, ends, policy, self._threads(threads), *wrap)
        return _id_arrays.uint32_array(flat), _id_arrays.int64_array(offsets)

    def _native_flat(self, texts: List[str], threads: int, policy: bytes,
                     wrap: Tuple[List[int], List[int]]) -> Tuple[Any, Any]:
        """The native (flat ids, offsets) buffers of a batch of str, ``wrap``'s ids around each
        text's; lone surrogates read as U+FFFD."""
        try:
            return cast(Tuple[Any, Any], self._encoder.encode_batch_ids_array(texts, policy, threads, *wrap))
        except UnicodeEncodeError:
            return cast(Tuple[Any, Any], self._encoder.encode_batch_ids_array(
                [replace_surrogates(t) for t in texts], policy, threads, *wrap))

    def count_tokens(self, text: str, *, allowed_special: SpecialSet = (),
                     disallowed_special: SpecialSet = "all") -> int:
        """``len(encode_ids(text, ...))``, without building the ids: the native encoder counts the
        tokens as it makes them (special-token arguments and errors as for :meth:`encode_ids`).

        Example:
            >>> tok.count_tokens("hello world")                           # doctest: +SKIP
            2
        """
        policy = self._policy(allowed_special, disallowed_special)
        wrap = self._countable()
        if wrap is None or self._not_nfc([text]):
            return len(self.encode_ids(text, allowed_special=allowed_special, disallowed_special=disallowed_special))
        try:
            count = self._encoder.count_tokens(text, policy)
        except UnicodeEncodeError:
            count = self._encoder.count_tokens(replace_surrogates(text), policy)
        return count + wrap

    def count_tokens_batch(self, texts: Iterable[str], *, threads: Optional[int] = None,
                           allowed_special: SpecialSet = (), disallowed_special: SpecialSet = "all") -> List[int]:
        """:meth:`count_tokens` of each text, on ``threads`` threads (default: all cores) with the
        GIL released; equal to ``[len(ids) for ids in encode_batch_ids(texts, ...)]``.

        Example:
            >>> tok.count_tokens_batch(["hello world", "词元"])           # doctest: +SKIP
            [2, 2]
        """
        texts = list(texts)
        policy = self._policy(allowed_special, disallowed_special)
        wrap = self._countable()
        native = (self._nfc_for_ids(texts) if wrap is not None and all(isinstance(t, str) for t in texts)
                  else None)
        if native is None:
            return [len(ids) for ids in self.encode_batch_ids(texts, threads=threads, allowed_special=allowed_special,
                                                              disallowed_special=disallowed_special)]
        n = self._threads(threads)
        try:
            counts = self._encoder.count_tokens_batch(native, policy, n)
        except UnicodeEncodeError:
            counts = self._encoder.count_tokens_batch([replace_surrogates(t) for t in native], policy, n)
        return [c + wrap for c in counts] if wrap else cast(List[int], counts)

    def _countable(self) -> Optional[int]:
        """How many ids a template adds around each text when the native encoder can count
        a text's tokens alone (no Python stages, sampling, truncation or padding), else None."""
        if not self._native_path or self._always_sampling is not None or self.truncation is not None \
                or self.padding is not None:
            return None
        if self.post_processor is None:
            return 0
        wrap = self._single_template()
        return None if wrap is None else len(wrap[0]) + len(wrap[1])

    def _not_nfc(self, texts: List[Any]) -> List[int]:
        """Under the NFC gate (see _build): the indices of the str texts that NFC changes, which
        the native encoder (running without the normalizer) must not be given as they are; []
        without the gate."""
        if not self._nfc_gate:
            return []
        # NFC leaves ASCII as it is, and a str says whether it is ASCII in O(1): the non-ASCII ones
        # are picked out by C-level iteration (a Python loop over every text costs ~150 ns each).
        try:
            candidates = list(compress(range(len(texts)), map(not_, map(str.isascii, texts))))
        except TypeError:  # an item that is not a str (a pair's tuple)
            candidates = [i for i, t in enumerate(texts) if isinstance(t, str) and not t.isascii()]
        return [i for i in candidates if not hf_unchanged(texts[i], "NFC")]

    def _nfc_for_ids(self, texts: List[Any]) -> Optional[List[Any]]:
        """``texts`` for the native encoder's ids: under the NFC gate, each text NFC changes in
        its NFC form, which gives the Python stages' ids; None when such a text holds a special
        or added token's text (before or after normalizing): Hugging Face finds those before
        normalizing, so it takes the Python stages."""
        not_nfc = self._not_nfc(texts)
        if not not_nfc:
            return texts
        out = list(texts)
        normalize = cast(Normalizer, self.normalizer).normalize_str
        for i in not_nfc:
            normalized = normalize(texts[i])
            if any(t in texts[i] or t in normalized for t in self._token_texts):
                return None
            out[i] = normalized
        return out

    def _encode_batch_ids(self, inputs: List[Any], add_special_tokens: bool, threads: Optional[int],
                          allowed_special: SpecialSet, disallowed_special: SpecialSet,
                          sampling: Optional[_Sampling]) -> List[List[int]]:
        wrap = self._single_template() if add_special_tokens else ([], [])
        if self.truncation is None and self.padding is None and wrap is not None:
            head, tail = wrap
            texts = self._nfc_for_ids(inputs) if self._native_path else None
            if texts is not None:
                # The native batch checks that every input is a str as it reads them (a Python
                # scan first would cost a few percent of a batch of short lines).
                try:
                    return self._native_batch(cast(List[str], texts), threads, allowed_special, disallowed_special,
                                              ids_only=True, wrap=(head, tail), sampling=sampling)[1]
                except TypeError:
                    if all(isinstance(t, str) for t in inputs):
                        raise
            elif not self._native_path and all(isinstance(t, str) for t in inputs):
                policy = self._policy(allowed_special, disallowed_special)
                return [head + self._encode_python(t, policy, sampling, i).ids + tail
                        for i, t in enumerate(cast(List[str], inputs))]
        # Pairs, truncation, padding or a processor that does more than wrap each text.
        return [e.ids for e in self._encode_batch(inputs, add_special_tokens, threads, allowed_special,
                                                  disallowed_special, sampling)]

    def _single_template(self) -> Optional[Tuple[List[int], List[int]]]:
        """(ids before, ids after) the text that the post-processor adds to a single text, or
        None when it does anything else."""
        if self.post_processor is None:
            return [], []
        wrap = self.post_processor.single_wrapper(True)
        if wrap is None:
            return None
        native_wrap = NativeWrap.of(*wrap)
        return native_wrap.head_ids, native_wrap.tail_ids

    def _native_batch(self, texts: Iterable[str], threads: Optional[int], allowed_special: SpecialSet,
                      disallowed_special: SpecialSet, ids_only: bool,
                      wrap: Tuple[List[int], List[int]] = ([], []),
                      sampling: Optional[_Sampling] = None) -> Tuple[List[str], Any]:
        """(texts, native results), or (texts, None) when the pipeline has Python stages. Ids come
        with ``wrap``'s ids before and after each text's."""
        texts = list(texts)
        policy = self._policy(allowed_special, disallowed_special)
        if not self._native_path:
            return texts, None
        n = self._threads(threads)
        encoder = self._encoder
        if sampling is not None:
            options, seed = sampling.options, sampling.seed
            if ids_only:
                run = lambda ts: encoder.encode_sampled_batch_ids(ts, policy, options, seed, n, *wrap)  # noqa: E731
            else:
                run = lambda ts: encoder.encode_sampled_batch(ts, policy, options, seed, n)  # noqa: E731
        elif ids_only:
            run = lambda ts: encoder.encode_batch_ids(ts, policy, n, *wrap)  # noqa: E731
        else:
            run = lambda ts: encoder.encode_batch(ts, policy, n)  # noqa: E731
        try:
            return texts, run(texts)
        except UnicodeEncodeError:
            texts = [replace_surrogates(t) for t in texts]
            return texts, run(texts)

    @staticmethod
    def _threads(threads: Optional[int]) -> int:
        checked = check_count(threads, "threads", least=1, allow_none=True)
        return 0 if checked is None else checked

    def _pieces_python(self, text: str, policy: bytes) -> Iterator[Tuple[int, int, Any, Optional[NormalizedString],
                                                                          List[Tuple[int, int]]]]:
        """The Python stages over one text: per segment (start, end, special id or None, its
        normalized form, the byte spans of its pieces in the normalized text)."""
        for start, end, special in self._specials.segments(text, policy):
            if special is not None or start == end:
                yield start, end, special, None, []
                continue
            if self._raw_added is None:
                yield from self._normalized_pieces(text, start, end)
                continue
            for a, b, added in find_added(text[start:end], *self._raw_added):
                if added is not None:  # the text it matched comes as its "normalized" form
                    yield start + a, start + b, added, NormalizedString.from_str(text[start + a:start + b]), []
                elif a < b:
                    yield from self._normalized_pieces(text, start + a, start + b)

    def _normalized_pieces(self, text: str, start: int, end: int) -> Iterator[Tuple[int, int, Any,
                                                                                     Optional[NormalizedString],
                                                                                     List[Tuple[int, int]]]]:
        """The ordinary text ``text[start:end]`` normalized, cut at the added tokens that match
        normalized text, and pre-tokenized (as :meth:`_pieces_python` yields them)."""
        norm = NormalizedString.from_str(text[start:end])
        if self.normalizer is not None:
            norm = self.normalizer.normalize(norm)
        parts = ([(0, len(norm.text), None)] if self._norm_added is None
                 else find_added(norm.text, *self._norm_added))
        for a, b, added in parts:
            if added is not None:
                os_, oe = norm.original_span(a, b)
                yield start + os_, start + oe, added, NormalizedString.from_str(norm.text[a:b]), []
                continue
            piece = norm if len(parts) == 1 else norm.slice(a, b)
            if isinstance(self.pre_tokenizer, PreTokenizer):  # may rewrite the text (Metaspace), aligned
                at = start + piece.original_span(0, len(piece.text))[0]
                piece, spans = self.pre_tokenizer.pre_tokenize(piece, at)
            elif self.pre_tokenizer is not None:  # any object with split()
                spans = self.pre_tokenizer.split(piece.text)
            else:
                spans = [(0, len(piece.text))] if piece.text or len(parts) == 1 else []
            byte_at = _byte_offsets(piece.text)
            yield start, end, None, piece, [(byte_at[s], byte_at[e]) for s, e in spans]

    def _encode_python(self, text: str, policy: bytes, sampling: Optional[_Sampling] = None,
                       index: int = 0) -> Encoding:
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        text = replace_surrogates(text)
        rng = sampling.rng(index) if sampling is not None else None  # one generator for all the text's pieces
        ids: List[int] = []
        offsets: List[Tuple[int, int]] = []
        stripped: List[Tuple[int, str]] = []  # added tokens whose token is not their content
        for start, end, special, norm, spans in self._pieces_python(text, policy):
            if special is not None:
                # An added token's token is the text it matched (with the whitespace it took,
                # normalized when it matches normalized text), as in Hugging Face.
                if norm is not None and norm.text != self.id_to_token(special):
                    stripped.append((len(ids), norm.text))
                ids.append(special)
                offsets.append((start, end))
                continue
            if norm is None:
                continue
            if sampling is None or rng is None:
                data = self._encoder.encode_spans(norm.text, spans)
            else:
                data = self._encoder.encode_spans_sampled(norm.text, spans, sampling.options, rng)
            text_unk = self.model.text_unk_id
            if text_unk is not None and text_unk in data.ids:  # HF's Unigram: the unknown token is its text
                for k, (i, (s, e)) in enumerate(zip(data.ids, data.char_offsets(norm.text))):
                    if i == text_unk:
                        stripped.append((len(ids) + k, norm.text[s:e]))
            ids.extend(data.ids)
            offsets.extend(_original_offsets(data, norm, start))
        return self._encoding_with_texts(ids, offsets, stripped)

    def _encoding_with_texts(self, ids: List[int], offsets: List[Tuple[int, int]],
                             texts: List[Tuple[int, str]]) -> Encoding:
        """An Encoding whose tokens at the given positions are the texts matched there (an added
        token found with its whitespace or normalized, HF's Unigram unknown) instead of the
        vocabulary's spelling."""
        if not texts:
            return Encoding(self, ids=ids, offsets=offsets)
        tokens = [self.id_to_token(i) for i in ids]
        for at, token in texts:
            tokens[at] = token
        return Encoding(self, ids=ids, offsets=offsets, tokens=tokens)

    def nbest(
        self,
        text: str,
        k: int,
        *,
        allowed_special: SpecialSet = (),
        disallowed_special: SpecialSet = "all",
    ) -> List[Tuple[Encoding, float]]:
        """The ``k`` best segmentations of ``text`` by the model's score, best first, each with
        its score (for Unigram models: the sum of its pieces' log probabilities), as
        sentencepiece's ``nbest_encode``. Fewer come back when the text has fewer.

        The model's segmentations only: no post-processing, truncation or padding. The text
        must be one piece for the model - a tokenizer without a pre-tokenizer (SentencePiece's)
        and no special token inside - else :class:`~ciyuan.errors.ModelError`; so does a model
        without n-best segmentations (BPE, WordPiece, WordLevel). ``k`` must be a positive integer.

        Example:
            >>> [(e.tokens, round(s, 2)) for e, s in sp.nbest("hello", 2)]  # doctest: +SKIP
            [(['▁hello'], -8.07), (['▁hell', 'o'], -13.41)]
        """
        if not self.model.has_nbest:
            raise ModelError(f"{type(self.model).__name__} models have one segmentation per text; "
                             "n-best segmentations need a Unigram model")
        k = check_count(k, "k", least=1)
        policy = self._policy(allowed_special, disallowed_special)
        if not self._native_path or self._not_nfc([text]):
            return self._nbest_python(text, policy, k)
        try:
            results = self._encoder.encode_nbest(text, policy, k)
        except UnicodeEncodeError:
            text = replace_surrogates(text)
            results = self._encoder.encode_nbest(text, policy, k)
        from_native = Encoding._from_native
        return [(from_native(self, data, text), score) for data, score in results]

    def _nbest_python(self, text: str, policy: bytes, k: int) -> List[Tuple[Encoding, float]]:
        if not isinstance(text, str):
            raise TypeError(f"expected str, got {type(text).__name__}")
        text = replace_surrogates(text)
        pieces: List[Tuple[int, NormalizedString, Tuple[int, int]]] = []
        for start, _end, special, norm, spans in self._pieces_python(text, policy):
            if special is not None:
                raise ModelError(f"n-best segmentations are of ordinary text, and this text holds the special "
                                 f"token {self._special_ids[special]!r}; encode its parts apart, or leave it out "
                                 "of allowed_special")
            if norm is not None:
                pieces.extend((start, norm, span) for span in spans)
        if len(pieces) > 1:
            raise ModelError("n-best segmentations are of a text that is one piece, but the pre-tokenizer cut "
                             "this text into several; use a tokenizer without a pre-tokenizer (SentencePiece's), "
                             "or ask for the n best of each piece")
        if not pieces:
            return [(Encoding(self, ids=[], offsets=[]), 0.0)]
        start, norm, span = pieces[0]
        return [(Encoding(self, ids=data.ids, offsets=_original_offsets(data, norm, start)), score)
                for data, score in self._encoder.nbest_span(norm.text, span, k)]

    def tokenize(self, text: str, **special: Any) -> List[str]:
        """The tokens of ``text`` as strings (byte-level tokens in GPT-2's printable form).

        Example:
            >>> tok.tokenize("hello world")                               # doctest: +SKIP
            ['hello', 'Ġworld']
        """
        return self.encode(text, **special).tokens

    # -- truncation and padding ----------------------------------------------------------------

    def enable_truncation(self, max_length: int, *, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        """Cut encodings to ``max_length`` tokens (special tokens included); what is cut off
        becomes ``overflowing`` windows that overlap by ``stride`` tokens.

        Args:
            strategy: for pairs, ``"longest_first"`` (take from the longer text first),
                ``"only_first"`` or ``"only_second"``.
            direction: ``"right"`` keeps the start of the text, ``"left"`` its end.

        Example:
            >>> bert.enable_truncation(512, stride=128)                   # doctest: +SKIP
        """
        truncation = Truncation(max_length, stride=stride, strategy=strategy, direction=direction)
        if self.post_processor is not None:
            truncation.check(self.post_processor.num_special_tokens_to_add(False))
        self.truncation = truncation

    def no_truncation(self) -> None:
        """Stop truncating."""
        self.truncation = None

    def enable_padding(self, *, length: Optional[int] = None, pad_to_multiple_of: Optional[int] = None,
                       direction: str = "right", pad_id: Optional[int] = None, pad_type_id: int = 0,
                       pad_token: Optional[str] = None) -> None:
        """Pad encodings: to ``length``, or (``length=None``) to the longest of each batch; then
        up to a multiple of ``pad_to_multiple_of``. Padding has attention mask 0.

        The padding token defaults to ``"[PAD]"``; give ``pad_token`` or ``pad_id`` (the other
        is looked up) for another one.

        Example:
            >>> bert.enable_padding(pad_to_multiple_of=8)                 # doctest: +SKIP
        """
        if pad_id is None:
            pad_token = pad_token if pad_token is not None else "[PAD]"
            pad_id = self.token_to_id(pad_token)
            if pad_id is None:
                raise InvalidInputError(f"the padding token {pad_token!r} is not in the vocabulary; pass "
                                        "pad_token= (a token of the vocabulary) or pad_id=")
        elif pad_token is None:
            try:
                pad_token = self.id_to_token(pad_id)
            except UnknownIdError:
                pad_token = "[PAD]"
        self.padding = Padding(length=length, pad_to_multiple_of=pad_to_multiple_of, direction=direction,
                               pad_id=pad_id, pad_type_id=pad_type_id, pad_token=pad_token)

    def no_padding(self) -> None:
        """Stop padding."""
        self.padding = None

    # -- decoding ------------------------------------------------------------------------------

    def _id_decoder(self) -> Any:
        """The native table of every id's bytes (built on first use, again after the encoder
        changes: :meth:`add_tokens`)."""
        encoder = self._encoder
        cached = self.__dict__.get("_id_decoder_cache")
        if cached is not None and cached[0] is encoder:
            return cached[1]
        extra = [*self._special_ids, *self._added_texts]
        model_limit = self.model.id_limit
        limit = max(model_limit, max(extra) + 1 if extra else 0)
        # Special ids just past the model's (tiktoken's) go in the table; an id far beyond it
        # (up to 2**32 - 1) is looked up on its own rather than making the table that long.
        table_limit = limit if limit <= model_limit + (1 << 16) else model_limit
        table = _core.IdDecoder(encoder, table_limit, limit, sorted(self._skipped_ids))
        self.__dict__["_id_decoder_cache"] = (encoder, table)
        return table

    def decode_bytes(self, ids: IdSequence) -> bytes:
        """The exact bytes of the tokens (no UTF-8 decoding).

        ``ids`` may be a list or tuple of ints, or any one-dimensional buffer of integers (a
        numpy array of any integer dtype, ``array.array``, ``memoryview``): buffers are read
        natively, without a Python int per id.

        Raises :class:`~ciyuan.errors.UnknownIdError` (naming the position) for an id outside
        the vocabulary, negative ones included, and ``TypeError`` for items that are not
        integers (floats, bools, a float array).

        Example:
            >>> tok.decode_bytes([15339, 1917])                           # doctest: +SKIP
            b'hello world'
            >>> tok.decode_bytes(numpy.array([15339, 1917]))              # doctest: +SKIP
            b'hello world'
        """
        return cast(bytes, self._id_decoder().decode_bytes(ids))

    def decode_bytes_batch(self, batch: Iterable[IdSequence], *, threads: Optional[int] = None) -> List[bytes]:
        """:meth:`decode_bytes` of each sequence, on ``threads`` threads (default: all cores) with
        the GIL released. An error names the sequence and the position.

        Example:
            >>> tok.decode_bytes_batch([[15339], [1917]])                 # doctest: +SKIP
            [b'hello', b' world']
        """
        batch = batch if isinstance(batch, (list, tuple)) else list(batch)
        return cast(List[bytes], self._id_decoder().decode_bytes_batch(batch, False, self._threads(threads)))

    def decode(self, ids: IdSequence, *, skip_special_tokens: bool = False) -> str:
        """Turn ids back into text; ``decode(encode(x).ids) == x`` for every ``x``.

        ``ids``: a list or tuple of ints, or an integer buffer (numpy array, ``array.array``),
        as for :meth:`decode_bytes`. Raises :class:`~ciyuan.errors.UnknownIdError` for ids
        outside the vocabulary.

        Example:
            >>> tok.decode([15339, 1917])                                 # doctest: +SKIP
            'hello world'
        """
        table = self._id_decoder()
        skip = skip_special_tokens and bool(self._skipped_ids)
        if self.decoder.joins_bytes:
            return self.decoder.decode([table.decode_bytes(ids, skip)])
        return self._decode_tokens(table, ids, skip)

    def _decode_tokens(self, table: Any, ids: IdSequence, skip: bool) -> str:
        """decode with a decoder that reads each token (bytes or token strings)."""
        checked: List[int] = table.id_list(ids)
        if skip:
            checked = [i for i in checked if i not in self._skipped_ids]
        table.decode_bytes(checked)  # validates every id with a clear error
        if self.decoder.reads_tokens:  # Hugging Face's decoders read token strings (kept by id)
            return self.decoder.decode_tokens(self._token_table.strings(self.id_to_token, checked))
        # cast: the ids are valid now, so none has None for bytes.
        return self.decoder.decode(cast(List[bytes], [self._encoder.id_bytes(i) for i in checked]))

    def decode_batch(self, batch: Iterable[IdSequence], *, skip_special_tokens: bool = False,
                     threads: Optional[int] = None) -> List[str]:
        """:meth:`decode` for each sequence of ids; the tokens' bytes are joined on ``threads``
        threads (default: all cores) with the GIL released.

        Example:
            >>> tok.decode_batch([[15339], [1917]])                       # doctest: +SKIP
            ['hello', ' world']
        """
        table = self._id_decoder()
        skip = skip_special_tokens and bool(self._skipped_ids)
        batch = batch if isinstance(batch, (list, tuple)) else list(batch)
        if self.decoder.joins_bytes:
            decode = self.decoder.decode
            return [decode([b]) for b in table.decode_bytes_batch(batch, skip, self._threads(threads))]
        return [self._decode_tokens(table, ids, skip) for ids in batch]

    # -- vocabulary ----------------------------------------------------------------------------

    def token_to_id(self, token: str) -> Optional[int]:
        """The id of a token (special and added tokens included), or None."""
        if token in self.special_tokens:
            return self.special_tokens[token]
        added = self._added_by_text.get(token)
        if added is not None:
            return added[0]
        return self.model.token_to_id(token)

    def id_to_token(self, token_id: int) -> str:
        """The token of an id (special tokens included); raises UnknownIdError."""
        special = self._special_ids.get(token_id)
        if special is not None:
            return special
        added = self._added_texts.get(token_id)
        if added is not None:
            return added
        return self.model.id_to_token(token_id)

    @property
    def vocab_size(self) -> int:
        """Number of distinct tokens, special and added tokens included."""
        extra = sum(1 for i in {*self._special_ids, *self.added_tokens} if self.model.id_bytes(i) is None)
        return self.model.vocab_size + extra

    def get_vocab(self) -> Dict[str, int]:
        """token -> id for every token, special tokens included."""
        vocab = self.model.get_vocab()
        vocab.update(self.special_tokens)
        vocab.update({t.content: i for i, t in self.added_tokens.items()})
        return vocab

    def add_tokens(self, tokens: Iterable[Union[str, AddedToken]]) -> int:
        """Add tokens to the vocabulary, as Hugging Face's ``add_tokens``: each is found in any
        input before the model runs and becomes its own id (see
        :class:`~ciyuan.special_tokens.AddedToken` for the flags; a ``str`` is
        ``AddedToken(text)``, matched on normalized text). A token the vocabulary already has
        keeps its id; a new one gets the next free id. Returns how many were new.

        Example:
            >>> from ciyuan.models import WordLevel
            >>> tok = Tokenizer(WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
            >>> tok.add_tokens(["hello", AddedToken("<x>", lstrip=True)])
            2
            >>> tok.encode("a <x>hello").ids
            [0, 3, 2]
        """
        return self._add(tokens, special=False)

    def add_special_tokens(self, tokens: Iterable[Union[str, AddedToken]]) -> int:
        """:meth:`add_tokens` for special tokens (``special=True``; a ``str`` is matched on the
        input as given): ``decode(..., skip_special_tokens=True)`` leaves them out.

        Example:
            >>> from ciyuan.models import WordLevel
            >>> tok = Tokenizer(WordLevel({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
            >>> tok.add_special_tokens(["<s>"])
            1
            >>> tok.decode(tok.encode("<s>a").ids, skip_special_tokens=True)
            'a'
        """
        return self._add(tokens, special=True)

    def _add(self, tokens: Iterable[Union[str, AddedToken]], special: bool) -> int:
        new = 0
        added = dict(self.added_tokens)
        by_text = {t.content: i for i, t in added.items()}
        for token in tokens:
            if isinstance(token, str):
                token = AddedToken(token, special=special)
            elif not isinstance(token, AddedToken):
                raise InvalidInputError(f"tokens must be str or AddedToken, not {type(token).__name__}")
            elif special and not token.special:
                token = AddedToken(token.content, token.single_word, token.lstrip, token.rstrip, token.normalized,
                                   special=True)
            if token.content in self.special_tokens:
                continue
            token_id = by_text.get(token.content)
            if token_id is None:
                token_id = self.model.token_to_id(token.content)
            if token_id is None:
                used = [*added, *self._special_ids]
                token_id = max(self.model.id_limit, max(used) + 1 if used else 0)
                new += 1
            elif token_id not in added:
                new += 1
            added[token_id] = token
            by_text[token.content] = token_id
        previous = self.added_tokens
        self.added_tokens = dict(sorted(added.items()))
        try:
            self._build()
        except CiyuanError:
            self.added_tokens = previous
            self._build()
            raise
        return new

    # -- persistence ---------------------------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """The whole pipeline as plain data (every component with its ``"type"``)."""
        return {
            "ciyuan": FORMAT_VERSION,
            "type": "Tokenizer",
            "normalizer": self.normalizer.to_dict() if self.normalizer else None,
            "pre_tokenizer": self.pre_tokenizer.to_dict() if self.pre_tokenizer else None,
            "post_processor": self.post_processor.to_dict() if self.post_processor else None,
            "truncation": self.truncation.to_dict() if self.truncation else None,
            "padding": self.padding.to_dict() if self.padding else None,
            "model": self.model.to_dict(),
            "decoder": self.decoder.to_dict(),
            "special_tokens": dict(self.special_tokens),
            **({"added_tokens": [t.to_dict(i) for i, t in self.added_tokens.items()]} if self.added_tokens else {}),
        }

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Tokenizer":
        if not isinstance(data, dict) or data.get("type") != "Tokenizer":
            raise ModelError("not a ciyuan tokenizer description (its 'type' is not 'Tokenizer')")
        version = data.get("ciyuan")
        if version != FORMAT_VERSION:
            raise ModelError(f"unsupported ciyuan tokenizer format version {version!r} "
                             f"(this ciyuan reads {FORMAT_VERSION})")
        return cls(
            models.from_dict(data["model"]),
            normalizer=normalizers.from_dict(data["normalizer"]) if data.get("normalizer") else None,
            pre_tokenizer=pre_tokenizers.from_dict(data["pre_tokenizer"]) if data.get("pre_tokenizer") else None,
            post_processor=processors.from_dict(data["post_processor"]) if data.get("post_processor") else None,
            truncation=Truncation.from_dict(data["truncation"]) if data.get("truncation") else None,
            padding=Padding.from_dict(data["padding"]) if data.get("padding") else None,
            decoder=decoders.from_dict(data["decoder"]) if data.get("decoder") else None,
            special_tokens=data.get("special_tokens") or {},
            added_tokens=added_tokens_from_list(data.get("added_tokens") or []),
        )

    def save(self, path: PathLike, *, indent: Optional[int] = None, format: Optional[str] = None) -> None:
        """Write the tokenizer (atomically) as ciyuan JSON; a file named ``tokenizer.json`` as
        Hugging Face's (:func:`~ciyuan.formats.hf_json.save_hf_json`, which ``tokenizers`` and
        ``transformers`` load); a path ending in ``.model`` as a SentencePiece model
        (:func:`~ciyuan.formats.sentencepiece.save_sentencepiece`). ``format`` (``"ciyuan"``,
        ``"huggingface"`` or ``"sentencepiece"``) overrides the name.

        Raises:
            ModelError: the format cannot hold a component of this tokenizer (named).

        Example:
            >>> Tokenizer.from_file("llama2.model").save("copy.model")   # doctest: +SKIP
            >>> tok.save("my-model/tokenizer.json")                       # doctest: +SKIP
        """
        if format is None:
            name = os.path.basename(str(path))
            format = ("sentencepiece" if name.endswith(".model")
                      else "huggingface" if name == "tokenizer.json" else "ciyuan")
        if format == "sentencepiece":
            save_sentencepiece(self, path)
        elif format == "huggingface":
            save_hf_json(self, path, indent=indent)
        elif format == "ciyuan":
            atomic_write_text(path, json.dumps(self.to_dict(), ensure_ascii=False, indent=indent))
        else:
            raise InvalidInputError(f"format must be 'ciyuan', 'huggingface' or 'sentencepiece', not {format!r}")

    @classmethod
    def from_file(cls, path: PathLike) -> "Tokenizer":
        """Load a tokenizer saved by :meth:`save`: ciyuan JSON, Hugging Face's
        ``tokenizer.json`` or a SentencePiece ``.model`` file (told by their content).

        Example:
            >>> Tokenizer.from_file("llama2.model").encode("Hello").tokens   # doctest: +SKIP
            ['▁Hello']
            >>> Tokenizer.from_file("gpt2/tokenizer.json").encode("Hello world").ids   # doctest: +SKIP
            [15496, 995]
        """
        if str(path).endswith(".model") or looks_like_sentencepiece(path):
            return cls(**sentencepiece_parts(path))
        try:
            with open(path, "rb") as f:
                head = f.read(4096)
        except OSError as e:
            raise FileFormatError(str(path), None, f"cannot read the file: {e.strerror}") from None
        if looks_like_hf_json(head):
            return cls._from_hf_json(path)
        text = read_utf8(path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise FileFormatError(str(path), e.lineno, f"not valid JSON: {e.msg}") from None
        except RecursionError:  # [[[[...: json recurses once per level
            raise FileFormatError(str(path), None, "JSON nested too deeply") from None
        if isinstance(data, dict) and "ciyuan" not in data and isinstance(data.get("model"), dict):
            return cls._from_hf_json(path)  # a tokenizer.json whose first keys did not tell
        try:
            return cls.from_dict(data)
        except FileFormatError:
            raise
        except (CiyuanError, KeyError, TypeError, ValueError) as e:
            raise FileFormatError(str(path), None, f"not a valid ciyuan tokenizer: {e}") from None

    @classmethod
    def _from_hf_json(cls, path: PathLike) -> "Tokenizer":
        with _gc_paused():  # hundreds of thousands of strings and tuples, none in cycles
            parts = read_hf_json(path)
        try:
            return cls(**parts)
        except FileFormatError:
            raise
        except CiyuanError as e:
            raise FileFormatError(str(path), None, str(e)) from None

    # -- training ------------------------------------------------------------------------------

    @classmethod
    def train(
        cls,
        source: Any,
        trainer: Any = None,
        *,
        pre_tokenizer: Optional[Any] = "default",
        normalizer: Optional[Normalizer] = None,
        decoder: Optional[Decoder] = None,
        errors: str = "strict",
    ) -> "Tokenizer":
        """Train a model on ``source`` and return a new tokenizer that uses it.

        Args:
            source: a file path, a list of paths, an iterable of texts, or ``{word: count}``.
            trainer: e.g. :class:`ciyuan.trainers.BpeTrainer` (default options if None).
            pre_tokenizer: how to split text into words; by default the trainer's choice
                (:meth:`ciyuan.trainers.Trainer.default_pipeline`): ``Split("gpt2")`` for
                byte-level BPE, BERT's stages for WordPiece, else ``WordPunct()`` (Hugging
                Face's ``Whitespace``). Any object with ``split(text) -> [(start, end)]`` works;
                None makes each text (each line of a file) one word.
            normalizer: optional normalizer applied before splitting.
            decoder: default: what the model needs (``ByteLevel``, ``BPESuffix``, ...).
            errors: invalid UTF-8 in files: ``"strict"`` (error naming file and byte) or ``"replace"``.

        Example:
            >>> from ciyuan import Tokenizer
            >>> from ciyuan.trainers import BpeTrainer
            >>> tok = Tokenizer.train("corpus.txt", BpeTrainer(vocab_size=32000, byte_level=True))  # doctest: +SKIP
            >>> tok.save("tok.json")                                                                 # doctest: +SKIP
        """
        from ciyuan.training import train_tokenizer

        return train_tokenizer(cls, source, trainer, pre_tokenizer=pre_tokenizer, normalizer=normalizer,
                               decoder=decoder, errors=errors)

    def train_model(
        self,
        source: Any,
        trainer: Any = None,
        *,
        pre_tokenizer: Optional[Any] = "default",
        normalizer: Optional[Normalizer] = None,
        decoder: Optional[Decoder] = None,
        errors: str = "strict",
    ) -> "Tokenizer":
        """Train a new model on ``source`` in place of this tokenizer's, and return this tokenizer.

        The words are cut as this tokenizer cuts them: its normalizer and pre-tokenizer are kept
        (unless given here), and so are its post-processor, truncation and padding. The model,
        the special tokens (those of the trainer the new model holds) and the decoder (unless
        given) are replaced. Arguments as for :meth:`train`.

        Example:
            >>> from ciyuan import Tokenizer
            >>> from ciyuan.trainers import BpeTrainer
            >>> tok = Tokenizer.train(["hello world"] * 3, BpeTrainer(300, byte_level=True))
            >>> tok = tok.train_model(["other words"] * 3, BpeTrainer(260, byte_level=True))
            >>> tok.pre_tokenizer.native_pattern, tok.vocab_size
            ('gpt2', 260)
        """
        from ciyuan.training import train_model

        return train_model(self, source, trainer, pre_tokenizer=pre_tokenizer, normalizer=normalizer,
                           decoder=decoder, errors=errors)

    def as_tiktoken(self, name: Optional[str] = None) -> "TiktokenEncoding":
        """This tokenizer behind ``tiktoken.Encoding``'s API (``encode``, ``encode_ordinary``,
        ``encode_batch``, ``decode``, ``decode_single_token_bytes``, ``n_vocab``,
        ``special_tokens_set``, ``eot_token`` ...), with the same ids and the same errors, so
        that code written for tiktoken switches by one line.

        Args:
            name: the encoding's name (default: the pattern's name, e.g. ``"cl100k_base"``).

        Example:
            >>> enc = Tokenizer.from_tiktoken("cl100k_base.tiktoken").as_tiktoken()   # doctest: +SKIP
            >>> enc.encode("hello world"), enc.n_vocab                                 # doctest: +SKIP
            ([15339, 1917], 100277)
        """
        from ciyuan.faces.tiktoken import TiktokenEncoding

        return TiktokenEncoding(self, name)

    @classmethod
    def from_tiktoken(
        cls,
        path: PathLike,
        pattern: Optional[str] = None,
        special_tokens: Optional[Mapping[str, int]] = None,
    ) -> "Tokenizer":
        """Load a ``.tiktoken`` file (``base64(token) rank`` per line), as tiktoken encodes with it.

        Args:
            path: the ``.tiktoken`` file (or Llama 3's ``tokenizer.model``).
            pattern: an encoding's name: ``"gpt2"``, ``"r50k_base"``, ``"p50k_base"``,
                ``"cl100k_base"``, ``"o200k_base"`` or ``"llama3"`` (its pattern and special
                tokens); or a regular expression for the ``regex`` module; or None (default):
                the file's own encoding, recognised by its content (rank count and sha256).
            special_tokens: text -> id; defaults to the named encoding's special tokens
                (none with a regular expression). ``{}`` for none.

        Raises:
            InvalidInputError: no pattern and a file of no known encoding (the message lists
                the names), an unknown name, or an invalid regular expression.
            ModelError: the special tokens use ids the file gives to ranks (the message says to
                pass ``special_tokens={}`` or the model's own).

        Example:
            >>> tok = Tokenizer.from_tiktoken("o200k_base.tiktoken")                 # doctest: +SKIP
            >>> tok = Tokenizer.from_tiktoken("Meta-Llama-3-8B/tokenizer.model", "llama3")  # doctest: +SKIP
            >>> tok.special_tokens["<|eot_id|>"]                                      # doctest: +SKIP
            128009
        """
        return cls(**tiktoken_parts(path, pattern, special_tokens))

    @classmethod
    def from_gpt2(cls, encoder_json: PathLike, vocab_bpe: PathLike) -> "Tokenizer":
        """Load OpenAI's GPT-2 files (``encoder.json`` and ``vocab.bpe``)."""
        return cls(**gpt2_parts(encoder_json, vocab_bpe))

    @classmethod
    def from_bert_vocab(cls, path: PathLike, lowercase: bool = True, **options: Any) -> "Tokenizer":
        """The whole BERT pipeline from a ``vocab.txt``, as Hugging Face's
        ``BertWordPieceTokenizer`` builds it: BERT normalizer (clean-up, CJK characters apart,
        lowercase and accent stripping if ``lowercase``), BERT pre-tokenizer, WordPiece,
        ``[CLS] $A [SEP] $B [SEP]`` post-processing and the WordPiece decoder.

        The special tokens the vocabulary holds are special tokens of the tokenizer (in input
        text they follow ``allowed_special`` / ``disallowed_special``, see :meth:`encode`).

        Args:
            path: the ``vocab.txt``.
            lowercase: lowercase (and, unless ``strip_accents`` says otherwise, strip accents):
                True for uncased vocabularies, False for cased ones.
            options: keyword arguments of
                :func:`~ciyuan.formats.bert_vocab.bert_vocab_parts`, as Hugging Face names them:
                ``strip_accents``, ``clean_text``, ``handle_chinese_chars``, ``unk_token``,
                ``sep_token``, ``cls_token``, ``pad_token``, ``mask_token``,
                ``wordpieces_prefix``, ``max_input_chars_per_word``.

        Example:
            >>> bert = Tokenizer.from_bert_vocab("bert-base-uncased-vocab.txt")     # doctest: +SKIP
            >>> bert.encode("Hello, world!").tokens                                  # doctest: +SKIP
            ['[CLS]', 'hello', ',', 'world', '!', '[SEP]']
        """
        return cls(**bert_vocab_parts(path, lowercase, **options))

    @classmethod
    def from_pretrained(cls, path: PathLike, **options: Any) -> "Tokenizer":
        """Load the tokenizer of a model folder on disk, as ``transformers``'
        ``AutoTokenizer.from_pretrained`` reads it (ciyuan never downloads: pass a local folder).

        The folder's ``tokenizer.json`` is used when there is one; else ``tokenizer.model``
        (SentencePiece, or a tiktoken file as Llama 3 ships it), ``vocab.json`` + ``merges.txt``
        (GPT-2, RoBERTa) or ``vocab.txt`` (BERT). ``tokenizer_config.json`` and
        ``special_tokens_map.json`` give the special tokens (recognised in input text, as
        ``transformers`` does) and the tokens added around a text (``add_bos_token``,
        ``add_eos_token``, the BERT / RoBERTa / T5 templates).

        Args:
            path: the folder.
            options: for a tiktoken ``tokenizer.model``, ``pattern`` and ``special_tokens``
                as :meth:`from_tiktoken` takes them.

        Raises:
            FileFormatError: not a folder (a Hub id says so), no tokenizer file in it, or a
                corrupt file.

        Example:
            >>> tok = Tokenizer.from_pretrained("models/Llama-2-7b-hf")         # doctest: +SKIP
            >>> tok.encode("Hello").ids                                          # doctest: +SKIP
            [1, 15043]
        """
        from ciyuan.pretrained import from_pretrained

        return from_pretrained(cls, path, **options)

    @classmethod
    def load(cls, path: PathLike, pattern: Optional[str] = None, *, lowercase: bool = True) -> "Tokenizer":
        """Load ``path`` as a tokenizer, choosing the reader by what the file is
        (:func:`ciyuan.formats.detect.detect_format`): a ``.tiktoken`` file (split with
        ``pattern``, by default the pattern of the encoding the file is recognised as), GPT-2's
        ``encoder.json`` + ``vocab.bpe`` (or a folder holding both), ciyuan JSON, a BERT
        ``vocab.txt`` (the whole BERT pipeline; ``lowercase=False`` for cased vocabularies), or a
        model folder (:meth:`from_pretrained`).

        Example:
            >>> tok = Tokenizer.load("o200k_base.tiktoken", pattern="o200k_base")   # doctest: +SKIP
        """
        kind, first, second = detect_format(path)
        if kind == "folder":
            return cls.from_pretrained(first, **({"pattern": pattern} if pattern else {}))
        if kind == "gpt2":
            return cls.from_gpt2(first, second)  # type: ignore[arg-type]
        if kind in ("ciyuan", "huggingface", "sentencepiece"):
            return cls.from_file(first)
        if kind == "bert_vocab":
            return cls.from_bert_vocab(first, lowercase=lowercase)
        return cls.from_tiktoken(first, pattern)

    def __repr__(self) -> str:
        return (
            f"Tokenizer(model={self.model!r}, normalizer={self.normalizer!r}, "
            f"pre_tokenizer={self.pre_tokenizer!r}, post_processor={self.post_processor!r}, decoder={self.decoder!r}, "
            f"special_tokens={len(self.special_tokens)})"
        )
