"""Hugging Face's ``tokenizer.json`` (tokenizers 0.13 to 1.0), read and written.

A ``tokenizer.json`` holds one object per pipeline stage (``normalizer``, ``pre_tokenizer``,
``model``, ``post_processor``, ``decoder``), each with Hugging Face's ``"type"``, plus
``added_tokens``, ``truncation`` and ``padding``. Every ciyuan component with a Hugging Face
counterpart is registered under Hugging Face's type name and reads and writes Hugging Face's
fields (the contract of each stage's registry), so reading a stage is ``REGISTRY.from_dict``
and writing it is ``to_dict()``. What this module adds is what spans stages:

- **byte level.** Hugging Face's BPE model works on characters; its ``ByteLevel``
  pre-tokenizer maps every byte to a printable character first (GPT-2's alphabet). ciyuan's
  byte-level BPE works on the bytes themselves. So a BPE model behind a ``ByteLevel``
  pre-tokenizer is read as ciyuan's byte-level BPE, and ciyuan's byte-level BPE is written
  with a ``ByteLevel`` pre-tokenizer (after ciyuan's split, when that is not GPT-2's) and
  its vocabulary in GPT-2's alphabet. tiktoken-style models (ranks, no merges) are written
  with the merges that give the same tokens (:mod:`ciyuan.formats.bpe_ranks`) and
  ``ignore_merges``.
- **added tokens** (:class:`~ciyuan.special_tokens.AddedToken`, with their flags); ciyuan's
  tiktoken-style special tokens are written as special added tokens.
- **the model's type**, which files of tokenizers before 0.14 leave out (told by the fields).
- **hostile files**: every problem is one :class:`~ciyuan.errors.FileFormatError` naming the
  file and where in it (``model.merges[12]``, ``pre_tokenizer.pretokenizers[1]`` ...).

Example:
    >>> parts = read_hf_json("gpt2/tokenizer.json")                       # doctest: +SKIP
    >>> Tokenizer(**parts).encode("Hello world").tokens                     # doctest: +SKIP
    ['Hello', 'Ġworld']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from ciyuan._io import PathLike, atomic_write_bytes, make_dirs
from ciyuan.byte_alphabet import bytes_to_printable
from ciyuan.decoders.base import DECODERS
from ciyuan.errors import CiyuanError, FileFormatError, ModelError
from ciyuan.formats.bpe_ranks import merges_from_ranks
from ciyuan.formats.parts import TokenizerParts
from ciyuan.models.base import MODELS
from ciyuan.normalizers.base import NORMALIZERS
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS
from ciyuan.processors import Padding, Truncation
from ciyuan.processors.base import PROCESSORS
from ciyuan.special_tokens import AddedToken, added_tokens_from_list

_orjson: Any
try:  # orjson (a dependency) parses a vocabulary of 200,000 tokens several times faster than json
    import orjson as _orjson
except ImportError:  # pragma: no cover - a ciyuan installed without it still reads the files
    _orjson = None

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["read_hf_json", "hf_json_dict", "save_hf_json", "write_hf_json", "looks_like_hf_json", "MAX_FILE_BYTES"]

#: The largest tokenizer.json read (the largest published ones are under 40 MB): a bigger file -
#: a 1 GB string, say - is refused before anything is allocated for it.
MAX_FILE_BYTES = 1 << 29

_HF_STAGES = ("normalizer", "pre_tokenizer", "model", "post_processor", "decoder")


def looks_like_hf_json(head: bytes) -> bool:
    """Whether the first bytes of a JSON file are a Hugging Face ``tokenizer.json`` (its keys
    ``"version"``, ``"added_tokens"``, ``"model"`` and ``"pre_tokenizer"``, which ciyuan's own
    JSON does not hold at the top together)."""
    text = head[:4096]
    return text.lstrip()[:1] == b"{" and b'"ciyuan"' not in text and (
        b'"added_tokens"' in text or (b'"version"' in text and b'"model"' in text)
        or b'"pre_tokenizer"' in text and b'"truncation"' in text)


# -- reading -----------------------------------------------------------------------------------

class _Reader:
    """One file being read: every error names the file and the place in it."""

    def __init__(self, path: PathLike) -> None:
        self.path = str(path)

    def fail(self, where: str, message: str) -> "FileFormatError":
        return FileFormatError(self.path, None, f"{where}: {message}" if where else message)

    def parse(self) -> Dict[str, Any]:
        try:
            size = os.path.getsize(self.path)
        except OSError as e:
            raise FileFormatError(self.path, None, f"cannot read the file: {e.strerror}") from None
        if size > MAX_FILE_BYTES:
            raise self.fail("", f"the file is {size:,} bytes; a tokenizer.json is at most {MAX_FILE_BYTES:,} "
                                "(this one is corrupt, or not a tokenizer)")
        try:
            with open(self.path, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise FileFormatError(self.path, None, f"cannot read the file: {e.strerror}") from None
        data = self._loads(raw)
        if not isinstance(data, dict):
            raise self.fail("", f"expected a JSON object at the top, found {type(data).__name__}")
        return data

    def _loads(self, raw: bytes) -> Any:
        if _orjson is not None:
            try:
                return _orjson.loads(raw)
            except _orjson.JSONDecodeError:
                pass  # json's message says where
        try:
            return json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            raise FileFormatError(self.path, line, f"invalid UTF-8 at byte {e.start}") from None
        except json.JSONDecodeError as e:
            what = "the file ends inside the JSON (truncated?)" if e.pos >= len(e.doc.rstrip()) else e.msg
            raise FileFormatError(self.path, e.lineno, f"not valid JSON: {what} (column {e.colno})") from None
        except RecursionError:
            raise self.fail("", "the JSON nests too deeply to be a tokenizer.json") from None

    def stage(self, registry: Any, data: Any, where: str) -> Any:
        """``registry.from_dict(data)``, its errors naming the file and ``where``."""
        if not isinstance(data, dict):
            raise self.fail(where, f"expected an object with a \"type\", found {type(data).__name__}")
        try:
            return registry.from_dict(data)
        except FileFormatError:
            raise
        except RecursionError:
            raise self.fail(where, "the components nest too deeply") from None
        except (CiyuanError, KeyError, TypeError, ValueError) as e:
            message = str(e) if not isinstance(e, KeyError) else f"lacks the field {e.args[0]!r}"
            if isinstance(e, ModelError) and f"unknown {registry.stage} type" in message:
                where, kind = _nested_where(data, registry, where)
                message = (f"the {registry.stage} {kind!r} is not one ciyuan has ({message.split('; ', 1)[-1]}); "
                           "ciyuan cannot run this tokenizer")
            raise self.fail(where, message) from None


def _nested_where(data: Dict[str, Any], registry: Any, where: str) -> Tuple[str, Any]:
    """The place and type of the first unknown type, looked for inside Sequences too
    (``pre_tokenizer.pretokenizers[1]``)."""
    names = set(registry.names())
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in names:  # a list or dict "type" is unhashable
        return where, kind
    for key, value in data.items():
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict) and "type" in item:
                    found = _nested_where(item, registry, f"{where}.{key}[{i}]")
                    if not isinstance(found[1], str) or found[1] not in names:
                        return found
    return where, data.get("type")


def _model_type(data: Dict[str, Any]) -> Optional[str]:
    """The model's type when the file leaves it out (tokenizers before 0.14), told by its fields
    as tokenizers tells them."""
    if "type" in data:
        return data["type"]
    if "merges" in data:
        return "BPE"
    if isinstance(data.get("vocab"), list):
        return "Unigram"
    if "continuing_subword_prefix" in data or "max_input_chars_per_word" in data:
        return "WordPiece"
    if "vocab" in data:
        return "WordLevel"
    return None


def _uses_byte_level(pre: Any) -> bool:
    """Whether a pre-tokenizer description holds Hugging Face's ByteLevel (maybe in a Sequence)."""
    if not isinstance(pre, dict):
        return False
    if pre.get("type") == "ByteLevel":
        return True
    return any(_uses_byte_level(p) for p in pre.get("pretokenizers") or [] if isinstance(p, dict))


