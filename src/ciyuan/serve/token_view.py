"""What the page draws for one encoding: every token with its id, bytes, span and kind, the
counts, and where the boundaries of several tokenizers (or segmentation methods) differ.

Kinds (each drawn its own way, so that where text falls apart into bytes shows at a glance):

- ``special``: a special or added token (``[CLS]``, ``<|endoftext|>``);
- ``unknown``: the model's unknown token (``[UNK]``, ``<unk>``);
- ``byte``: a byte-fallback piece (``<0xE4>``) or a byte-level piece that is not whole UTF-8
  (a third of a Chinese character in GPT-2);
- ``space``: whitespace only (SentencePiece's ``▁`` counts as a space);
- ``text``: anything else.

Offsets are in characters (code points) of the original text, as :class:`ciyuan.Encoding`
gives them.

Example:
    >>> from ciyuan import Tokenizer
    >>> tok = Tokenizer.train(["hello world"] * 3, None)
    >>> view = encoding_view(tok, "hello world")
    >>> [t["text"] for t in view["tokens"]], view["counts"]["characters"]
    (['hello', 'world'], 11)
    >>> boundary_diff(11, {"a": [(0, 5), (6, 11)], "b": [(0, 11)]})
    [{'pos': 5, 'by': ['a']}, {'pos': 6, 'by': ['a']}]
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from ciyuan.encoding import Encoding
from ciyuan.tokenizer import Tokenizer

__all__ = ["encoding_view", "token_kind", "readable", "counts", "boundary_diff"]

_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def token_kind(token: str, data: bytes, special: bool, unknown: bool) -> str:
    """The kind of one token (see the module's list).

    Example:
        >>> token_kind("<0xE4>", b"\\xe4", False, False), token_kind("Ġ", b" ", False, False)
        ('byte', 'space')
        >>> token_kind("▁", "▁".encode(), False, False), token_kind("[UNK]", b"[UNK]", False, True)
        ('space', 'unknown')
        >>> token_kind("ä¸", b"\\xe4\\xb8", False, False), token_kind("the", b"the", False, False)
        ('byte', 'text')
    """
    if special:
        return "special"
    if unknown:
        return "unknown"
    if _BYTE_PIECE.fullmatch(token):
        return "byte"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "byte"
    if text and text.replace("\u2581", " ").isspace():
        return "space"
    return "text"


def readable(data: bytes) -> str:
    """A token's bytes as text: whole UTF-8 characters as themselves, the bytes of a cut
    character in hex between angle brackets (separated by thin spaces, which the page does not
    mark as whitespace).

    Example:
        >>> readable(" 世".encode()[:3])
        ' ⟨e4\u2009b8⟩'
        >>> readable(b"ok")
        'ok'
    """
    text = data.decode("utf-8", "surrogateescape")
    # surrogateescape turns each byte that is not part of whole UTF-8 into U+DC80..U+DCFF.
    return re.sub("[\udc80-\udcff]+", lambda m: "⟨" + "\u2009".join(f"{ord(c) - 0xDC00:02x}" for c in m.group()) + "⟩",
                  text)


def counts(text: str, n_tokens: int) -> Dict[str, Any]:
    """Tokens, characters, UTF-8 bytes and bytes per token (None for no token).

    Example:
        >>> counts("中文 ok", 3)
        {'tokens': 3, 'characters': 5, 'bytes': 9, 'bytes_per_token': 3.0}
    """
    n_bytes = len(text.encode("utf-8", "surrogatepass"))
    return {"tokens": n_tokens, "characters": len(text), "bytes": n_bytes,
            "bytes_per_token": round(n_bytes / n_tokens, 3) if n_tokens else None}


def _unknown_token(tok: Tokenizer) -> Any:
    return getattr(tok.model, "unk_token", None)


def encoding_view(tok: Tokenizer, text: str, *, encoding: Optional[Encoding] = None,
                  limit: Optional[int] = None) -> Dict[str, Any]:
    """``tok.encode(text)`` (or ``encoding``, its result) as the page draws it: ``tokens``
    (``id``, ``token``, ``text`` - the token's bytes as text, or ``null`` when they are not
    whole UTF-8 -, ``shown`` - the same with the bytes of cut characters in hex
    (:func:`readable`) -, ``bytes`` in hex, ``start``, ``end``, ``kind``), ``ids``, ``counts``
    and ``hidden``: how many tokens past ``limit`` are left out of ``tokens`` (a browser draws
    tens of thousands of coloured tokens, not millions; ``ids`` and ``counts`` are whole).

    Example:
        >>> from ciyuan import Tokenizer
        >>> tok = Tokenizer.train(["a b c"] * 3, None)
        >>> view = encoding_view(tok, "a b c a", limit=2)
        >>> len(view["tokens"]), view["hidden"], view["counts"]["tokens"]
        (2, 2, 4)
    """
    enc = encoding if encoding is not None else tok.encode(text)
    ids, tokens, offsets, special_mask = enc.ids, enc.tokens, enc.offsets, enc.special_tokens_mask
    drawn = len(ids) if limit is None else min(limit, len(ids))
    # One native call for every token's bytes rather than one per token.
    pieces = tok.decode_bytes_batch([[i] for i in ids[:drawn]]) if drawn else []
    specials = set(tok.special_tokens.values()) | set(tok.added_tokens)
    unk = _unknown_token(tok)
    out: List[Dict[str, Any]] = []
    for i, token_id in enumerate(ids[:drawn]):
        data = pieces[i]
        # The unknown token is a special token too, but it stands for text the model could not
        # cut: it gets a colour of its own unless the post-processor added it.
        unknown = unk is not None and tokens[i] == unk and not special_mask[i]
        special = bool(special_mask[i]) or (token_id in specials and not unknown)
        kind = token_kind(tokens[i], data, special, unknown)
        try:
            shown = data.decode("utf-8")
        except UnicodeDecodeError:
            shown = None
        start, end = offsets[i]
        out.append({"id": token_id, "token": tokens[i], "text": shown,
                    "shown": shown if shown is not None else readable(data), "bytes": data.hex(" "),
                    "start": start, "end": end, "kind": kind})
    return {"tokens": out, "ids": list(ids), "counts": counts(text, len(ids)), "hidden": len(ids) - drawn}


def boundary_diff(length: int, spans: Mapping[str, Sequence[Tuple[int, int]]]) -> List[Dict[str, Any]]:
    """Where the cuts of several segmentations of one text differ: every inner position (0 <
    pos < ``length``) where some but not all of them start or end a piece, with the names of
    those that cut there. Empty pieces (special tokens added around the text) cut nowhere.

    Example:
        >>> boundary_diff(6, {"fmm": [(0, 3), (3, 4), (4, 6)], "bmm": [(0, 2), (2, 4), (4, 6)]})
        [{'pos': 2, 'by': ['bmm']}, {'pos': 3, 'by': ['fmm']}]
    """
    cuts: Dict[int, List[str]] = {}
    for name, pieces in spans.items():
        mine: Set[int] = set()
        for start, end in pieces:
            if end > start:
                mine.update(p for p in (start, end) if 0 < p < length)
        for p in mine:
            cuts.setdefault(p, []).append(name)
    return [{"pos": p, "by": by} for p, by in sorted(cuts.items()) if len(by) < len(spans)]
