"""Other libraries' APIs over a ciyuan tokenizer, so that their users switch by one line.

- :mod:`ciyuan.faces.tiktoken`: :class:`TiktokenEncoding`, ``tiktoken.Encoding``'s API
  (``Tokenizer.as_tiktoken()``).
"""

from ciyuan.faces.tiktoken import TiktokenEncoding

__all__ = ["TiktokenEncoding"]
