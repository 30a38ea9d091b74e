"""The result of :func:`ciyuan.evaluation.evaluate`: its rows and their Markdown, CSV and JSON.

An :class:`EvalReport` holds plain rows (dataclasses of numbers and strings), so it serializes
as it is and a web page can draw from its JSON:

- ``metrics``: one :class:`CorpusMetrics` per tokenizer and corpus (the main table);
- ``languages``: one :class:`LanguageMetrics` per tokenizer, multilingual corpus and language;
- ``parity``: one :class:`ParitySummary` per tokenizer and multilingual corpus (the spread of
  per-language fertility and premium);
- ``curves``: :class:`CurvePoint` rows, compression against vocabulary size from prefixes of a
  BPE tokenizer's merge list;
- ``segmentation``: one :class:`SegmentationScore` per tokenizer and gold file (tokens scored as
  words, SIGHAN rules);
- ``token_lengths``: tokenizer -> {length in bytes: how many tokens of the corpora had it}.

Ratios of an empty denominator are NaN (``null`` in JSON, empty in CSV, ``-`` in Markdown).

Example:
    >>> r = EvalReport(tokenizers=["t"], corpora=["c"])
    >>> r.to_json()[:31]
    '{"tokenizers": ["t"], "corpora"'
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, List, Optional, Sequence

from ciyuan.errors import InvalidInputError

__all__ = [
    "CorpusMetrics", "LanguageMetrics", "ParitySummary", "CurvePoint", "SegmentationScore", "EvalReport",
]


@dataclass
class CorpusMetrics:
    """The figures of one tokenizer on one corpus (all its lines; see ``ciyuan.evaluation``)."""

    tokenizer: str
    corpus: str
    lines: int
    bytes: int
    chars: int
    words: int
    tokens: int
    #: bytes / tokens and characters / tokens (compression: higher is fewer tokens).
    bytes_per_token: float
    chars_per_token: float
    #: tokens / words (fertility; "whitespace" or "segmenter" words, see word_method).
    fertility: float
    word_method: str
    vocab_size: int
    #: distinct ids produced, and their share of the vocabulary.
    types_used: int
    vocab_use: float
    #: Zipf's law fitted to the ids' frequencies: exponent and R^2.
    zipf_exponent: float
    zipf_r2: float
    #: shares of the tokens that are the unknown token / byte-fallback pieces / pieces of a character.
    unk_rate: float
    byte_fallback_rate: float
    partial_char_rate: float
    #: Rényi entropy of the ids' distribution over log(vocab_size), of order renyi_alpha.
    renyi_efficiency: float
    renyi_alpha: float


@dataclass
class LanguageMetrics:
    """One language of a multilingual corpus, for one tokenizer."""

    tokenizer: str
    corpus: str
    language: str
    name: str
    script: str
    bytes: int
    chars: int
    words: int
    tokens: int
    fertility: float
    tokens_per_char: float
    bytes_per_token: float
    #: tokens / the reference language's tokens (the parallel text's tokenization premium);
    #: NaN without a reference language.
    premium: float


@dataclass
class ParitySummary:
    """The spread over the languages of one multilingual corpus, for one tokenizer."""

    tokenizer: str
    corpus: str
    languages: int
    reference: str
    fertility_min: float
    fertility_median: float
    fertility_max: float
    #: standard deviation / mean of the languages' fertility (0: every language alike).
    fertility_cv: float
    tokens_per_char_median: float
    premium_median: float
    premium_p90: float
    premium_max: float
    premium_max_language: str


@dataclass
class CurvePoint:
    """Compression of a BPE tokenizer cut to its first ``merges`` merges (``vocab_size`` tokens)."""

    tokenizer: str
    vocab_size: int
    merges: int
    tokens: int
    bytes_per_token: float
    chars_per_token: float


@dataclass
class SegmentationScore:
    """A tokenizer's tokens scored as words against a gold segmentation (SIGHAN rules).
    ``predicted_words``: the pieces the tokens cut the text into (byte pieces of one character
    make one piece)."""

    tokenizer: str
    #: the gold file's name
    gold: str
    gold_words: int
    predicted_words: int
    correct: int
    precision: float
    recall: float
    f1: float


_TABLES = ("metrics", "languages", "parity", "curves", "segmentation")


def _clean(value: Any) -> Any:
    """NaN -> None (JSON has no NaN)."""
    return None if isinstance(value, float) and math.isnan(value) else value


def _cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.4f}" if abs(value) < 10 else f"{value:.2f}"
    return str(value).replace("|", "\\|")


def _markdown_table(rows: Sequence[Any], columns: Sequence[str], titles: Sequence[str]) -> str:
    lines = ["| " + " | ".join(titles) + " |", "|" + "|".join("---" for _ in titles) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(_cell(getattr(row, c)) for c in columns) + " |")
    return "\n".join(lines)


@dataclass
class EvalReport:
    """What :func:`~ciyuan.evaluation.evaluate` found (see the module's doc for each field)."""

    tokenizers: List[str]
    corpora: List[str]
    metrics: List[CorpusMetrics] = field(default_factory=list)
    languages: List[LanguageMetrics] = field(default_factory=list)
    parity: List[ParitySummary] = field(default_factory=list)
    curves: List[CurvePoint] = field(default_factory=list)
    segmentation: List[SegmentationScore] = field(default_factory=list)
    token_lengths: Dict[str, Dict[int, int]] = field(default_factory=dict)

    def table(self, name: str) -> List[Any]:
        """The rows of one table: ``"metrics"``, ``"languages"``, ``"parity"``, ``"curves"`` or
        ``"segmentation"``."""
        if name not in _TABLES:
            raise InvalidInputError(f"unknown table {name!r}; choose one of {', '.join(_TABLES)}")
        return list(getattr(self, name))

    def to_dict(self) -> Dict[str, Any]:
        """Plain data (NaN as None): what :meth:`to_json` writes.

        Example:
            >>> EvalReport(["t"], ["c"]).to_dict()["metrics"]
            []
        """
        data: Dict[str, Any] = {"tokenizers": list(self.tokenizers), "corpora": list(self.corpora)}
        for name in _TABLES:
            data[name] = [{k: _clean(v) for k, v in asdict(row).items()} for row in getattr(self, name)]
        data["token_lengths"] = {t: {str(k): v for k, v in sorted(h.items())} for t, h in self.token_lengths.items()}
        return data

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "EvalReport":
        """The report :meth:`to_dict` (or :meth:`to_json`, parsed) describes.

        Example:
            >>> r = EvalReport(["t"], ["c"], token_lengths={"t": {1: 5}})
            >>> EvalReport.from_dict(json.loads(r.to_json())) == r
            True
        """
        kinds = {"metrics": CorpusMetrics, "languages": LanguageMetrics, "parity": ParitySummary,
                 "curves": CurvePoint, "segmentation": SegmentationScore}
        tables: Dict[str, Any] = {}
        for name, kind in kinds.items():
            floats = {f.name for f in fields(kind) if f.type in ("float", float)}
            tables[name] = [kind(**{k: (math.nan if v is None and k in floats else v) for k, v in row.items()})
                            for row in data.get(name, [])]
        lengths = {t: {int(k): v for k, v in h.items()} for t, h in data.get("token_lengths", {}).items()}
        return cls(list(data["tokenizers"]), list(data["corpora"]), token_lengths=lengths, **tables)

    def to_json(self, indent: Optional[int] = None) -> str:
        """The report as JSON (every table, NaN as null)."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def to_csv(self, table: str = "metrics") -> str:
        """One table as CSV, a header line of the field names first (NaN as an empty cell).

        Example:
            >>> EvalReport(["t"], ["c"]).to_csv("curves").strip()
            'tokenizer,vocab_size,merges,tokens,bytes_per_token,chars_per_token'
        """
        rows = self.table(table)
        kind = {"metrics": CorpusMetrics, "languages": LanguageMetrics, "parity": ParitySummary,
                "curves": CurvePoint, "segmentation": SegmentationScore}[table]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        names = [f.name for f in fields(kind)]
        writer.writerow(names)
        for row in rows:
            writer.writerow(["" if _clean(getattr(row, n)) is None else getattr(row, n) for n in names])
        return out.getvalue()

    def to_markdown(self) -> str:
        """The report as Markdown tables: the main figures, then (when there are any) parity
        across languages, tokens per character by script, segmentation scores and the
        compression curve. The per-language rows are in :meth:`to_csv` ``("languages")`` and
        :meth:`to_json` (hundreds of rows)."""
        parts = ["## Compression, fertility, vocabulary", "", _markdown_table(
            self.metrics,
            ["tokenizer", "corpus", "tokens", "bytes_per_token", "chars_per_token", "fertility", "vocab_use",
             "zipf_exponent", "zipf_r2", "unk_rate", "byte_fallback_rate", "partial_char_rate", "renyi_efficiency"],
            ["tokenizer", "corpus", "tokens", "bytes/token", "chars/token", "tokens/word", "vocab used",
             "Zipf s", "Zipf R²", "unk", "byte fallback", "partial chars", "Rényi eff."])]
        if self.parity:
            parts += ["", "## Parity across languages", "", _markdown_table(
                self.parity,
                ["tokenizer", "corpus", "languages", "fertility_min", "fertility_median", "fertility_max",
                 "fertility_cv", "tokens_per_char_median", "reference", "premium_median", "premium_p90",
                 "premium_max", "premium_max_language"],
                ["tokenizer", "corpus", "languages", "tokens/word min", "median", "max", "CV",
                 "tokens/char median", "reference", "premium median", "p90", "max", "max at"])]
            parts += ["", "## Tokens per character by script", "", self._scripts_markdown()]
        if self.segmentation:
            parts += ["", "## Tokens as words (segmentation P/R/F, SIGHAN rules)", "", _markdown_table(
                self.segmentation,
                ["tokenizer", "gold", "gold_words", "predicted_words", "correct", "precision", "recall", "f1"],
                ["tokenizer", "gold", "gold words", "predicted words", "correct", "P", "R", "F"])]
        if self.curves:
            parts += ["", "## Compression against vocabulary size (merge-list prefixes)", "", _markdown_table(
                self.curves, ["tokenizer", "vocab_size", "merges", "tokens", "bytes_per_token", "chars_per_token"],
                ["tokenizer", "vocabulary", "merges", "tokens", "bytes/token", "chars/token"])]
        return "\n".join(parts) + "\n"

    def scripts(self) -> Dict[str, Dict[str, float]]:
        """script -> tokenizer -> tokens per character over all languages of that script (the
        sums of tokens over the sums of characters). Languages without a script are under ``"?"``.

        Example:
            >>> EvalReport(["t"], ["c"]).scripts()
            {}
        """
        sums: Dict[str, Dict[str, List[int]]] = {}
        for row in self.languages:
            acc = sums.setdefault(row.script or "?", {}).setdefault(row.tokenizer, [0, 0])
            acc[0] += row.tokens
            acc[1] += row.chars
        return {s: {t: (a[0] / a[1] if a[1] else math.nan) for t, a in by_tok.items()}
                for s, by_tok in sorted(sums.items())}

    def _scripts_markdown(self) -> str:
        scripts = self.scripts()
        names = [t for t in self.tokenizers if any(t in v for v in scripts.values())]
        counts: Dict[str, int] = {}
        for row in self.languages:
            if row.tokenizer == names[0]:
                counts[row.script or "?"] = counts.get(row.script or "?", 0) + 1
        lines = ["| script | languages | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
        for script, by_tok in scripts.items():
            lines.append(f"| {script} | {counts.get(script, 0)} | "
                         + " | ".join(_cell(by_tok.get(t, math.nan)) for t in names) + " |")
        return "\n".join(lines)
