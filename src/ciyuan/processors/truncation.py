"""Truncation: cut encodings to ``max_length`` tokens, keeping what was cut as overflowing
windows, exactly as Hugging Face ``tokenizers`` does.

Strategies for a pair (for one sequence they all cut that sequence, except ``only_second``):

* ``longest_first`` - with n1 <= n2 the lengths: keep n1 and give the second ``max(n1, max_length
  - n1)``; if that is still too long, split ``max_length`` in halves (the odd token to the longer
  sequence). Each sequence is then truncated on its own.
* ``only_first`` / ``only_second`` - remove every extra token from that one sequence.

A truncated sequence keeps its first (``direction="right"``) or last (``"left"``) window; the
following windows, each ``max_length`` long and overlapping the previous by ``stride`` tokens,
become its ``overflowing`` encodings. The cost is linear in the number of tokens.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors.base import check_count

__all__ = ["Truncation", "truncate_encodings"]

STRATEGIES = ("longest_first", "only_first", "only_second")
DIRECTIONS = ("right", "left")


class Truncation:
    """Truncation settings.

    Args:
        max_length: most tokens per encoding, special tokens included.
        stride: tokens each overflowing window repeats from the previous one.
        strategy: ``"longest_first"``, ``"only_first"`` or ``"only_second"``.
        direction: ``"right"`` keeps the start, ``"left"`` keeps the end.

    Example:
        >>> Truncation(128, stride=16, strategy="only_second")
        Truncation(max_length=128, stride=16, strategy='only_second', direction='right')
    """

    type_name = "Truncation"
    __slots__ = ("max_length", "stride", "strategy", "direction")

    def __init__(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                 direction: str = "right") -> None:
        self.max_length = check_count(max_length, "max_length")
        self.stride = check_count(stride, "stride")
        if strategy not in STRATEGIES:
            raise InvalidInputError(f"truncation strategy must be one of {STRATEGIES}, not {strategy!r}")
        if direction not in DIRECTIONS:
            raise InvalidInputError(f"truncation direction must be one of {DIRECTIONS}, not {direction!r}")
        self.strategy = strategy
        self.direction = direction

    def check(self, num_special_tokens: int) -> None:
        """Refuse a stride that can never fit, as HF's ``enable_truncation`` does.

        ``num_special_tokens`` is what the post-processor adds to a single sequence. Like HF, a
        ``max_length`` below it is not checked (it then never truncates, see post_process).

        Raises:
            InvalidInputError: ``stride`` is larger than ``max_length - num_special_tokens``.
        """
        effective = self.max_length - num_special_tokens
        if 0 <= effective < self.stride:
            raise InvalidInputError(
                f"truncation stride {self.stride} is larger than the effective max length {effective} "
                f"(= max_length {self.max_length} - {num_special_tokens} special tokens); use a smaller stride"
            )

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "max_length": self.max_length, "stride": self.stride,
                "strategy": self.strategy, "direction": self.direction}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Truncation":
        if not isinstance(data, dict) or data.get("type") != cls.type_name:
            raise InvalidInputError(f"not a Truncation description: {data!r}")
        return cls(data["max_length"], data.get("stride", 0), data.get("strategy", "longest_first"),
                   data.get("direction", "right"))

    _HF_STRATEGIES = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}

    def to_hf_dict(self) -> Dict[str, Any]:
        """The ``"truncation"`` entry of a Hugging Face ``tokenizer.json``."""
        return {"direction": self.direction.capitalize(), "max_length": self.max_length,
                "strategy": self._HF_STRATEGIES[self.strategy], "stride": self.stride}

    @classmethod
    def from_hf_dict(cls, data: Dict[str, Any]) -> "Truncation":
        """Read the ``"truncation"`` entry of a Hugging Face ``tokenizer.json``."""
        names = {v: k for k, v in cls._HF_STRATEGIES.items()}
        if not isinstance(data, dict) or data.get("strategy", "LongestFirst") not in names:
            raise InvalidInputError(f"not a Hugging Face truncation description: {data!r}")
        return cls(data.get("max_length", 512), data.get("stride", 0), names[data.get("strategy", "LongestFirst")],
                   str(data.get("direction", "Right")).lower())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Truncation) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (f"Truncation(max_length={self.max_length}, stride={self.stride}, "
                f"strategy={self.strategy!r}, direction={self.direction!r})")


def _cut(encoding: Encoding, max_length: int, stride: int, direction: str) -> None:
    try:
        encoding.truncate(max_length, stride, direction)
    except InvalidInputError:
        # Encoding.truncate checks the stride (before changing anything); here its message says
        # which length that is. A negative max_length keeps truncate's own message.
        if max_length < 0:
            raise
        raise InvalidInputError(
            f"truncation stride {stride} must be smaller than the length {max_length} a sequence is cut to "
            "(max_length minus the special tokens, shared between the two sequences of a pair); "
            "use a smaller stride or a larger max_length"
        ) from None


def truncate_encodings(encoding: Encoding, pair: Optional[Encoding], truncation: Truncation,
                       max_length: Optional[int] = None) -> Tuple[Encoding, Optional[Encoding]]:
    """Truncate ``encoding`` (and ``pair``) in place to ``max_length`` tokens in all (default
    ``truncation.max_length``), HF's ``truncate_encodings``. Both must be composed Encodings
    owned by the caller.

    Raises:
        InvalidInputError: ``only_second`` without a pair; the sequence to cut is too short to
            reach ``max_length``; ``stride`` not smaller than the length a sequence is cut to.
    """
    limit = truncation.max_length if max_length is None else max_length
    stride = truncation.stride
    direction = truncation.direction
    if limit == 0:
        encoding.truncate(0, stride, direction)
        if pair is not None:
            pair.truncate(0, stride, direction)
        return encoding, pair
    total = len(encoding) + (len(pair) if pair is not None else 0)
    if total <= limit:
        return encoding, pair
    to_remove = total - limit
    if truncation.strategy == "longest_first":
        if pair is None:
            _cut(encoding, limit, stride, direction)
            return encoding, pair
        n1, n2 = len(encoding), len(pair)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > limit else max(n1, limit - n1)
        if n1 + n2 > limit:
            n1 = limit // 2
            n2 = n1 + limit % 2
        if swap:
            n1, n2 = n2, n1
        _cut(encoding, n1, stride, direction)
        _cut(pair, n2, stride, direction)
        return encoding, pair
    if truncation.strategy == "only_first":
        target = encoding
    elif pair is None:
        raise InvalidInputError("truncation strategy 'only_second' needs a pair of sequences, but only one was given")
    else:
        target = pair
    if len(target) <= to_remove:
        which = "first" if target is encoding else "second"
        raise InvalidInputError(
            f"cannot truncate to max_length {truncation.max_length}: the {which} sequence ({len(target)} tokens) "
            f"is too short to remove the {to_remove} extra tokens; use strategy 'longest_first' or a larger max_length"
        )
    _cut(target, len(target) - to_remove, stride, direction)
    return encoding, pair