def _check_vocab(reader: _Reader, model: Dict[str, Any], added: int, find_duplicate: Any) -> None:
    """Ids in range (not beyond what the file can use: a huge id would make ciyuan allocate a
    table that large) and no token given twice."""
    vocab = model.get("vocab")
    if isinstance(vocab, list):
        seen: Dict[str, int] = {}
        for i, item in enumerate(vocab):
            if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str):
                raise reader.fail(f"model.vocab[{i}]", f"expected [piece, score], found {item!r}")
            if item[0] in seen:
                raise reader.fail(f"model.vocab[{i}]", f"the piece {item[0]!r} is given twice "
                                                       f"(also at model.vocab[{seen[item[0]]}])")
            seen[item[0]] = i
        return
    if not isinstance(vocab, dict):
        raise reader.fail("model.vocab", f"expected an object token -> id, found {type(vocab).__name__}")
    ids = vocab.values()
    n = len(vocab)
    limit = n + added
    # The usual file (ints 0..n-1, each once) is told in C-speed passes; anything else is
    # looked at token by token to say what is wrong.
    if n and set(map(type, ids)) == {int} and min(ids) == 0 and max(ids) == n - 1 and len(set(ids)) == n:
        return
    bad = [(t, i) for t, i in vocab.items()
           if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < limit]
    if bad or set(ids) != set(range(n)):
        # A key given twice (kept once by the parser) leaves a gap in the ids: name it first.
        dup = find_duplicate()
        if dup is not None:
            raise reader.fail("model.vocab", f"the token {dup!r} is given twice")
    if bad:
        token, i = bad[0]
        raise reader.fail(f"model.vocab[{token!r}]", f"the id {i!r} is out of range: the file has {n} tokens "
                                                     f"and {added} added tokens, so ids are 0..{limit - 1}")
    if len(set(ids)) != n:
        counts: Dict[int, List[str]] = {}
        for t, i in vocab.items():
            counts.setdefault(i, []).append(t)
        token_id, tokens = next((i, ts) for i, ts in counts.items() if len(ts) > 1)
        raise reader.fail("model.vocab", f"the tokens {tokens[0]!r} and {tokens[1]!r} share the id {token_id}")


