"""SentencePiece ``.model`` files: read one into a tokenizer's parts, write a tokenizer as one.

A ``.model`` file is a protobuf ``ModelProto`` (schema: :mod:`ciyuan.formats.sentencepiece_proto`):
the pieces (text, score, type), the trainer's options and the normalizer's. Reading gives the
SentencePiece pipeline: :class:`~ciyuan.normalizers.SentencePieceNormalizer` (the file's own
precompiled character map and whitespace options, its user-defined pieces), no pre-tokenizer, a
``Unigram`` or ``SentencePieceBPE`` model (by ``trainer_spec.model_type``), the ``SentencePiece``
decoder and no special tokens (sentencepiece never finds ``<s>`` in text). The parsed message is
kept (``sentencepiece_proto``) so that writing the tokenizer back gives the same message, with
whatever ciyuan does not use.

Example:
    >>> parts = sentencepiece_parts("llama2.model")            # doctest: +SKIP
    >>> Tokenizer(**parts).encode("Hello world").tokens         # doctest: +SKIP
    ['▁Hello', '▁world']
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from google.protobuf.message import DecodeError

from ciyuan._io import PathLike, atomic_write_bytes
from ciyuan.decoders.base import DECODERS
from ciyuan.errors import CiyuanError, FileFormatError, ModelError
from ciyuan.formats.sentencepiece_proto import MODEL_TYPES, PIECE_TYPES, ModelProto
from ciyuan.models.base import MODELS
from ciyuan.normalizers.sentencepiece import SentencePieceNormalizer
from ciyuan.normalizers.spm_charsmap import RULES

__all__ = ["load_sentencepiece_proto", "sentencepiece_parts", "proto_parts", "tokenizer_proto", "save_sentencepiece",
           "looks_like_sentencepiece"]

_MODEL_CLASSES = {MODEL_TYPES["UNIGRAM"]: "Unigram", MODEL_TYPES["BPE"]: "SentencePieceBPE"}
_UNKNOWN, _CONTROL, _USER, _BYTE = (PIECE_TYPES[t] for t in ("UNKNOWN", "CONTROL", "USER_DEFINED", "BYTE"))


def _parse(data: bytes, where: str) -> Any:
    proto = ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, ValueError, UnicodeDecodeError) as e:
        raise FileFormatError(where, None, f"not a SentencePiece model (the protobuf is truncated or corrupt: {e}); "
                                           "check that the file was copied whole") from None
    return proto


def load_sentencepiece_proto(path: PathLike) -> Any:
    """The ``ModelProto`` of a ``.model`` file.

    Raises:
        FileFormatError: no such file, or not a valid protobuf ``ModelProto``.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise FileFormatError(str(path), None, f"cannot read it ({e.strerror or e})") from None
    return _parse(data, str(path))


def looks_like_sentencepiece(path: PathLike) -> bool:
    """Whether a file holds a ``ModelProto`` with pieces (by content, whatever its name)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1)
            if head != b"\n":  # field 1 (pieces), length-delimited: how every .model begins
                return False
            proto = ModelProto()
            proto.ParseFromString(head + f.read())
    except (OSError, DecodeError, ValueError, UnicodeDecodeError):
        return False
    return len(proto.pieces) > 0


def _check_pieces(proto: Any, where: str) -> int:
    """Validates the pieces; returns the unknown piece's id."""
    fail = lambda message: FileFormatError(where, None, message)  # noqa: E731
    if not len(proto.pieces):
        raise fail("the model has no pieces")
    seen: Dict[str, int] = {}
    unknown: List[int] = []
    for i, p in enumerate(proto.pieces):
        if not p.piece:
            raise fail(f"piece {i} is empty")
        if p.piece in seen:
            raise fail(f"pieces collide: {p.piece!r} is both id {seen[p.piece]} and id {i}")
        seen[p.piece] = i
        if p.type == _UNKNOWN:
            unknown.append(i)
        if p.type == _BYTE and not _byte_of(p.piece):
            raise fail(f"byte piece {i} is {p.piece!r}, not of the form <0xXX>")
    if len(unknown) != 1:
        raise fail("the model has no unknown piece (type UNKNOWN)" if not unknown else
                   f"the model has {len(unknown)} unknown pieces (ids {unknown[:5]}); it needs exactly one")
    unk = unknown[0]
    spec = proto.trainer_spec
    if spec.HasField("unk_id") and spec.unk_id != unk:
        raise fail(f"trainer_spec.unk_id is {spec.unk_id} but the unknown piece {proto.pieces[unk].piece!r} "
                   f"is id {unk}")
    if spec.byte_fallback:
        for b in range(256):
            i = seen.get(f"<0x{b:02X}>")
            if i is None or proto.pieces[i].type != _BYTE:
                raise fail(f"byte_fallback is on but the byte piece <0x{b:02X}> is missing")
    return unk


