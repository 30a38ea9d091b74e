"""The protobuf schema of SentencePiece's ``.model`` files (``ModelProto``), built at import
from ``descriptor_pb2`` (no protoc, no generated code): field numbers, types and defaults as
sentencepiece reads them. Unknown fields survive a parse and serialize, so a file read and
written back keeps what this schema does not name.

Example:
    >>> from ciyuan.formats.sentencepiece_proto import ModelProto
    >>> ModelProto().trainer_spec.vocab_size
    8000
"""

from __future__ import annotations

from typing import Any, Sequence, Tuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["ModelProto", "TrainerSpec", "NormalizerSpec", "SelfTestData", "PIECE_TYPES", "MODEL_TYPES"]

_F = descriptor_pb2.FieldDescriptorProto
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_TYPES = {"string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "bool": _F.TYPE_BOOL, "int32": _F.TYPE_INT32,
          "uint64": _F.TYPE_UINT64, "float": _F.TYPE_FLOAT, "enum": _F.TYPE_ENUM, "message": _F.TYPE_MESSAGE}
_PACKAGE = "ciyuan_sentencepiece"

#: sentencepiece's piece types (ModelProto.SentencePiece.Type).
PIECE_TYPES = {"NORMAL": 1, "UNKNOWN": 2, "CONTROL": 3, "USER_DEFINED": 4, "UNUSED": 5, "BYTE": 6}
#: sentencepiece's model types (TrainerSpec.ModelType).
MODEL_TYPES = {"UNIGRAM": 1, "BPE": 2, "WORD": 3, "CHAR": 4}

# (number, name, type, label, default (text, as in a .proto) or None, type name for enums/messages)
Field = Tuple[int, str, str, int, Any, str]

_TRAINER: Sequence[Field] = (
    (1, "input", "string", _REP, None, ""),
    (7, "input_format", "string", _OPT, None, ""),
    (2, "model_prefix", "string", _OPT, None, ""),
    (3, "model_type", "enum", _OPT, "UNIGRAM", ".TrainerSpec.ModelType"),
    (4, "vocab_size", "int32", _OPT, "8000", ""),
    (5, "accept_language", "string", _REP, None, ""),
    (6, "self_test_sample_size", "int32", _OPT, "0", ""),
    (50, "enable_differential_privacy", "bool", _OPT, "false", ""),
    (51, "differential_privacy_noise_level", "float", _OPT, "0", ""),
    (52, "differential_privacy_clipping_threshold", "uint64", _OPT, "0", ""),
    (10, "character_coverage", "float", _OPT, "0.9995", ""),
    (11, "input_sentence_size", "uint64", _OPT, "0", ""),
    (19, "shuffle_input_sentence", "bool", _OPT, "true", ""),
    (12, "mining_sentence_size", "int32", _OPT, None, ""),
    (13, "training_sentence_size", "int32", _OPT, None, ""),
    (14, "seed_sentencepiece_size", "int32", _OPT, "1000000", ""),
    (15, "shrinking_factor", "float", _OPT, "0.75", ""),
    (18, "max_sentence_length", "int32", _OPT, "4192", ""),
    (16, "num_threads", "int32", _OPT, "16", ""),
    (17, "num_sub_iterations", "int32", _OPT, "2", ""),
    (20, "max_sentencepiece_length", "int32", _OPT, "16", ""),
    (21, "split_by_unicode_script", "bool", _OPT, "true", ""),
    (23, "split_by_number", "bool", _OPT, "true", ""),
    (22, "split_by_whitespace", "bool", _OPT, "true", ""),
    (24, "treat_whitespace_as_suffix", "bool", _OPT, "false", ""),
    (26, "allow_whitespace_only_pieces", "bool", _OPT, "false", ""),
    (25, "split_digits", "bool", _OPT, "false", ""),
    (53, "pretokenization_delimiter", "string", _OPT, "", ""),
    (30, "control_symbols", "string", _REP, None, ""),
    (31, "user_defined_symbols", "string", _REP, None, ""),
    (36, "required_chars", "string", _OPT, None, ""),
    (35, "byte_fallback", "bool", _OPT, "false", ""),
    (32, "vocabulary_output_piece_score", "bool", _OPT, "true", ""),
    (33, "hard_vocab_limit", "bool", _OPT, "true", ""),
    (34, "use_all_vocab", "bool", _OPT, "false", ""),
    (40, "unk_id", "int32", _OPT, "0", ""),
    (41, "bos_id", "int32", _OPT, "1", ""),
    (42, "eos_id", "int32", _OPT, "2", ""),
    (43, "pad_id", "int32", _OPT, "-1", ""),
    (45, "unk_piece", "string", _OPT, "<unk>", ""),
    (46, "bos_piece", "string", _OPT, "<s>", ""),
    (47, "eos_piece", "string", _OPT, "</s>", ""),
    (48, "pad_piece", "string", _OPT, "<pad>", ""),
    (44, "unk_surface", "string", _OPT, " \u2047 ", ""),
    (49, "train_extremely_large_corpus", "bool", _OPT, "false", ""),
    (54, "seed_sentencepieces_file", "string", _OPT, "", ""),
    (55, "auto_character_coverage", "bool", _OPT, "false", ""),
)