def _duplicate_key_finder(raw_path: str) -> Any:
    """A function that re-reads the file looking for a key given twice in an object (a JSON
    parser keeps the last silently); called only when the vocabulary's ids leave a gap, which
    a duplicate key makes."""
    def find() -> Optional[str]:
        found: List[str] = []

        def pairs(items: List[Tuple[str, Any]]) -> Dict[str, Any]:
            if not found and len(items) > 1:
                seen = set()
                for key, _ in items:
                    if key in seen:
                        found.append(key)
                        break
                    seen.add(key)
            return dict(items)
        with open(raw_path, "rb") as f:
            json.loads(f.read().decode("utf-8"), object_pairs_hook=pairs)
        return found[0] if found else None
    return find


def read_hf_json(path: PathLike) -> TokenizerParts:
    """The parts of the tokenizer a ``tokenizer.json`` describes (``Tokenizer(**parts)``).

    Raises:
        FileFormatError: not a tokenizer.json (bad JSON, too big, nested too deep), a
            component ciyuan lacks (named), ids out of range, a token given twice, a merge of
            an unknown token... - each naming the file and the place in it.
    """
    reader = _Reader(path)
    data = reader.parse()
    model_data = data.get("model")
    if not isinstance(model_data, dict):
        raise reader.fail("model", "missing: a tokenizer.json needs a \"model\" object")
    try:
        added = added_tokens_from_list(data.get("added_tokens") or [])
    except ModelError as e:
        raise reader.fail("added_tokens", str(e)) from None
    by_content: Dict[str, int] = {}
    for i, token in added.items():
        if token.content in by_content:
            raise reader.fail("added_tokens", f"the token {token.content!r} is given twice "
                                              f"(ids {by_content[token.content]} and {i})")
        by_content[token.content] = i
    model_type = _model_type(model_data)
    if model_type is None:
        raise reader.fail("model", "no \"type\", and its fields are not those of BPE, WordPiece, WordLevel "
                                   "or Unigram")
    model_data = dict(model_data, type=model_type)
    vocab = model_data.get("vocab")
    _check_vocab(reader, model_data, len(added), _duplicate_key_finder(reader.path))
    pre_data = data.get("pre_tokenizer")
    if model_type == "BPE" and "byte_level" not in model_data and _uses_byte_level(pre_data):
        model_data["byte_level"] = True
        # Added tokens outside GPT-2's alphabet (a "▁" token, say) are in the vocabulary only
        # for their id; the added tokens match them, the byte-level model never makes them.
        odd = {t.content for t in added.values() if isinstance(vocab, dict) and t.content in vocab
               and not _printable(t.content)}
        if odd and isinstance(vocab, dict):
            model_data["vocab"] = {t: i for t, i in vocab.items() if t not in odd}
    try:
        model = reader.stage(MODELS, model_data, "model")
    except FileFormatError:
        if model_type == "BPE":
            _check_merges(reader, model_data)  # names the merge at fault, when one is
        raise
    parts: TokenizerParts = {"model": model}
    stages = (("normalizer", NORMALIZERS), ("pre_tokenizer", PRE_TOKENIZERS), ("post_processor", PROCESSORS),
              ("decoder", DECODERS))
    for key, registry in stages:
        value = data.get(key)
        parts[key] = reader.stage(registry, value, key) if value is not None else None  # type: ignore[literal-required]
    for key, settings in (("truncation", Truncation), ("padding", Padding)):
        if data.get(key):
            try:
                parts[key] = settings.from_hf_dict(data[key])  # type: ignore[literal-required]
            except (CiyuanError, KeyError, TypeError, ValueError) as e:
                raise reader.fail(key, str(e)) from None
    parts["added_tokens"] = added
    return parts