def _byte_of(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">") and \
        all(c in "0123456789ABCDEF" for c in piece[3:5])


def proto_parts(proto: Any, where: str = "<ModelProto>") -> Dict[str, Any]:
    """``Tokenizer`` keyword arguments from a parsed ``ModelProto`` (see the module docstring);
    ``where`` names the file in errors."""
    unk = _check_pieces(proto, where)
    spec, norm = proto.trainer_spec, proto.normalizer_spec
    type_name = _MODEL_CLASSES.get(spec.model_type)
    if type_name is None:
        kind = {v: k for k, v in MODEL_TYPES.items()}.get(spec.model_type, str(spec.model_type))
        raise FileFormatError(where, None, f"SentencePiece {kind} models are not supported (only UNIGRAM and BPE)")
    if proto.HasField("denormalizer_spec") and proto.denormalizer_spec.precompiled_charsmap:
        raise FileFormatError(where, None, "denormalization rules (denormalizer_spec) are not supported")
    try:
        model_class = MODELS.get(type_name)
        model = model_class([(p.piece, p.score) for p in proto.pieces], unk_id=unk, byte_fallback=spec.byte_fallback,
                            types=[p.type for p in proto.pieces])
        normalizer = SentencePieceNormalizer(
            norm.name if norm.name in RULES else "identity", charsmap=bytes(norm.precompiled_charsmap),
            add_dummy_prefix=norm.add_dummy_prefix, remove_extra_whitespaces=norm.remove_extra_whitespaces,
            escape_whitespaces=norm.escape_whitespaces, treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix,
            user_defined_symbols=[p.piece for p in proto.pieces if p.type == _USER])
    except FileFormatError:
        raise
    except CiyuanError as e:
        raise FileFormatError(where, None, str(e)) from None
    decoder = DECODERS.from_dict({"type": "SentencePiece", "unk_piece": proto.pieces[unk].piece,
                                  "unk_surface": spec.unk_surface, "add_dummy_prefix": norm.add_dummy_prefix,
                                  "remove_extra_whitespaces": norm.remove_extra_whitespaces})
    return {"model": model, "normalizer": normalizer, "pre_tokenizer": None, "decoder": decoder,
            "special_tokens": {}, "sentencepiece_proto": proto.SerializeToString()}


def sentencepiece_parts(path: PathLike) -> Dict[str, Any]:
    """``Tokenizer`` keyword arguments from a ``.model`` file.

    Raises:
        FileFormatError: the file is missing, truncated or corrupt, its pieces collide, it has no
            (or more than one) unknown piece, a bad ``unk_id``, or an unsupported model type.
    """
    return proto_parts(load_sentencepiece_proto(path), str(path))


