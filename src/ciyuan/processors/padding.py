"""Padding: make encodings the same length, exactly as Hugging Face ``tokenizers`` does.

The target is the longest encoding of the batch (``"longest"``) or a fixed ``length``, rounded up
to a multiple of ``pad_to_multiple_of``; shorter encodings get ``pad_id`` tokens (attention mask 0,
special-tokens mask 1, offsets (0, 0), sequence id None) on the right or the left. Overflowing
windows are padded to the same target. Encodings already long enough are left as they are
(padding never truncates). Padding is a constant number of list operations per encoding.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors.base import check_count

__all__ = ["Padding", "pad", "pad_batch"]

STRATEGIES = ("longest", "fixed")
DIRECTIONS = ("right", "left")


class Padding:
    """Padding settings.

    Args:
        strategy: ``"longest"`` (pad to the longest of the batch) or ``"fixed"`` (to ``length``);
            default: ``"fixed"`` when ``length`` is given, else ``"longest"``.
        length: the fixed length.
        pad_to_multiple_of: round the target up to a multiple of this (None or 0: no rounding).
        direction: ``"right"`` or ``"left"``.
        pad_id, pad_type_id, pad_token: what a padding token is.

    Example:
        >>> Padding(length=128, pad_to_multiple_of=8).strategy
        'fixed'
    """

    type_name = "Padding"
    __slots__ = ("strategy", "length", "pad_to_multiple_of", "direction", "pad_id", "pad_type_id", "pad_token")

    def __init__(self, strategy: Optional[str] = None, length: Optional[int] = None, *,
                 pad_to_multiple_of: Optional[int] = None, direction: str = "right", pad_id: int = 0,
                 pad_type_id: int = 0, pad_token: str = "[PAD]") -> None:
        if strategy is None:
            strategy = "longest" if length is None else "fixed"
        if strategy not in STRATEGIES:
            raise InvalidInputError(f"padding strategy must be one of {STRATEGIES}, not {strategy!r}")
        if strategy == "fixed" and length is None:
            raise InvalidInputError("padding strategy 'fixed' needs a length")
        if strategy == "longest" and length is not None:
            raise InvalidInputError("padding strategy 'longest' takes no length (use strategy='fixed')")
        if direction not in DIRECTIONS:
            raise InvalidInputError(f"padding direction must be one of {DIRECTIONS}, not {direction!r}")
        if not isinstance(pad_token, str):
            raise InvalidInputError(f"pad_token must be a string, not {pad_token!r}")
        self.strategy = strategy
        self.length = None if length is None else check_count(length, "length")
        self.pad_to_multiple_of = (None if pad_to_multiple_of is None
                                   else check_count(pad_to_multiple_of, "pad_to_multiple_of"))
        self.direction = direction
        self.pad_id = check_count(pad_id, "pad_id")
        self.pad_type_id = check_count(pad_type_id, "pad_type_id")
        self.pad_token = pad_token

    def target(self, lengths: Sequence[int]) -> int:
        """The length a batch with these lengths is padded to."""
        if self.strategy == "fixed" and self.length is not None:  # __init__: "fixed" has a length
            target = self.length
        else:
            target = max(lengths, default=0)
        multiple = self.pad_to_multiple_of
        if multiple and target % multiple:
            target += multiple - target % multiple
        return target

    def to_dict(self) -> Dict[str, Any]:
        return {"type": self.type_name, "strategy": self.strategy, "length": self.length,
                "pad_to_multiple_of": self.pad_to_multiple_of, "direction": self.direction,
                "pad_id": self.pad_id, "pad_type_id": self.pad_type_id, "pad_token": self.pad_token}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Padding":
        if not isinstance(data, dict) or data.get("type") != cls.type_name:
            raise InvalidInputError(f"not a Padding description: {data!r}")
        fields = {k: v for k, v in data.items() if k != "type"}
        return cls(**fields)

    def to_hf_dict(self) -> Dict[str, Any]:
        """The ``"padding"`` entry of a Hugging Face ``tokenizer.json``."""
        return {"strategy": "BatchLongest" if self.strategy == "longest" else {"Fixed": self.length},
                "direction": self.direction.capitalize(), "pad_to_multiple_of": self.pad_to_multiple_of,
                "pad_id": self.pad_id, "pad_type_id": self.pad_type_id, "pad_token": self.pad_token}

    @classmethod
    def from_hf_dict(cls, data: Dict[str, Any]) -> "Padding":
        """Read the ``"padding"`` entry of a Hugging Face ``tokenizer.json``."""
        if not isinstance(data, dict):
            raise InvalidInputError(f"not a Hugging Face padding description: {data!r}")
        strategy = data.get("strategy", "BatchLongest")
        if strategy == "BatchLongest":
            length = None
        elif isinstance(strategy, dict) and set(strategy) == {"Fixed"}:
            length = strategy["Fixed"]
        else:
            raise InvalidInputError(f"unknown Hugging Face padding strategy {strategy!r}")
        return cls(length=length, pad_to_multiple_of=data.get("pad_to_multiple_of"),
                   direction=str(data.get("direction", "Right")).lower(), pad_id=data.get("pad_id", 0),
                   pad_type_id=data.get("pad_type_id", 0), pad_token=data.get("pad_token", "[PAD]"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Padding) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "type")
        return f"Padding({shown})"


def _owned(encoding: Encoding) -> Encoding:
    # Flat encodings (straight from a model) may be shared; pad a composed copy instead.
    return encoding if encoding.composed else encoding.copy()


def pad_batch(encodings: Sequence[Encoding], padding: Padding) -> List[Encoding]:
    """Pad every encoding of a batch to the batch's target length.

    Composed encodings (any that went through :func:`~ciyuan.processors.post_process`) are padded
    in place; flat ones are left alone and a padded copy is returned instead - use the result.

    Example:
        >>> a = Encoding(None, ids=[5, 6, 7], offsets=[(0, 1), (1, 2), (2, 3)], tokens=["a", "b", "c"])
        >>> b = Encoding(None, ids=[8], offsets=[(0, 1)], tokens=["d"])
        >>> [e.ids for e in pad_batch([a, b], Padding(pad_to_multiple_of=4))]
        [[5, 6, 7, 0], [8, 0, 0, 0]]
    """
    out = [_owned(e) for e in encodings]
    if not out:
        return out
    target = padding.target([len(e) for e in out])
    for e in out:
        e.pad(target, padding.direction, padding.pad_id, padding.pad_type_id, padding.pad_token)
    return out


def pad(encoding: Encoding, padding: Padding) -> Encoding:
    """Pad one encoding (``"longest"`` means its own length, rounded up to the multiple); see
    :func:`pad_batch`."""
    return pad_batch([encoding], padding)[0]