def _printable(token: str) -> bool:
    from ciyuan.byte_alphabet import CHAR_TO_BYTE
    return all(c in CHAR_TO_BYTE for c in token)


def _check_merges(reader: _Reader, model: Dict[str, Any]) -> None:
    """Each merge is two tokens of the vocabulary (as ``"a b"`` or ``["a", "b"]``)."""
    merges = model.get("merges")
    if merges is None:
        return
    if not isinstance(merges, list):
        raise reader.fail("model.merges", f"expected a list, found {type(merges).__name__}")
    vocab = model.get("vocab") or {}
    for n, merge in enumerate(merges):
        if isinstance(merge, str):
            pair = merge.split(" ")
            if len(pair) != 2:
                raise reader.fail(f"model.merges[{n}]", f"{merge!r} is not two tokens separated by one space")
        elif isinstance(merge, list) and len(merge) == 2 and all(isinstance(t, str) for t in merge):
            pair = merge
        else:
            raise reader.fail(f"model.merges[{n}]", f"expected \"a b\" or [\"a\", \"b\"], found {merge!r}")
        for token in pair:
            if token not in vocab:
                raise reader.fail(f"model.merges[{n}]", f"the merge {merge!r} names {token!r}, which is not in "
                                                        "the vocabulary")


# -- writing -----------------------------------------------------------------------------------

