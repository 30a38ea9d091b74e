"""Encoding: the result of encoding one text - ids, tokens, and the character span of the input
that each token came from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, List, Optional, Tuple

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["Encoding"]

Offsets = List[Tuple[int, int]]


class Encoding:
    """Ids, tokens and offsets of one encoded text.

    ``offsets[i]`` is the character span ``(start, end)`` of the original input that token ``i``
    came from, so ``text[start:end]`` is its source text. A byte-level token that holds only part
    of a character's bytes points at that whole character. Fields are computed on first use.

    Example:
        >>> enc = tok.encode("Hello world")          # doctest: +SKIP
        >>> enc.ids, enc.tokens, enc.offsets         # doctest: +SKIP
        ([9906, 1917], ['Hello', 'Ġworld'], [(0, 5), (5, 11)])
    """

    __slots__ = ("_ids", "_offsets", "_tokens", "_make_ids", "_make_offsets", "_tokenizer")

    def __init__(
        self,
        tokenizer: "Tokenizer",
        ids: Optional[List[int]] = None,
        offsets: Optional[Offsets] = None,
        make_ids: Optional[Callable[[], List[int]]] = None,
        make_offsets: Optional[Callable[[], Offsets]] = None,
    ) -> None:
        self._tokenizer = tokenizer
        self._ids = ids
        self._offsets = offsets
        self._tokens: Optional[List[str]] = None
        self._make_ids = make_ids
        self._make_offsets = make_offsets

    @property
    def ids(self) -> List[int]:
        if self._ids is None:
            self._ids = self._make_ids()  # type: ignore[misc]
        return self._ids

    @property
    def offsets(self) -> Offsets:
        if self._offsets is None:
            self._offsets = self._make_offsets()  # type: ignore[misc]
        return self._offsets

    @property
    def tokens(self) -> List[str]:
        if self._tokens is None:
            to_token = self._tokenizer.id_to_token
            self._tokens = [to_token(i) for i in self.ids]
        return self._tokens

    @property
    def attention_mask(self) -> List[int]:
        return [1] * len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        shown = self.ids[:8]
        more = ", ..." if len(self.ids) > 8 else ""
        return f"Encoding(n={len(self.ids)}, ids={shown}{more})"
