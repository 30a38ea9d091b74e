"""Parser helpers shared by the commands: a subcommand with its examples, the inputs/output
options of line-oriented commands, and hidden aliases for earlier spellings of a flag."""

from __future__ import annotations

import argparse

__all__ = ["add_command", "add_io_arguments", "add_alias"]


def add_command(sub: "argparse._SubParsersAction", name: str, summary: str, description: str,
                epilog: str) -> argparse.ArgumentParser:
    """A subcommand: ``summary`` in ``ciyuan --help``, ``description`` and the ``epilog``'s
    examples (kept as written) in ``ciyuan NAME --help``."""
    return sub.add_parser(name, help=summary, description=description, epilog=epilog,
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_io_arguments(p: argparse.ArgumentParser, *, what: str = "file and byte") -> None:
    """``FILE...`` inputs, ``--output`` and ``--errors``: what every line-oriented command takes."""
    p.add_argument("inputs", nargs="*", metavar="FILE", help="input files (default: standard input)")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="write here instead of standard output (replaced atomically when done)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help=f"invalid UTF-8 in the input: stop with an error naming {what} "
                        "(strict, default) or read the bad bytes as U+FFFD (replace)")


def add_alias(p: argparse.ArgumentParser, flag: str, dest: str, **how: object) -> None:
    """An earlier spelling of an option, still accepted and hidden from ``--help``."""
    p.add_argument(flag, dest=dest, help=argparse.SUPPRESS, **how)  # type: ignore[arg-type]
