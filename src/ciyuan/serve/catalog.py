"""The tokenizers a server offers: those named on the command line, those found in the allowed
folders (loaded on first use), uploaded files and tokenizers trained on the page.

Every entry has a unique name, which is what the page and the API use. Loading happens once
per entry, on a server thread; concurrent requests for the same entry wait for that one load.

Example:
    >>> from ciyuan import Tokenizer
    >>> catalog = Catalog()
    >>> tok = Tokenizer.train(["low lower lowest"] * 4, None)
    >>> catalog.add_loaded("tiny", tok, origin="trained").name
    'tiny'
    >>> catalog.get("tiny").vocab_size == tok.vocab_size
    True
    >>> catalog.get("nope")
    Traceback (most recent call last):
    ...
    ciyuan.serve.catalog.UnknownTokenizerError: no tokenizer named 'nope'; GET /api/tokenizers lists them
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from ciyuan.errors import CiyuanError
from ciyuan.tokenizer import Tokenizer

__all__ = ["Catalog", "Entry", "UnknownTokenizerError", "load_tokenizer_file"]


class UnknownTokenizerError(CiyuanError, LookupError):
    """No tokenizer of that name (answered with 404)."""


def load_tokenizer_file(path: Path) -> Tokenizer:
    """Load ``path`` as :meth:`Tokenizer.load` does. A BERT vocabulary is lowercased unless its
    name says it is cased (``bert-base-cased-vocab.txt``), as the models of those names are."""
    name = path.name.lower()
    cased = "cased" in name and "uncased" not in name
    return Tokenizer.load(path, lowercase=not cased)


@dataclass
class Entry:
    """One tokenizer on offer. ``origin`` is ``"command line"``, ``"folder"`` (found in an
    allowed folder, loaded when first used), ``"upload"`` or ``"trained"``."""

    name: str
    origin: str
    source: str
    kind: str = ""
    loader: Optional[Callable[[], Tokenizer]] = None
    tokenizer: Optional[Tokenizer] = None
    error: Optional[str] = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def load(self) -> Tokenizer:
        """The tokenizer, loaded now if it was not yet (once, whatever the number of callers).

        Raises:
            CiyuanError: the file does not load (the same error again on every later call).
        """
        with self._lock:
            if self.tokenizer is None:
                if self.loader is None:  # pragma: no cover - every entry has one or the other
                    raise CiyuanError(f"tokenizer {self.name!r} has nothing to load")
                try:
                    self.tokenizer = self.loader()
                except CiyuanError as e:
                    self.error = str(e)
                    raise
                self.error = None
            return self.tokenizer

    def describe(self) -> Dict[str, Any]:
        """What ``GET /api/tokenizers`` says of this entry."""
        tok = self.tokenizer
        info: Dict[str, Any] = {"name": self.name, "origin": self.origin, "source": self.source, "kind": self.kind,
                                "loaded": tok is not None}
        if tok is not None:
            info["vocab_size"] = tok.vocab_size
            info["model"] = type(tok.model).__name__
        if self.error:
            info["error"] = self.error
        return info


class Catalog:
    """Named tokenizers, safe to use from several server threads."""

    def __init__(self) -> None:
        self._entries: Dict[str, Entry] = {}
        self._lock = threading.Lock()

    def _unique(self, name: str) -> str:
        """``name``, or ``name-2``, ``name-3``... when it is taken (the caller holds the lock)."""
        if name not in self._entries:
            return name
        n = 2
        while f"{name}-{n}" in self._entries:
            n += 1
        return f"{name}-{n}"

    def add(self, name: str, origin: str, source: str, loader: Callable[[], Tokenizer], kind: str = "") -> Entry:
        """Offer a tokenizer that loads when first used; its name is made unique."""
        with self._lock:
            entry = Entry(self._unique(name), origin, source, kind, loader)
            self._entries[entry.name] = entry
            return entry

    def add_loaded(self, name: str, tokenizer: Tokenizer, origin: str, source: str = "", kind: str = "") -> Entry:
        """Offer a tokenizer already in memory; its name is made unique."""
        with self._lock:
            entry = Entry(self._unique(name), origin, source, kind, tokenizer=tokenizer)
            self._entries[entry.name] = entry
            return entry

    def entry(self, name: str) -> Entry:
        """The entry called ``name``.

        Raises:
            UnknownTokenizerError: there is none.
        """
        with self._lock:
            entry = self._entries.get(name) if isinstance(name, str) else None
        if entry is None:
            raise UnknownTokenizerError(f"no tokenizer named {name!r}; GET /api/tokenizers lists them")
        return entry

    def get(self, name: str) -> Tokenizer:
        """The tokenizer called ``name``, loaded if need be."""
        return self.entry(name).load()

    def by_source(self, source: str) -> Optional[Entry]:
        """The entry read from file ``source``, if any (a folder's file is offered once)."""
        with self._lock:
            return next((e for e in self._entries.values() if e.source == source), None)

    def entries(self) -> List[Entry]:
        """Every entry, in the order they were added."""
        with self._lock:
            return list(self._entries.values())