def _f32(values: List[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


def _set(message: Any, name: str, value: Any, fresh: bool) -> None:
    """Sets a field when it differs (a message read from a file keeps its fields as they were)."""
    if fresh or getattr(message, name) != value:
        setattr(message, name, value)


def tokenizer_proto(tokenizer: Any, trainer_spec: Optional[Mapping[str, Any]] = None) -> Any:
    """The ``ModelProto`` of a SentencePiece tokenizer (a SentencePieceNormalizer, no
    pre-tokenizer, a Unigram or SentencePieceBPE model); ``trainer_spec``: trainer options to
    record (field names of ``TrainerSpec``). A tokenizer read from a ``.model`` file starts from
    that file's message.

    Raises:
        ModelError: any other tokenizer, or an unknown trainer option.
    """
    model, normalizer = tokenizer.model, tokenizer.normalizer
    type_name = getattr(model, "type_name", "")
    model_type = {v: k for k, v in _MODEL_CLASSES.items()}.get(type_name)
    if model_type is None or not isinstance(normalizer, SentencePieceNormalizer) or \
            tokenizer.pre_tokenizer is not None:
        raise ModelError("only a SentencePiece tokenizer (SentencePieceNormalizer, no pre-tokenizer, a Unigram or "
                         f"SentencePieceBPE model) can be written as a .model file; this one has {type_name or model!r}"
                         f", normalizer {type(normalizer).__name__}, pre-tokenizer "
                         f"{type(tokenizer.pre_tokenizer).__name__}; save it as .json instead")
    pieces: List[str] = list(model.pieces)
    for text, i in tokenizer.special_tokens.items():
        if not (0 <= i < len(pieces) and pieces[i] == text):
            raise ModelError(f"special token {text!r} (id {i}) is not a piece of the model; a .model file has no "
                             "special tokens of its own")
    original = getattr(tokenizer, "sentencepiece_proto", None)
    proto = ModelProto()
    if original:
        proto.ParseFromString(original)
    fresh = not original
    scores = [float(s) for s in model.scores]
    types = [int(t) for t in model.types]
    have = [p.piece for p in proto.pieces], _f32([p.score for p in proto.pieces]), [p.type for p in proto.pieces]
    if have != (pieces, _f32(scores), types):
        del proto.pieces[:]
        for text, score, kind in zip(pieces, scores, types):
            proto.pieces.add(piece=text, score=score, type=kind)
    spec = proto.trainer_spec
    ids = {p: i for i, p in enumerate(pieces)}
    _set(spec, "model_type", model_type, fresh)
    _set(spec, "vocab_size", len(pieces), fresh)
    _set(spec, "byte_fallback", bool(model.byte_fallback), fresh)
    _set(spec, "unk_id", int(model.unk_id), fresh)
    for role in ("bos", "eos", "pad"):
        _set(spec, f"{role}_id", ids.get(getattr(spec, f"{role}_piece"), -1), fresh)
    _set(spec, "treat_whitespace_as_suffix", normalizer.treat_whitespace_as_suffix, fresh)
    for name, value in (trainer_spec or {}).items():
        if name not in spec.DESCRIPTOR.fields_by_name:
            raise ModelError(f"{name!r} is not a SentencePiece trainer option (TrainerSpec field)")
        if isinstance(value, (list, tuple)):
            del getattr(spec, name)[:]
            getattr(spec, name).extend(value)
        else:
            setattr(spec, name, value)
    norm = proto.normalizer_spec
    if normalizer.charsmap is None or not norm.name:
        _set(norm, "name", normalizer.rule, fresh)
    _set(norm, "precompiled_charsmap", normalizer.precompiled_charsmap, fresh)
    for flag in ("add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"):
        _set(norm, flag, getattr(normalizer, flag), fresh)
    if fresh:
        proto.denormalizer_spec.SetInParent()
    return proto


def save_sentencepiece(tokenizer: Any, path: PathLike, trainer_spec: Optional[Mapping[str, Any]] = None) -> None:
    """Write a SentencePiece tokenizer as a ``.model`` file (atomically) that ``sentencepiece``
    loads; see :func:`tokenizer_proto`."""
    atomic_write_bytes(path, tokenizer_proto(tokenizer, trainer_spec).SerializeToString())


def piece_table(proto: Any) -> List[Tuple[str, float, int]]:
    """(piece, score, type) of each piece of a ``ModelProto``."""
    return [(p.piece, p.score, p.type) for p in proto.pieces]
