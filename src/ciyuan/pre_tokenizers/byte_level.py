"""Hugging Face's ``ByteLevel`` pre-tokenizer: GPT-2's split, with an optional prefix space.

Hugging Face maps every byte of a piece to a printable character (``Ġ`` for the space) before
its BPE model sees it; ciyuan's byte-level BPE works on the raw bytes, so here ByteLevel is
only the cut: GPT-2's pattern (``use_regex``, on the native ``gpt2`` scanner) and, with
``add_prefix_space``, a space in front of a text that does not start with one (so the first
word encodes as it would inside a sentence). The prefix space points at the text's first
character, as in Hugging Face. ``trim_offsets`` belongs to the post-processor and decoder of
the same name; it is kept here only so that tokenizer.json round-trips.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from ciyuan import _core
from ciyuan.errors import ModelError
from ciyuan.normalizers.base import NormalizedString
from ciyuan.pre_tokenizers.base import PRE_TOKENIZERS, PreTokenizer, Span
from ciyuan.pre_tokenizers.split import _byte_to_char_spans

__all__ = ["ByteLevel"]


@PRE_TOKENIZERS.register
class ByteLevel(PreTokenizer):
    """Hugging Face's ``ByteLevel`` pre-tokenizer (the split; bytes stay bytes).

    Args:
        add_prefix_space: prepend a space to a text that does not start with one.
        trim_offsets: stored for tokenizer.json (offsets are trimmed by the post-processor).
        use_regex: cut with GPT-2's pattern; False keeps each text whole.

    Example:
        >>> ByteLevel().pre_tokenize_str("Hello world")
        [(' Hello', (0, 5)), (' world', (5, 11))]
        >>> ByteLevel(add_prefix_space=False).pre_tokenize_str("Hello world")
        [('Hello', (0, 5)), (' world', (5, 11))]
    """

    type_name = "ByteLevel"
    options = ("add_prefix_space", "trim_offsets", "use_regex")

    def __init__(self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True) -> None:
        for name, value in (("add_prefix_space", add_prefix_space), ("trim_offsets", trim_offsets),
                            ("use_regex", use_regex)):
            if not isinstance(value, bool):
                raise ModelError(f"ByteLevel's {name} must be true or false, got {value!r}")
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex
        # Without the prefix space the text is not rewritten: the native scanner (or no cut) runs.
        self.native_pattern: Optional[str] = "gpt2" if use_regex and not add_prefix_space else None
        self.passthrough = not use_regex and not add_prefix_space

    def split(self, text: str) -> List[Span]:
        """GPT-2's pieces of ``text`` (the prefix space is :meth:`pre_tokenize`'s)."""
        if not self.use_regex:
            return [(0, len(text))] if text else []
        return _byte_to_char_spans(text, _core.split_pieces("gpt2", text))

    def pre_tokenize(self, text: NormalizedString, offset: int = 0) -> Tuple[NormalizedString, List[Span]]:
        if self.add_prefix_space and not text.text.startswith(" "):
            text = text.prepend(" ")
        return text, self.split(text.text)
