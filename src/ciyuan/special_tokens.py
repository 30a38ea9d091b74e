"""Special tokens in input text: tiktoken's rules, shared by every encode path.

Each special token of a tokenizer is, for one call, *allowed* (its text becomes the special
token), *disallowed* (its text is an error: :class:`~ciyuan.errors.DisallowedSpecialTokenError`)
or *ordinary* (its text is encoded like any other). ``allowed_special`` and
``disallowed_special`` ("all" or a collection of token texts) decide; a token in both is
allowed. The decision travels to the native encoder as one byte per special token, in the
tokenizer's order (the codes below), and is cached per (allowed, disallowed) pair.

Example:
    >>> rules = SpecialTokenRules({"<|endoftext|>": 100257})
    >>> rules.policy((), "all")
    b'\\x02'
    >>> rules.segments("hi<|endoftext|>", rules.policy("all", "all"))
    [(0, 2, None), (2, 15, 100257), (15, 15, None)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Dict, FrozenSet, Iterable, List, Mapping, Optional, Set, Tuple, Union

import regex

from ciyuan.errors import DisallowedSpecialTokenError, InvalidInputError, ModelError

__all__ = ["SpecialSet", "SpecialTokenRules", "ORDINARY", "ALLOWED", "DISALLOWED", "AddedToken", "find_added",
           "added_pattern", "added_tokens_from_list"]

SpecialSet = Union[str, Collection[str]]  # "all" or a collection of special-token texts

#: The policy byte of one special token (as the native encoder reads it).
ORDINARY, ALLOWED, DISALLOWED = 0, 1, 2

_CACHED_POLICIES = 64


class SpecialTokenRules:
    """The special tokens of one tokenizer and the policies made of them.

    Args:
        special_tokens: special-token text -> id, in the tokenizer's order.
        always: text -> id of tokens found in every call whatever the arguments say (Hugging
            Face's added tokens without flags); their policy bytes follow the special tokens'.
        added: the texts of all the added tokens (accepted in ``allowed_special`` and
            ``disallowed_special``, where they change nothing).
    """

    def __init__(self, special_tokens: Mapping[str, int], always: Optional[Mapping[str, int]] = None,
                 added: Collection[str] = ()) -> None:
        self.special_tokens: Dict[str, int] = dict(special_tokens)
        self.names: List[str] = list(self.special_tokens)
        self.always: Dict[str, int] = dict(always or {})
        # Added tokens' texts: found in every call, so naming them in allowed_special (as code
        # written for tiktoken does with "<|endoftext|>") is accepted and changes nothing.
        self.added = frozenset(added)
        self._tail = bytes([ALLOWED]) * len(self.always)
        self._policies: Dict[Tuple[Union[str, FrozenSet[str]], Union[str, FrozenSet[str]]], bytes] = {}
        # policy -> (pattern of its active names, longest first; name -> (id, disallowed)), or None
        # when no name is active.
        self._matchers: Dict[bytes, Optional[Tuple[Any, Dict[str, Tuple[int, bool]]]]] = {}

    def policy(self, allowed_special: SpecialSet, disallowed_special: SpecialSet) -> bytes:
        """One policy byte per special token (:data:`ORDINARY`, :data:`ALLOWED`, :data:`DISALLOWED`).

        Raises:
            InvalidInputError: a name that is not a special token, or a string other than "all".
        """
        key = (
            allowed_special if isinstance(allowed_special, str) else frozenset(allowed_special),
            disallowed_special if isinstance(disallowed_special, str) else frozenset(disallowed_special),
        )
        policy = self._policies.get(key)
        if policy is not None:
            return policy
        allowed = self._resolve(key[0], "allowed_special")
        disallowed = (self._resolve(key[1], "disallowed_special") if key[1] != "all" else set(self.names)) - allowed
        policy = bytes(ALLOWED if n in allowed else DISALLOWED if n in disallowed else ORDINARY for n in self.names)
        policy += self._tail
        if len(self._policies) < _CACHED_POLICIES:
            self._policies[key] = policy
        return policy

    def _resolve(self, spec: Union[str, FrozenSet[str]], what: str) -> Set[str]:
        names = set(self.names)
        if spec == "all":
            return names
        if isinstance(spec, str):
            raise InvalidInputError(f"{what} must be 'all' or a collection of special tokens, not {spec!r}")
        unknown = set(spec) - names - self.added
        if unknown:
            raise InvalidInputError(
                f"{what} names {sorted(unknown)!r}, which are not special tokens of this tokenizer "
                f"(it has {sorted(names)!r})"
            )
        return set(spec) & names

    def segments(self, text: str, policy: bytes) -> List[Tuple[int, int, Optional[int]]]:
        """``text`` cut at the special tokens the policy does not leave ordinary: ``(start, end,
        special id or None)``, in order.

        Raises:
            DisallowedSpecialTokenError: the text holds a disallowed special token.
        """
        matcher = self._matcher(policy)
        if matcher is None:
            return [(0, len(text), None)]
        pattern, active = matcher
        segments: List[Tuple[int, int, Optional[int]]] = []
        at = 0
        for m in pattern.finditer(text):
            name = m.group()
            token_id, disallowed = active[name]
            if disallowed:
                raise DisallowedSpecialTokenError(
                    f"the text contains the special token {name!r} at character {m.start()}; pass "
                    f"allowed_special={{{name!r}}} to encode it as a special token, or "
                    "disallowed_special=() to encode it as ordinary text"
                )
            segments.append((at, m.start(), None))
            segments.append((m.start(), m.end(), token_id))
            at = m.end()
        segments.append((at, len(text), None))
        return segments

    def _matcher(self, policy: bytes) -> Optional[Tuple[Any, Dict[str, Tuple[int, bool]]]]:
        """The compiled pattern of the names ``policy`` does not leave ordinary and what each
        match means, or None when there are none (cached per policy, as :meth:`policy` is)."""
        if policy in self._matchers:
            return self._matchers[policy]
        ids = [*self.special_tokens.items(), *self.always.items()]
        active = {n: (i, p == DISALLOWED) for (n, i), p in zip(ids, policy) if p != ORDINARY}
        matcher = None
        if active:
            pattern = regex.compile("|".join(regex.escape(n) for n in sorted(active, key=len, reverse=True)))
            matcher = (pattern, active)
        if len(self._matchers) < _CACHED_POLICIES:
            self._matchers[policy] = matcher
        return matcher


# -- added tokens (Hugging Face's) ------------------------------------------------------------------

# One character: a word character, or whitespace (Unicode's, as Rust's regex \w and \s).
_WORD = regex.compile(r"\w")
_SPACE = regex.compile(r"\s")


@dataclass(frozen=True)
class AddedToken:
    """A token added on top of the model's vocabulary, as Hugging Face's ``AddedToken``: it is
    found in the input before the model runs (the longest match leftmost), and always becomes
    its own id.

    Args:
        content: the token's text.
        single_word: match only where the token is not part of a longer word (no word
            character, ``\\w``, right before or after it).
        lstrip, rstrip: the match takes the whitespace on its left / right with it.
        normalized: match on the normalized text (after the normalizer) instead of the input as
            given. Defaults to ``not special``, as in Hugging Face.
        special: a special token (``decode(..., skip_special_tokens=True)`` leaves it out).

    Example:
        >>> AddedToken("<mask>", lstrip=True, special=True)
        AddedToken(content='<mask>', single_word=False, lstrip=True, rstrip=False, normalized=False, special=True)
    """

    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: Optional[bool] = None
    special: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.content, str) or not self.content:
            raise InvalidInputError(f"an added token needs non-empty text, not {self.content!r}")
        if self.normalized is None:
            object.__setattr__(self, "normalized", not self.special)

    @property
    def plain(self) -> bool:
        """No flag changes where it matches: the native encoder can cut at it."""
        return not (self.single_word or self.lstrip or self.rstrip)

    def to_dict(self, token_id: int) -> Dict[str, Any]:
        """Hugging Face's form of the token in ``tokenizer.json``'s ``added_tokens``."""
        return {"id": token_id, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": bool(self.normalized), "special": self.special}


def find_added(text: str, pattern: Any, tokens: Mapping[str, Tuple[int, AddedToken]]) -> List[Tuple[int, int,
                                                                                                    Optional[int]]]:
    """``text`` cut at the added tokens ``pattern`` finds (their texts, longest first), with
    Hugging Face's rules for ``single_word`` (a match inside a word is skipped), ``lstrip`` and
    ``rstrip`` (the match grows over the whitespace beside it, never back over an earlier
    match): ``(start, end, id or None)`` in order, covering the text.

    Example:
        >>> tokens = {"<m>": (5, AddedToken("<m>", lstrip=True))}
        >>> find_added("a  <m>b", regex.compile("<m>"), tokens)
        [(0, 1, None), (1, 6, 5), (6, 7, None)]
    """
    out: List[Tuple[int, int, Optional[int]]] = []
    at = 0
    for m in pattern.finditer(text):
        start, stop = m.span()
        token_id, token = tokens[m.group()]
        if token.single_word and ((start > 0 and _WORD.match(text, start - 1)) or
                                  (stop < len(text) and _WORD.match(text, stop))):
            continue
        if token.lstrip:  # never back over the previous match
            while start > at and _SPACE.match(text, start - 1):
                start -= 1
        if token.rstrip:
            while stop < len(text) and _SPACE.match(text, stop):
                stop += 1
        if at < start:
            out.append((at, start, None))
        out.append((start, stop, token_id))
        at = stop
    if at < len(text) or not out:
        out.append((at, len(text), None))
    return out


def added_pattern(texts: Iterable[str]) -> Any:
    """A pattern that finds the leftmost, then longest, of ``texts`` (None for none)."""
    texts = sorted(set(texts), key=len, reverse=True)
    return regex.compile("|".join(regex.escape(t) for t in texts)) if texts else None


_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def added_tokens_from_list(items: Iterable[Any]) -> Dict[int, AddedToken]:
    """id -> AddedToken from Hugging Face's list form (``tokenizer.json``'s ``added_tokens``:
    objects with ``id``, ``content`` and the flags; a missing flag takes Hugging Face's default).

    Raises:
        ModelError: an entry that is not such an object, a bad id, or an id given twice.

    Example:
        >>> added_tokens_from_list([{"id": 7, "content": "<s>", "special": True}])[7].normalized
        False
    """
    out: Dict[int, AddedToken] = {}
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise ModelError(f"added tokens must be a list of objects, not {type(items).__name__}")
    for n, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ModelError(f"added token {n} must be an object with 'id' and 'content', not {item!r}")
        token_id, content = item.get("id"), item.get("content")
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < 1 << 32:
            raise ModelError(f"added token {n} ({content!r}) needs an integer id in 0..2**32-1, not {token_id!r}")
        if not isinstance(content, str) or not content:
            raise ModelError(f"added token {n} (id {token_id}) needs a non-empty 'content' string, not {content!r}")
        flags = {}
        for name in _FLAGS:
            value = item.get(name)
            if value is not None and not isinstance(value, bool):
                raise ModelError(f"added token {n} ({content!r}): {name!r} must be true or false, not {value!r}")
            if value is not None:
                flags[name] = value
        if token_id in out:
            raise ModelError(f"added tokens {out[token_id].content!r} and {content!r} share the id {token_id}")
        out[token_id] = AddedToken(content, **flags)
    return out