def _hf_byte_bpe(model: Any) -> Dict[str, Any]:
    """Hugging Face's BPE description of a ciyuan byte-level BPE (tokens in GPT-2's alphabet);
    a tiktoken-style model gets the merges that rebuild its ranks, and ``ignore_merges``."""
    tokens = [model.token_bytes(i) if model._tokens[i] is not None else None for i in range(model.id_limit)]
    vocab = {bytes_to_printable(t): i for i, t in enumerate(tokens) if t is not None}
    if model.rank_by_token:
        try:
            merges = merges_from_ranks({t: i for i, t in enumerate(tokens) if t is not None})
        except ModelError as e:
            raise ModelError(f"the model's ranks cannot be written as Hugging Face's merges: {e}") from None
    else:
        merges = [(tokens[a], tokens[b]) for a, b in model.merge_ids]
    return {"type": "BPE", "dropout": model.dropout, "unk_token": model.unk_token, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": model.fuse_unk, "byte_fallback": False,
            "ignore_merges": bool(model.ignore_merges),
            "vocab": vocab, "merges": [[bytes_to_printable(a), bytes_to_printable(b)] for a, b in merges]}


def _byte_level_pre(pre: Any) -> Dict[str, Any]:
    """The pre-tokenizer of a byte-level BPE as Hugging Face needs it: ``ByteLevel`` last."""
    plain = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    if pre is None:
        return plain
    data = pre.to_dict()
    if _uses_byte_level(data):
        return data
    if data.get("type") == "Split" and getattr(pre, "native_pattern", None) in ("gpt2", "r50k_base", "p50k_base") \
            and data.get("behavior") == "Isolated" and not data.get("invert"):
        return dict(plain, use_regex=True)  # GPT-2's split is ByteLevel's own
    # Any other split (its Split writes its pattern as Oniguruma reads it), then the bytes.
    return {"type": "Sequence", "pretokenizers": [data, plain]}


def hf_json_dict(tok: "Tokenizer") -> Dict[str, Any]:
    """The ``tokenizer.json`` content of a ciyuan tokenizer (what :func:`save_hf_json` writes).

    Raises:
        ModelError: a component without a Hugging Face counterpart (named).
    """
    model = tok.model
    byte_bpe = getattr(model, "type_name", "") == "BPE" and getattr(model, "byte_level", False)
    pre: Optional[Dict[str, Any]]
    model_dict: Optional[Dict[str, Any]]
    for name in _HF_STAGES:
        part = getattr(tok, name)
        kind = getattr(part, "type_name", None)
        if part is not None and kind not in _HF_TYPES[name] and (name, kind) not in _SAME_AS_HF \
                and not (name == "pre_tokenizer" and byte_bpe):
            raise ModelError(f"the {name.replace('_', '-')} {part!r} has no Hugging Face counterpart, so a "
                             "tokenizer.json cannot hold this tokenizer")
    if byte_bpe:
        model_dict = _hf_byte_bpe(model)
        pre = _byte_level_pre(tok.pre_tokenizer)
        decoder: Optional[Dict[str, Any]] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                             "use_regex": True}
    else:
        model_dict = _hf_form("model", model)
        pre = _hf_form("pre_tokenizer", tok.pre_tokenizer) if tok.pre_tokenizer is not None else None
        decoder = _hf_form("decoder", tok.decoder)
        if getattr(tok.decoder, "type_name", "") == "ByteLevel":
            # ciyuan's ByteLevel decoder joins the tokens' bytes; over a character-level model
            # that is Hugging Face's Fuse (its ByteLevel decoder would read them as GPT-2's alphabet).
            decoder = {"type": "Fuse"}
        if getattr(model, "type_name", "") == "CharLevel":
            # Hugging Face's WordLevel behind a Split that makes every character a piece.
            chars = {"type": "Split", "pattern": {"Regex": r"[\s\S]"}, "behavior": "Isolated", "invert": False}
            pre = chars if pre is None else {"type": "Sequence", "pretokenizers": [pre, chars]}
    added: List[Dict[str, Any]] = [AddedToken(t, special=True).to_dict(i) for t, i in tok.special_tokens.items()]
    added += [t.to_dict(i) for i, t in tok.added_tokens.items()]
    added.sort(key=lambda d: d["id"])
    return {
        "version": "1.0",
        "truncation": tok.truncation.to_hf_dict() if tok.truncation is not None else None,
        "padding": tok.padding.to_hf_dict() if tok.padding is not None else None,
        "added_tokens": added,
        "normalizer": tok.normalizer.to_dict() if tok.normalizer is not None else None,
        "pre_tokenizer": pre,
        "post_processor": tok.post_processor.to_dict() if tok.post_processor is not None else None,
        "decoder": decoder,
        "model": model_dict,
    }


