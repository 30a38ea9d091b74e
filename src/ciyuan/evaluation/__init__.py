"""Measure tokenizers the way papers do: ``ciyuan eval`` and its plots.

:func:`evaluate` encodes corpora with tokenizers and returns an :class:`EvalReport`
(``.to_markdown()``, ``.to_csv()``, ``.to_json()``); :func:`write_plots` draws it
(:func:`render_plots`: the PNGs as bytes). The figures,
per tokenizer and corpus (a corpus is read as its non-blank lines, each encoded without
special tokens):

- **compression**: bytes per token and characters per token (UTF-8 bytes and code points of
  the lines; higher means fewer tokens);
- **fertility**: tokens per word; words by whitespace, or by the Chinese segmenter for runs
  holding Han characters (``segmenter=``);
- **vocabulary use**: distinct ids produced over the vocabulary size, and Zipf's law fitted to
  the ids' frequencies (exponent and R²);
- **unknown, byte-fallback and partial-character rates**: shares of the tokens that are the
  unknown token, ``<0xXX>`` byte-fallback pieces, or tokens that are not whole UTF-8
  characters (byte-level BPE cutting a character);
- **Rényi efficiency** of order 2.5 (Zouhar et al., 2023);
- for a folder of one file per language (the UDHR collection): per-language fertility, tokens
  per character and **premium** (tokens over the reference language's tokens on the parallel
  text; Petrov et al., 2023), and their spread (**parity**);
- **segmentation P/R/F**: tokens scored as words against a gold segmentation (SIGHAN rules,
  the seg-eval scorer);
- plots: compression against vocabulary size from prefixes of one merge list, tokens per
  character by script, the token length histogram.

Example:
    >>> from ciyuan.evaluation import evaluate, write_plots               # doctest: +SKIP
    >>> report = evaluate(["cl100k_base.tiktoken", "gpt2/"], ["udhr/"], curves=True)  # doctest: +SKIP
    >>> print(report.to_markdown())                                       # doctest: +SKIP
    >>> write_plots(report, "plots/")                                     # doctest: +SKIP
"""

from ciyuan.evaluation.evaluate import evaluate, load_tokenizers
from ciyuan.evaluation.plots import PLOT_NAMES, render_plots, write_plots
from ciyuan.evaluation.report import (
    CorpusMetrics,
    CurvePoint,
    EvalReport,
    LanguageMetrics,
    ParitySummary,
    SegmentationScore,
)

__all__ = [
    "evaluate",
    "load_tokenizers",
    "write_plots",
    "render_plots",
    "PLOT_NAMES",
    "EvalReport",
    "CorpusMetrics",
    "LanguageMetrics",
    "ParitySummary",
    "CurvePoint",
    "SegmentationScore",
]
