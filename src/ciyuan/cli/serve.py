"""The ``ciyuan serve`` command: the tokenizer playground page on a local web server
(:mod:`ciyuan.serve`, docs/serve.md). It imports the server only when it runs, and says how to
install it when the ``serve`` extra is missing."""

from __future__ import annotations

import argparse
from typing import Dict

from ciyuan.cli.options import Command
from ciyuan.errors import InvalidInputError

__all__ = ["COMMANDS", "add_arguments", "run"]

_EPILOG = """\
examples:
  ciyuan serve cl100k_base.tiktoken gpt2/tokenizer.json bert-base-uncased-vocab.txt
  ciyuan serve --allow-dir models/ --dict jieba_dict.txt --corpus udhr=udhr/
  ciyuan serve --port 0 o200k=o200k_base.tiktoken      # any free port; the address is printed"""

COMMANDS: Dict[str, Command] = {
    "serve": Command(
        "a local web page to look at, compare and train tokenizers",
        "Serve the tokenizer playground on http://127.0.0.1:8765/: tokens coloured one by one, "
        "tokenizers side by side, Chinese segmentation by FMM/BMM/BiMM/DAG, and small tokenizers "
        "trained on the page. It listens on this machine only unless --host says otherwise, reads "
        "no file outside the named tokenizers, dictionaries and --allow-dir folders, and fetches "
        "nothing from the network. Needs the serve extra: pip install 'ciyuan[serve]'.",
        _EPILOG),
}


def add_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The options of ``serve``."""
    from ciyuan.serve.config import DEFAULT_HOST, DEFAULT_PORT  # plain Python: no server is imported

    p.add_argument("tokenizers", nargs="*", metavar="TOKENIZER",
                   help="tokenizer files to offer, as PATH or NAME=PATH: any file ciyuan loads (.tiktoken, "
                        "tokenizer.json, GPT-2's encoder.json with vocab.bpe, vocab.txt, .model, ciyuan JSON)")
    p.add_argument("--host", default=DEFAULT_HOST,
                   help=f"address to listen on (default {DEFAULT_HOST}: this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: any free port)")
    p.add_argument("--allow-dir", dest="allow_dirs", action="append", default=[], metavar="DIR",
                   help="a folder whose tokenizer files the page lists and may load (repeatable); "
                        "no file outside these is read on the page's behalf")
    p.add_argument("--dict", dest="dicts", action="append", default=[], metavar="FILE",
                   help="a segmentation dictionary, PATH or NAME=PATH (one word per line, or jieba's "
                        "'word freq tag' lines; repeatable)")
    p.add_argument("--corpus", dest="corpora", action="append", default=[], metavar="PATH",
                   help="a corpus the plots view may measure besides the text box, PATH or NAME=PATH: a text "
                        "file, or a folder of one *.txt per language (e.g. the UDHR); repeatable")
    p.add_argument("--max-request-size", default="2MB", metavar="SIZE",
                   help="largest request body, e.g. the text to tokenize (default 2MB); more gets 413")
    p.add_argument("--max-upload-size", default="64MB", metavar="SIZE",
                   help="largest uploaded file, a tokenizer or a corpus to train on (default 64MB)")
    p.add_argument("--max-vocab", type=int, default=50_000, metavar="N",
                   help="largest vocabulary the page may train (default 50000)")


def run(args: argparse.Namespace) -> None:
    """Run ``serve`` until Ctrl-C (errors are ciyuan errors, reported by the caller)."""
    from ciyuan.serve.config import ServeConfig, parse_size

    if not 0 <= args.port <= 65535:
        raise InvalidInputError(f"--port must be from 0 to 65535, not {args.port}")
    if args.max_vocab < 1:
        raise InvalidInputError(f"--max-vocab must be a positive integer, not {args.max_vocab}")
    config = ServeConfig(host=args.host, port=args.port, tokenizers=args.tokenizers, allow_dirs=args.allow_dirs,
                         dictionaries=args.dicts, corpora=args.corpora,
                         max_request_bytes=parse_size(args.max_request_size, "--max-request-size"),
                         max_upload_bytes=parse_size(args.max_upload_size, "--max-upload-size"),
                         max_trained_vocab=args.max_vocab)
    try:
        from ciyuan.serve.server import serve
    except ImportError as e:  # starlette or uvicorn missing
        raise InvalidInputError(f"ciyuan serve needs the serve extra ({e.name} is missing): "
                                "pip install 'ciyuan[serve]'") from None
    serve(config)
