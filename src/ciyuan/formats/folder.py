"""A model folder as people have them on disk (a Hugging Face Hub snapshot, say): which file
holds the tokenizer, and what ``tokenizer_config.json``, ``special_tokens_map.json`` and
``added_tokens.json`` say about special and added tokens.

``Tokenizer.from_pretrained`` reads a folder through :func:`read_model_folder`. The tokenizer
file is chosen as ``transformers`` chooses it: ``tokenizer.json`` first; else
``tokenizer.model`` (a SentencePiece model, or a tiktoken file as Llama 3 ships it, told apart
by content); else ``vocab.json`` + ``merges.txt`` (GPT-2's byte-level BPE); else ``vocab.txt``
(BERT's WordPiece). ciyuan never downloads: a name that looks like a Hub id and is not a folder
here is an error that says so.

Example:
    >>> folder = read_model_folder("models/llama-2-7b")                      # doctest: +SKIP
    >>> folder.kind, folder.config.get("add_bos_token")                        # doctest: +SKIP
    ('sentencepiece', True)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from ciyuan._io import PathLike, read_utf8
from ciyuan.errors import FileFormatError, raise_file_error
from ciyuan.formats.sentencepiece import looks_like_sentencepiece
from ciyuan.formats.tiktoken import looks_like_tiktoken

__all__ = ["ModelFolder", "FolderToken", "read_model_folder", "SPECIAL_TOKEN_KEYS"]

#: The keys of ``tokenizer_config.json`` / ``special_tokens_map.json`` that name one special token.
SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")

# A Hub id: "name" or "owner/name" of letters, digits, '-', '_' and '.' (what the Hub accepts).
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")


@dataclass(frozen=True)
class FolderToken:
    """A special or added token as the folder's configuration gives it (Hugging Face's
    ``AddedToken`` fields); ``id`` is None when the configuration does not fix it."""

    content: str
    id: Optional[int] = None
    special: bool = True
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False


@dataclass
class ModelFolder:
    """What :func:`read_model_folder` found.

    Attributes:
        path: the folder.
        kind: ``"tokenizer.json"``, ``"sentencepiece"``, ``"tiktoken"``, ``"gpt2"``
            (``vocab.json`` + ``merges.txt``) or ``"bert_vocab"``.
        files: the tokenizer's file(s): ``{"tokenizer": path}``, and for ``"gpt2"`` also
            ``{"merges": path}``.
        config: ``tokenizer_config.json`` (empty when absent).
        special: the named special tokens (``bos_token`` ... ``mask_token``), from
            ``special_tokens_map.json`` over ``tokenizer_config.json``.
        additional: ``additional_special_tokens``, in order.
        added: the added tokens with fixed ids (``added_tokens_decoder`` of the config, and
            ``added_tokens.json``), by id.
    """

    path: Path
    kind: str
    files: Dict[str, Path]
    config: Dict[str, Any] = field(default_factory=dict)
    special: Dict[str, FolderToken] = field(default_factory=dict)
    additional: List[FolderToken] = field(default_factory=list)
    added: Dict[int, FolderToken] = field(default_factory=dict)

    @property
    def tokenizer_class(self) -> str:
        """``tokenizer_class`` of the config without its ``Fast`` suffix (``""`` when unnamed)."""
        name = self.config.get("tokenizer_class") or ""
        return name[:-4] if isinstance(name, str) and name.endswith("Fast") else str(name)

    def special_content(self, key: str) -> Optional[str]:
        """The text of the named special token (``"bos_token"`` ...), or None."""
        token = self.special.get(key)
        return token.content if token is not None else None


def _read_json(path: Path) -> Dict[str, Any]:
    try:
        data = json.loads(read_utf8(path))
    except json.JSONDecodeError as e:
        raise FileFormatError(str(path), e.lineno, f"not valid JSON: {e.msg}") from None
    except RecursionError:
        raise FileFormatError(str(path), None, "JSON nested too deeply") from None
    except OSError as e:
        raise FileFormatError(str(path), None, f"cannot read the file: {e.strerror}") from None
    if not isinstance(data, dict):
        raise_file_error(path, None, "expected a JSON object")
    return data


def _token(value: Any, where: Path, key: str, token_id: Optional[int] = None) -> Optional[FolderToken]:
    """A token written as a string or as an AddedToken object (``{"content": ..., ...}``)."""
    if value is None:
        return None
    if isinstance(value, str):
        return FolderToken(value, token_id) if value else None
    if isinstance(value, dict) and isinstance(value.get("content"), str) and value["content"]:
        flags = {k: bool(value.get(k, False)) for k in ("single_word", "lstrip", "rstrip", "normalized")}
        return FolderToken(value["content"], token_id, special=bool(value.get("special", True)), **flags)
    raise_file_error(where, None, f"{key} must be a token string or an object with its 'content', got {value!r}")


def _folder_tokens(folder: ModelFolder, source: Dict[str, Any], where: Path) -> None:
    for key in SPECIAL_TOKEN_KEYS:
        token = _token(source.get(key), where, key)
        if token is not None:
            folder.special[key] = token
    extra = source.get("additional_special_tokens")
    if extra is not None:
        if not isinstance(extra, list):
            raise_file_error(where, None, "additional_special_tokens must be a list")
        folder.additional = [t for i, v in enumerate(extra)
                             if (t := _token(v, where, f"additional_special_tokens[{i}]")) is not None]


def _added_tokens(folder: ModelFolder) -> None:
    decoder = folder.config.get("added_tokens_decoder")
    where = folder.path / "tokenizer_config.json"
    if decoder is not None:
        if not isinstance(decoder, dict):
            raise_file_error(where, None, "added_tokens_decoder must map ids to tokens")
        for key, value in decoder.items():
            if not str(key).isdigit():
                raise_file_error(where, None, f"added_tokens_decoder: {key!r} is not a token id")
            token = _token(value, where, f"added_tokens_decoder[{key}]", int(key))
            if token is not None:
                folder.added[int(key)] = token
    added_json = folder.path / "added_tokens.json"
    if added_json.exists():
        for content, token_id in _read_json(added_json).items():
            if isinstance(token_id, bool) or not isinstance(token_id, int) or token_id < 0:
                raise_file_error(added_json, None, f"token {content!r} has id {token_id!r}, not a non-negative integer")
            folder.added.setdefault(token_id, FolderToken(content, token_id, special=False))


def _choose_file(p: Path) -> ModelFolder:
    tokenizer_json = p / "tokenizer.json"
    if tokenizer_json.is_file():
        return ModelFolder(p, "tokenizer.json", {"tokenizer": tokenizer_json})
    model = p / "tokenizer.model"
    if model.is_file():
        if looks_like_tiktoken(model):
            return ModelFolder(p, "tiktoken", {"tokenizer": model})
        if looks_like_sentencepiece(model):
            return ModelFolder(p, "sentencepiece", {"tokenizer": model})
        raise_file_error(model, None, "neither a SentencePiece model nor a tiktoken file")
    vocab_json, merges = p / "vocab.json", p / "merges.txt"
    if vocab_json.is_file() and merges.is_file():
        return ModelFolder(p, "gpt2", {"tokenizer": vocab_json, "merges": merges})
    vocab_txt = p / "vocab.txt"
    if vocab_txt.is_file():
        return ModelFolder(p, "bert_vocab", {"tokenizer": vocab_txt})
    present = ", ".join(sorted(q.name for q in p.iterdir())[:20]) or "nothing"
    raise FileFormatError(str(p), None, "no tokenizer file in this folder: expected tokenizer.json, "
                          "tokenizer.model, vocab.json + merges.txt, or vocab.txt; it holds " + present)


def read_model_folder(path: PathLike) -> ModelFolder:
    """Find the tokenizer of a model folder and read its token configuration.

    Raises:
        FileFormatError: the path is not a folder (a Hub id gets its own message: ciyuan never
            downloads), the folder holds no tokenizer file, or a configuration file is corrupt.
    """
    p = Path(path)
    if not p.exists():
        hint = ""
        if _HUB_ID.fullmatch(str(path)):
            hint = (f"; {str(path)!r} looks like a Hugging Face Hub id, and ciyuan never downloads: fetch the "
                    f"folder first (e.g. `huggingface-cli download {path} --local-dir DIR`) and pass DIR")
        raise FileFormatError(str(p), None, "no such folder" + hint)
    if not p.is_dir():
        raise FileFormatError(str(p), None, "not a folder; use Tokenizer.from_file for a single file")
    folder = _choose_file(p)
    config_path = p / "tokenizer_config.json"
    if config_path.is_file():
        folder.config = _read_json(config_path)
        _folder_tokens(folder, folder.config, config_path)
    map_path = p / "special_tokens_map.json"
    if map_path.is_file():
        _folder_tokens(folder, _read_json(map_path), map_path)
    _added_tokens(folder)
    return folder
