"""``ciyuan serve``: a local web page to look at tokenizers (docs/serve.md).

Type or drop text and see its tokens coloured one by one (id and bytes on hover, whitespace and
byte pieces visible, a click shows a token's span in the text); compare tokenizers side by side
and see where their boundaries differ; segment Chinese with FMM, BMM, BiMM and DAG; train a
small BPE, WordPiece or Unigram tokenizer with a progress bar and download it.

The page (``static/``) is plain HTML, CSS and JavaScript shipped in the package; it talks to
the JSON API of :mod:`ciyuan.serve.api` and loads nothing from the network. Needs the ``serve``
extra (``pip install 'ciyuan[serve]'``: Starlette and uvicorn).

Modules: :mod:`.config` (settings and limits), :mod:`.paths` (the allowed folders),
:mod:`.catalog` (named tokenizers), :mod:`.token_view` (tokens, counts and boundary
differences as the page draws them), :mod:`.segmentation`, :mod:`.jobs` (training),
:mod:`.guard` (hosts, origins, size limits), :mod:`.api` (routes), :mod:`.app` (the
application), :mod:`.server` (uvicorn).

Example:
    >>> from ciyuan.serve import ServeConfig, create_app          # doctest: +SKIP
    >>> app = create_app(ServeConfig(tokenizers=["o200k_base.tiktoken"], dictionaries=["words.txt"]))  # doctest: +SKIP
"""

from __future__ import annotations

from ciyuan.serve.app import create_app
from ciyuan.serve.config import ServeConfig
from ciyuan.serve.server import serve

__all__ = ["ServeConfig", "create_app", "serve"]
