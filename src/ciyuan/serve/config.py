"""What a ``ciyuan serve`` server is allowed to do: where it listens, which tokenizers and
dictionaries it starts with, which folders it may read, and how large a request may be.

Safe by default: it listens on 127.0.0.1 only, reads no folder unless one is named, and answers
a request over its limit with 413 before reading it.

Example:
    >>> config = ServeConfig(tokenizers=["gpt2=gpt2/tokenizer.json"], max_request_bytes=parse_size("2MB"))
    >>> config.max_request_bytes
    2097152
    >>> config.loopback
    True
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Sequence, Tuple

from ciyuan.errors import InvalidInputError

__all__ = ["ServeConfig", "parse_size", "format_size", "split_spec", "DEFAULT_HOST", "DEFAULT_PORT"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

# K, M and G are powers of 1024 with or without B/iB, as --memory-limit reads them.
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
          "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")


def parse_size(value: str, what: str = "size") -> int:
    """Bytes of a size such as ``"2MB"``, ``"512k"`` or ``"1048576"``.

    Example:
        >>> parse_size("64MB"), parse_size("1.5k")
        (67108864, 1536)
        >>> parse_size("lots", "--max-upload-size")
        Traceback (most recent call last):
        ...
        ciyuan.errors.InvalidInputError: --max-upload-size must be bytes or a size such as '2MB', not 'lots'
    """
    m = _SIZE.fullmatch(value)
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if m is None or unit is None:
        raise InvalidInputError(f"{what} must be bytes or a size such as '2MB', not {value!r}")
    size = int(float(m.group(1)) * unit)
    if size < 1:
        raise InvalidInputError(f"{what} must be at least one byte, not {value!r}")
    return size


def format_size(size: int) -> str:
    """A byte count for people: ``"2 MiB"``, ``"1.5 KiB"``, ``"300 bytes"``.

    Example:
        >>> format_size(2 << 20), format_size(1536), format_size(300)
        ('2 MiB', '1.5 KiB', '300 bytes')
    """
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{size} bytes"


def split_spec(spec: str) -> Tuple[str, str]:
    """``NAME=PATH`` -> ``(NAME, PATH)``; a bare ``PATH`` is named after its file.

    Example:
        >>> split_spec("gpt2=models/gpt2/tokenizer.json")
        ('gpt2', 'models/gpt2/tokenizer.json')
        >>> split_spec("data/cl100k_base.tiktoken")
        ('cl100k_base', 'data/cl100k_base.tiktoken')
    """
    name, sep, path = spec.partition("=")
    # A path may hold '=' itself; only a plain name before it makes it a NAME=PATH spec.
    if sep and name and re.fullmatch(r"[\w.\-]+", name):
        return name, path
    p = Path(spec)
    return (p.stem if p.suffix else p.name) or spec, spec


@dataclass
class ServeConfig:
    """The server's settings (``ciyuan serve``'s flags).

    Args:
        host: the address to listen on; 127.0.0.1 unless told otherwise.
        port: the TCP port (0: any free port).
        tokenizers: files to load at start, as ``PATH`` or ``NAME=PATH`` (any file
            :meth:`ciyuan.Tokenizer.load` reads). These may be anywhere: the person starting the
            server named them.
        allow_dirs: folders whose files the page may list and load; no other file is read.
        dictionaries: segmentation dictionaries (``PATH`` or ``NAME=PATH``).
        corpora: corpora the plots view may measure besides the text box (``PATH`` or
            ``NAME=PATH``; a text file, or a folder of one ``*.txt`` per language).
        max_request_bytes: the largest request body (JSON); more gets 413.
        max_upload_bytes: the largest uploaded file (a tokenizer or a training corpus).
        max_trained_vocab: the largest vocabulary the page may train.
        extra_hosts: more ``Host`` names to answer on a loopback address (a name this machine
            has in ``/etc/hosts``, say).
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tokenizers: Sequence[str] = ()
    allow_dirs: Sequence[str] = ()
    dictionaries: Sequence[str] = ()
    corpora: Sequence[str] = ()
    max_request_bytes: int = 2 << 20
    max_upload_bytes: int = 64 << 20
    max_trained_vocab: int = 50_000
    extra_hosts: List[str] = field(default_factory=list)

    @property
    def loopback(self) -> bool:
        """True when only this machine can connect (127.0.0.0/8, ::1 or ``localhost``)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False

    def allowed_hosts(self) -> List[str]:
        """The ``Host`` headers the server answers. On a loopback address only this machine's
        names: a web page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) is
        refused. On any other address every name, since the server was opened on purpose."""
        if not self.loopback:
            return ["*"]
        return ["127.0.0.1", "localhost", "::1", "[::1]", self.host, *self.extra_hosts]
