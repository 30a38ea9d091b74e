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

from typing import Any, Collection, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple, Union

import regex

from ciyuan.errors import DisallowedSpecialTokenError, InvalidInputError

__all__ = ["SpecialSet", "SpecialTokenRules", "ORDINARY", "ALLOWED", "DISALLOWED"]

SpecialSet = Union[str, Collection[str]]  # "all" or a collection of special-token texts

#: The policy byte of one special token (as the native encoder reads it).
ORDINARY, ALLOWED, DISALLOWED = 0, 1, 2

_CACHED_POLICIES = 64


class SpecialTokenRules:
    """The special tokens of one tokenizer and the policies made of them.

    Args:
        special_tokens: special-token text -> id, in the tokenizer's order.
    """

    def __init__(self, special_tokens: Mapping[str, int]) -> None:
        self.special_tokens: Dict[str, int] = dict(special_tokens)
        self.names: List[str] = list(self.special_tokens)
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
        if len(self._policies) < _CACHED_POLICIES:
            self._policies[key] = policy
        return policy

    def _resolve(self, spec: Union[str, FrozenSet[str]], what: str) -> Set[str]:
        names = set(self.names)
        if spec == "all":
            return names
        if isinstance(spec, str):
            raise InvalidInputError(f"{what} must be 'all' or a collection of special tokens, not {spec!r}")
        unknown = set(spec) - names
        if unknown:
            raise InvalidInputError(
                f"{what} names {sorted(unknown)!r}, which are not special tokens of this tokenizer "
                f"(it has {sorted(names)!r})"
            )
        return set(spec)

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
        active = {n: (self.special_tokens[n], p == DISALLOWED) for n, p in zip(self.names, policy) if p != ORDINARY}
        matcher = None
        if active:
            pattern = regex.compile("|".join(regex.escape(n) for n in sorted(active, key=len, reverse=True)))
            matcher = (pattern, active)
        if len(self._matchers) < _CACHED_POLICIES:
            self._matchers[policy] = matcher
        return matcher