_NORMALIZER: Sequence[Field] = (
    (1, "name", "string", _OPT, None, ""),
    (2, "precompiled_charsmap", "bytes", _OPT, None, ""),
    (3, "add_dummy_prefix", "bool", _OPT, "true", ""),
    (4, "remove_extra_whitespaces", "bool", _OPT, "true", ""),
    (5, "escape_whitespaces", "bool", _OPT, "true", ""),
    (6, "normalization_rule_tsv", "string", _OPT, None, ""),
)

_SAMPLE: Sequence[Field] = (
    (1, "input", "string", _OPT, None, ""),
    (2, "expected", "string", _OPT, None, ""),
)
_SELF_TEST: Sequence[Field] = ((1, "samples", "message", _REP, None, ".SelfTestData.Sample"),)

_PIECE: Sequence[Field] = (
    (1, "piece", "string", _OPT, None, ""),
    (2, "score", "float", _OPT, None, ""),
    (3, "type", "enum", _OPT, "NORMAL", ".ModelProto.SentencePiece.Type"),
)

_MODEL: Sequence[Field] = (
    (1, "pieces", "message", _REP, None, ".ModelProto.SentencePiece"),
    (2, "trainer_spec", "message", _OPT, None, ".TrainerSpec"),
    (3, "normalizer_spec", "message", _OPT, None, ".NormalizerSpec"),
    (4, "self_test_data", "message", _OPT, None, ".SelfTestData"),
    (5, "denormalizer_spec", "message", _OPT, None, ".NormalizerSpec"),
)


def _message(proto: descriptor_pb2.DescriptorProto, name: str, fields: Sequence[Field]) -> descriptor_pb2.DescriptorProto:
    proto.name = name
    for number, field_name, kind, label, default, type_name in fields:
        f = proto.field.add(name=field_name, number=number, label=label, type=_TYPES[kind])
        if type_name:
            f.type_name = f".{_PACKAGE}{type_name}"
        if default is not None:
            f.default_value = default
    proto.extension_range.add(start=200, end=536870912)  # "extensions 200 to max"
    return proto


def _enum(proto: descriptor_pb2.EnumDescriptorProto, name: str, values: dict) -> None:
    proto.name = name
    for value_name, number in values.items():
        proto.value.add(name=value_name, number=number)


def _build() -> descriptor_pool.DescriptorPool:
    file = descriptor_pb2.FileDescriptorProto(name="ciyuan_sentencepiece_model.proto", package=_PACKAGE,
                                              syntax="proto2")
    file.options.optimize_for = descriptor_pb2.FileOptions.LITE_RUNTIME
    trainer = _message(file.message_type.add(), "TrainerSpec", _TRAINER)
    _enum(trainer.enum_type.add(), "ModelType", MODEL_TYPES)
    _message(file.message_type.add(), "NormalizerSpec", _NORMALIZER)
    self_test = _message(file.message_type.add(), "SelfTestData", _SELF_TEST)
    _message(self_test.nested_type.add(), "Sample", _SAMPLE)
    model = _message(file.message_type.add(), "ModelProto", _MODEL)
    piece = _message(model.nested_type.add(), "SentencePiece", _PIECE)
    _enum(piece.enum_type.add(), "Type", PIECE_TYPES)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return pool


_POOL = _build()


def _class(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{_PACKAGE}.{name}"))


#: The message classes (protobuf messages: ``ParseFromString``, ``SerializeToString``, ...).
ModelProto: Any = _class("ModelProto")
TrainerSpec: Any = _class("TrainerSpec")
NormalizerSpec: Any = _class("NormalizerSpec")
SelfTestData: Any = _class("SelfTestData")
