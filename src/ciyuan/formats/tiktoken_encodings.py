"""The named tiktoken encodings: their pattern, special tokens, and how to know their files.

A ``.tiktoken`` file holds only ranks; the pattern that cuts text into pieces and the special
tokens come from the encoding's name. :data:`ENCODINGS` lists the published ones (OpenAI's
``gpt2``/``r50k_base``, ``p50k_base``, ``cl100k_base``, ``o200k_base``, and Meta's Llama 3,
whose ``tokenizer.model`` is a tiktoken file). Each has the number of ranks and the SHA-256 of
its official file, so :func:`identify_tiktoken` tells a file's encoding by its content alone:
counting lines is cheap, and only a file with a known count is hashed.

Where the figures come from: cl100k_base and o200k_base hash the files in the shared data
(their sha256 are tiktoken's published ``expected_hash``); r50k_base's was checked by writing
GPT-2's ``encoder.json`` + ``vocab.bpe`` as a ``.tiktoken`` file (same bytes); p50k_base's is
tiktoken's published hash; Llama 3's is the sha256 of Meta's ``tokenizer.model`` (2,183,982
bytes, 128,000 ranks; the same file ships with Llama 3.1 and 3.2).

Example:
    >>> ENCODINGS["llama3"].special_tokens["<|eot_id|>"]
    128009
    >>> sorted(ENCODINGS["cl100k_base"].special_tokens.values())
    [100257, 100258, 100259, 100260, 100276]
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

from ciyuan._io import PathLike
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS

__all__ = ["NamedEncoding", "ENCODINGS", "ENCODING_NAMES", "LLAMA3_PATTERN", "LLAMA3_SPECIAL_TOKENS",
           "identify_tiktoken", "identify_tiktoken_bytes"]

#: Llama 3's pattern, as Meta's ``tokenizer.py`` spells it (ciyuan's native scanner ``"llama3"``):
#: cl100k_base's alternatives in tiktoken's older spelling. It is not the same splitter as today's
#: cl100k pattern at the end of a text: ``"a\n\n "`` is ``a | \n\n | ␠`` here and ``a | \n\n␠``
#: with cl100k_base (whose ``\s++$`` takes the whole trailing run), so Llama 3 keeps its own.
LLAMA3_PATTERN = NAMED_PATTERNS["llama3"]


def _llama3_special_tokens() -> Dict[str, int]:
    # 256 special tokens after the 128,000 ranks: ten named slots (four of them reserved), then
    # <|reserved_special_token_5|> ... <|reserved_special_token_250|> (Meta's Llama 3 numbering).
    names = ["<|begin_of_text|>", "<|end_of_text|>"]
    names += [f"<|reserved_special_token_{i}|>" for i in range(4)]
    names += ["<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>"]
    names += [f"<|reserved_special_token_{i}|>" for i in range(5, 251)]
    return {name: 128000 + i for i, name in enumerate(names)}


#: Llama 3's 256 special tokens, ids 128000-128255.
LLAMA3_SPECIAL_TOKENS: Dict[str, int] = _llama3_special_tokens()


@dataclass(frozen=True)
class NamedEncoding:
    """One published encoding.

    Attributes:
        name: tiktoken's name (``"llama3"`` for Meta's Llama 3).
        pattern: the pre-tokenizer: a named pattern of ciyuan's native scanners, or a regex.
        special_tokens: text -> id.
        n_ranks: how many ranks its file holds.
        sha256: the SHA-256 of its official file (hex).
    """

    name: str
    pattern: str
    special_tokens: Dict[str, int] = field(default_factory=dict)
    n_ranks: int = 0
    sha256: str = ""


_ENDOFTEXT = "<|endoftext|>"
_R50K_SHA = "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"

#: The named encodings, by name (``gpt2`` and ``r50k_base`` share one file).
ENCODINGS: Dict[str, NamedEncoding] = {
    e.name: e
    for e in [
        NamedEncoding("gpt2", "gpt2", {_ENDOFTEXT: 50256}, 50256, _R50K_SHA),
        NamedEncoding("r50k_base", "r50k_base", {_ENDOFTEXT: 50256}, 50256, _R50K_SHA),
        NamedEncoding("p50k_base", "p50k_base", {_ENDOFTEXT: 50256}, 50280,
                      "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"),
        NamedEncoding("cl100k_base", "cl100k_base",
                      {_ENDOFTEXT: 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                       "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
                      100256, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
        NamedEncoding("o200k_base", "o200k_base", {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018},
                      199998, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
        NamedEncoding("llama3", "llama3", LLAMA3_SPECIAL_TOKENS, 128000,
                      "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    ]
}

#: The names, in the order error messages list them.
ENCODING_NAMES = tuple(ENCODINGS)

def identify_tiktoken_bytes(data: bytes) -> Optional[str]:
    """The name of the encoding whose official file is exactly ``data``, or None.

    ``r50k_base``'s file is also ``gpt2``'s: it is named ``r50k_base``.

    Example:
        >>> identify_tiktoken_bytes(b"IQ== 0\\n") is None
        True
    """
    count = data.count(b"\n")
    candidates = [e for e in ENCODINGS.values() if e.n_ranks == count and e.name != "gpt2"]
    if not candidates:
        return None
    digest = hashlib.sha256(data).hexdigest()
    for e in candidates:
        if e.sha256 == digest:
            return e.name
    return None


def identify_tiktoken(path: PathLike) -> Optional[str]:
    """The name of the encoding whose official file ``path`` is (by rank count and SHA-256), or
    None for any other file (unreadable ones included: the reader reports those)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return identify_tiktoken_bytes(data)