def _hf_form(stage: str, part: Any) -> Optional[Dict[str, Any]]:
    """A component's Hugging Face form: its ``to_dict()``, or for a ciyuan component that does
    what a Hugging Face one does under another name, that one's."""
    kind = getattr(part, "type_name", None)
    if (stage, kind) in _SAME_AS_HF:
        return _SAME_AS_HF[(stage, kind)](part)
    data: Dict[str, Any] = part.to_dict()
    return data


# ciyuan components written as the Hugging Face component that gives the same results.
_SAME_AS_HF: Mapping[Tuple[str, Optional[str]], Any] = {
    # WordPunct is \w+|[^\w\s]+, Hugging Face's Whitespace.
    ("pre_tokenizer", "WordPunct"): lambda p: {"type": "Whitespace"},
    # The suffix becomes a space between words and nothing at the end: BPEDecoder.
    ("decoder", "BPESuffix"): lambda d: {"type": "BPEDecoder", "suffix": d.suffix},
    # Tokens joined by a space is what Hugging Face does without a decoder; joined by nothing, Fuse.
    ("decoder", "WordLevel"): lambda d: _joined(d),
    ("decoder", "CharLevel"): lambda d: _joined(d),
    ("model", "CharLevel"): lambda m: {"type": "WordLevel", "vocab": m.get_vocab(), "unk_token": m.unk_token},
}


def _joined(decoder: Any) -> Optional[Dict[str, Any]]:
    """Tokens joined by a space: no decoder (Hugging Face's default); by nothing: Fuse."""
    if decoder.separator == " ":
        return None
    if decoder.separator == "":
        return {"type": "Fuse"}
    raise ModelError(f"the decoder {decoder!r} has no Hugging Face counterpart, so a tokenizer.json cannot hold "
                     "this tokenizer")


# Hugging Face's type names per stage (what tokenizers 0.23 reads).
_HF_TYPES: Mapping[str, Tuple[str, ...]] = {
    "normalizer": ("BertNormalizer", "Strip", "StripAccents", "NFC", "NFD", "NFKC", "NFKD", "Sequence", "Lowercase",
                   "Nmt", "Precompiled", "Replace", "Prepend", "ByteLevel"),
    "pre_tokenizer": ("BertPreTokenizer", "ByteLevel", "Delimiter", "CharDelimiterSplit", "Metaspace", "Whitespace",
                      "Sequence", "Split", "Punctuation", "WhitespaceSplit", "Digits", "UnicodeScripts", "FixedLength"),
    "model": ("BPE", "WordPiece", "WordLevel", "Unigram"),
    "post_processor": ("RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence"),
    "decoder": ("BPEDecoder", "ByteLevel", "WordPiece", "Metaspace", "CTC", "Sequence", "Replace", "Fuse", "Strip",
                "ByteFallback"),
}


def save_hf_json(tok: "Tokenizer", path: PathLike, *, indent: Optional[int] = None) -> None:
    """Write ``tok`` as a ``tokenizer.json`` (atomically) that ``tokenizers`` and
    ``transformers.PreTrainedTokenizerFast(tokenizer_file=...)`` load unchanged.

    Raises:
        ModelError: a component without a Hugging Face counterpart (named).
    """
    write_hf_json(hf_json_dict(tok), path, indent=indent)


def write_hf_json(data: Dict[str, Any], path: PathLike, *, indent: Optional[int] = None) -> None:
    """Write :func:`hf_json_dict`'s content to ``path`` atomically (its folder is made)."""
    if _orjson is not None and indent is None:
        text = _orjson.dumps(data)
    else:
        text = json.dumps(data, ensure_ascii=False, indent=indent).encode("utf-8")
    make_dirs(Path(path).parent)
    atomic_write_bytes(path, text)
