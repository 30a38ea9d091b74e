"""The PNGs of ``ciyuan eval --plot DIR``, drawn with matplotlib's Agg backend (no display).

- ``compression_vs_vocab.png``: bytes per token against vocabulary size, one line per BPE
  tokenizer (prefixes of its merge list; needs ``evaluate(..., curves=True)``);
- ``tokens_per_char_by_script.png``: tokens per character of every script of the multilingual
  corpora (all languages of a script together), one bar per tokenizer; without a multilingual
  corpus, tokens per character of each corpus;
- ``token_lengths.png``: how many tokens of the corpora have each length in bytes (of the text
  the token stands for), one line per tokenizer (shares of its tokens).

Each file is written atomically (a temporary file renamed over it).

Example:
    >>> paths = write_plots(report, "plots/")                            # doctest: +SKIP
    >>> [p.name for p in paths]                                          # doctest: +SKIP
    ['compression_vs_vocab.png', 'tokens_per_char_by_script.png', 'token_lengths.png']
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path
from typing import Any, Dict, List, Union

from ciyuan._io import atomic_write_bytes
from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.evaluation.report import EvalReport

__all__ = ["write_plots", "render_plots", "PLOT_NAMES"]

PathLike = Union[str, "os.PathLike[str]"]
PLOT_NAMES = ("compression_vs_vocab.png", "tokens_per_char_by_script.png", "token_lengths.png")


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise CiyuanError("plots need matplotlib: pip install 'ciyuan[eval]'") from None
    matplotlib.use("Agg", force=True)  # no display, no GUI toolkit: files only
    import matplotlib.pyplot as plt

    return plt


def _png(plt: Any, fig: Any) -> bytes:
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)
    return buf.getvalue()


def _compression(plt: Any, report: EvalReport) -> bytes:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in report.tokenizers:
        pts = [p for p in report.curves if p.tokenizer == name]
        if pts:
            ax.plot([p.vocab_size for p in pts], [p.bytes_per_token for p in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("vocabulary size (tokens; prefixes of the merge list)")
    ax.set_ylabel("bytes per token")
    ax.set_title("Compression against vocabulary size")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _png(plt, fig)


def _tokens_per_char(plt: Any, report: EvalReport) -> bytes:
    groups: Dict[str, Dict[str, float]] = report.scripts()
    label = "script"
    if not groups:  # no multilingual corpus: one group per corpus
        label = "corpus"
        for m in report.metrics:
            groups.setdefault(m.corpus, {})[m.tokenizer] = 1 / m.chars_per_token if m.chars_per_token else math.nan
    names = list(report.tokenizers)
    keys = list(groups)
    width = 0.8 / max(1, len(names))
    fig, ax = plt.subplots(figsize=(max(7, 0.32 * len(keys) * max(1, len(names)) ** 0.5 + 2), 5))
    for k, name in enumerate(names):
        xs = [i + (k - (len(names) - 1) / 2) * width for i in range(len(keys))]
        ax.bar(xs, [groups[g].get(name, math.nan) for g in keys], width=width, label=name)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, rotation=90 if len(keys) > 8 else 0, fontsize=8)
    ax.set_xlabel(label + (" (ISO 15924)" if label == "script" else ""))
    ax.set_ylabel("tokens per character")
    ax.set_title(f"Tokens per character by {label}")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend()
    return _png(plt, fig)


def _token_lengths(plt: Any, report: EvalReport) -> bytes:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    top = 1
    for name in report.tokenizers:
        # Length 0 (special and unknown tokens: no text of their own) is left out.
        hist = {k: v for k, v in report.token_lengths.get(name, {}).items() if k > 0}
        total = sum(hist.values())
        if not total:
            continue
        # The axis ends where 99.9% of every tokenizer's tokens are: a few very long tokens
        # (runs of spaces or dashes) would otherwise squeeze the rest to the left.
        seen = 0
        for length in sorted(hist):
            seen += hist[length]
            if seen >= 0.999 * total:
                top = max(top, length)
                break
        xs = list(range(1, max(hist) + 1))
        ax.step(xs, [hist.get(x, 0) / total for x in xs], where="mid", label=name)
    ax.set_xlim(0.5, top + 0.5)
    ax.set_xlabel("token length (bytes of the text it stands for)")
    ax.set_ylabel("share of tokens")
    ax.set_title("Token length histogram")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return _png(plt, fig)


def render_plots(report: EvalReport) -> Dict[str, bytes]:
    """The report's plots as PNG bytes, by file name (:data:`PLOT_NAMES`): the compression
    curve only when the report has curves, the other two always. For a web page, which sends
    them without files.

    Raises:
        CiyuanError: matplotlib is not installed.
    """
    plt = _pyplot()
    pngs = {}
    if report.curves:
        pngs[PLOT_NAMES[0]] = _compression(plt, report)
    pngs[PLOT_NAMES[1]] = _tokens_per_char(plt, report)
    pngs[PLOT_NAMES[2]] = _token_lengths(plt, report)
    return pngs


def write_plots(report: EvalReport, out_dir: PathLike) -> List[Path]:
    """Write :func:`render_plots` into ``out_dir`` (created if missing), each file atomically,
    and return their paths.

    Raises:
        InvalidInputError: ``out_dir`` cannot be created or written.
        CiyuanError: matplotlib is not installed.
    """
    pngs = render_plots(report)
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidInputError(f"cannot create the plot folder {out}: {e.strerror}") from None
    paths = []
    for name, data in pngs.items():
        atomic_write_bytes(out / name, data)
        paths.append(out / name)
    return paths
