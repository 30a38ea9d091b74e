"""Parser helpers shared by the commands: a subcommand's texts and parser, the inputs/output
options of line-oriented commands, and hidden aliases for earlier spellings of a flag."""

from __future__ import annotations

import argparse
from typing import Any, Optional

__all__ = ["Command", "add_command", "add_io_arguments", "add_errors_argument", "add_alias"]


class Command:
    """A subcommand's texts: ``summary`` in ``ciyuan --help``; ``description`` and the
    ``epilog``'s examples (kept as written) in ``ciyuan NAME --help``."""

    # A plain class, not a NamedTuple: making a NamedTuple class costs about a millisecond,
    # which every command, `ciyuan segment` included, would pay at start-up.
    __slots__ = ("summary", "description", "epilog")

    def __init__(self, summary: str, description: str, epilog: Optional[str] = None) -> None:
        self.summary = summary
        self.description = description
        self.epilog = epilog


def add_command(sub: "argparse._SubParsersAction", name: str, command: Command) -> argparse.ArgumentParser:
    """The parser of subcommand ``name``."""
    raw = argparse.RawDescriptionHelpFormatter if command.epilog else argparse.HelpFormatter
    return sub.add_parser(name, help=command.summary, description=command.description, epilog=command.epilog,
                          formatter_class=raw)


def add_io_arguments(p: argparse.ArgumentParser, *, what: str = "file and byte") -> None:
    """``FILE...`` inputs, ``--output`` and ``--errors``: what every line-oriented command takes."""
    p.add_argument("inputs", nargs="*", metavar="FILE", help="input files (default: standard input)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write here instead of standard output (replaced atomically when done)")
    add_errors_argument(p, help=f"invalid UTF-8 in the input: stop with an error naming {what} "
                                "(strict, default) or read the bad bytes as U+FFFD (replace)")


def add_errors_argument(p: argparse.ArgumentParser, *, help: str) -> None:
    """``--errors strict|replace`` (default strict): what to do with invalid UTF-8 in the input."""
    p.add_argument("--errors", choices=("strict", "replace"), default="strict", help=help)


def add_alias(p: argparse._ActionsContainer, flag: str, dest: str, **how: Any) -> None:
    """An earlier spelling of an option, still accepted and hidden from ``--help`` (``p``: a
    parser or an argument group, whose common base argparse names ``_ActionsContainer``)."""
    p.add_argument(flag, dest=dest, help=argparse.SUPPRESS, **how)
