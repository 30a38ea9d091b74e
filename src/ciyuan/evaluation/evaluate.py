"""``evaluate``: one pass of each tokenizer over each corpus, and the report's figures.

Each corpus is read as lines (``corpus.iter_line_blocks``, block by block: once for its sizes,
once per tokenizer); each tokenizer encodes them in batches (``encode_batch_ids(as_array=True)``,
no special tokens added, special-token text encoded as ordinary text) and only the count of
every id is kept (``numpy.bincount``). Every figure of the main table then comes from those
counts and the corpus's sizes (``metrics``), and the per-language figures from the per-file
token totals. Memory is that of one block of the file plus one count per id, whatever the
corpus's size (texts given in memory are held, of course).

Example:
    >>> from ciyuan import Tokenizer                                       # doctest: +SKIP
    >>> report = evaluate({"cl100k": Tokenizer.load("cl100k_base.tiktoken")},  # doctest: +SKIP
    ...                   ["udhr/"])
    >>> print(report.to_markdown())                                        # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
import statistics
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ciyuan.errors import CiyuanError, InvalidInputError
from ciyuan.evaluation.corpus import Corpus, Part, open_corpus, text_corpus
from ciyuan.evaluation.curve import compression_curve
from ciyuan.evaluation.metrics import quantile, ratio, renyi_efficiency, zipf_fit
from ciyuan.evaluation.report import CorpusMetrics, EvalReport, LanguageMetrics, ParitySummary
from ciyuan.evaluation.segmentation import score_tokens_as_words
from ciyuan.evaluation.token_kinds import TokenKinds
from ciyuan.evaluation.words import WordCounter

if TYPE_CHECKING:
    from ciyuan.segment import Segmenter
    from ciyuan.tokenizer import Tokenizer

__all__ = ["evaluate", "TokenizerSpec", "load_tokenizers"]

PathLike = Union[str, "os.PathLike[str]"]
TokenizerSpec = Union["Tokenizer", PathLike]
#: How many lines go to the encoder at once (bounds the memory of a pass).
BATCH_LINES = 8192


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with the [eval] extra (matplotlib needs it)
        raise CiyuanError("ciyuan eval needs numpy: pip install 'ciyuan[eval]'") from None
    return numpy


def load_tokenizers(tokenizers: Union[Mapping[str, TokenizerSpec], Sequence[Any]]) -> Dict[str, "Tokenizer"]:
    """name -> Tokenizer from what :func:`evaluate` accepts: a mapping of names to tokenizers
    or paths, or a sequence of tokenizers, paths (named by their file name; ``NAME=PATH`` names
    one) or ``(name, tokenizer or path)`` pairs.

    Example:
        >>> load_tokenizers([])
        {}
    """
    from ciyuan.tokenizer import Tokenizer

    items: List[Tuple[Optional[str], Any]]
    if isinstance(tokenizers, Mapping):
        items = list(tokenizers.items())
    else:
        items = []
        for spec in tokenizers:
            if isinstance(spec, tuple):
                items.append((str(spec[0]), spec[1]))
            elif isinstance(spec, str) and "=" in spec and not os.path.exists(spec):
                label, _, path = spec.partition("=")
                items.append((label, path))
            else:
                items.append((None, spec))
    out: Dict[str, Tokenizer] = {}
    for n, (given, spec) in enumerate(items, 1):
        if isinstance(spec, Tokenizer):
            tok, label = spec, given or f"tokenizer {n}"
        elif isinstance(spec, (str, os.PathLike)):
            if not os.path.exists(spec):
                raise InvalidInputError(f"tokenizer {spec}: no such file or folder")
            tok, label = Tokenizer.load(spec), given or _file_label(Path(spec))
        else:
            raise InvalidInputError(f"a tokenizer must be a Tokenizer or a path, got {type(spec).__name__}")
        while label in out:  # two files of one name: keep both, told apart
            label += "'"
        out[label] = tok
    return out


def _file_label(path: Path) -> str:
    """A short name for a tokenizer file: its name without the extension (a folder's name;
    GPT-2's ``encoder.json`` and BERT's ``vocab.txt`` by their folder)."""
    if path.is_dir() or path.stem in ("encoder", "vocab", "tokenizer", "vocab.bpe"):
        return path.resolve().parent.name if not path.is_dir() else path.resolve().name
    return path.name.split(".")[0]


class _Sizes:
    """A part's size: lines, characters, UTF-8 bytes and words (one pass, shared by all tokenizers)."""

    def __init__(self, part: Part, words: WordCounter, errors: str) -> None:
        self.part = part
        self.lines = self.chars = self.bytes = self.words = 0
        for block in part.blocks(errors):
            self.lines += len(block)
            self.chars += sum(len(line) for line in block)
            self.bytes += sum(len(line.encode("utf-8", "surrogatepass")) for line in block)
            self.words += words.count_all(block)


def _batches(blocks: Iterable[Sequence[str]]) -> Iterator[Sequence[str]]:
    """The lines of the blocks in batches of at most BATCH_LINES."""
    for block in blocks:
        for start in range(0, len(block), BATCH_LINES):
            yield block[start:start + BATCH_LINES]


def _count_ids(tok: "Tokenizer", blocks: Iterable[Sequence[str]], limit: int, threads: Optional[int]) -> Any:
    """The count of every id (a numpy array of at least ``limit`` counts) over the lines."""
    np = _numpy()
    counts = np.zeros(limit, dtype=np.int64)
    for batch in _batches(blocks):
        ids, _ = tok.encode_batch_ids(batch, as_array=True, add_special_tokens=False,
                                      allowed_special=(), disallowed_special=(), threads=threads)
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) and int(ids.max()) >= len(counts):  # an id past the tables (should not happen)
            counts = np.concatenate([counts, np.zeros(int(ids.max()) + 1 - len(counts), dtype=np.int64)])
        counts += np.bincount(ids, minlength=len(counts))
    return counts


def _metrics(name: str, corpus: str, tok: "Tokenizer", kinds: TokenKinds, counts: Any, sizes: Sequence[_Sizes],
             words: WordCounter, alpha: float) -> CorpusMetrics:
    np = _numpy()
    total = int(counts.sum())
    n = len(kinds.lengths)
    seen = counts[counts > 0]

    def share(flags: List[bool]) -> float:
        return ratio(int(counts[:n][np.asarray(flags, dtype=bool)].sum()), total)

    n_bytes = sum(s.bytes for s in sizes)
    n_chars = sum(s.chars for s in sizes)
    n_words = sum(s.words for s in sizes)
    vocab = tok.vocab_size
    fit = zipf_fit(seen.tolist())
    return CorpusMetrics(
        tokenizer=name, corpus=corpus, lines=sum(s.lines for s in sizes), bytes=n_bytes, chars=n_chars,
        words=n_words, tokens=total, bytes_per_token=ratio(n_bytes, total), chars_per_token=ratio(n_chars, total),
        fertility=ratio(total, n_words), word_method=words.method, vocab_size=vocab, types_used=len(seen),
        vocab_use=ratio(len(seen), vocab), zipf_exponent=fit.exponent, zipf_r2=fit.r2,
        unk_rate=share(kinds.unknown), byte_fallback_rate=share(kinds.byte_fallback),
        partial_char_rate=share(kinds.partial), renyi_efficiency=renyi_efficiency(seen.tolist(), vocab, alpha),
        renyi_alpha=alpha)


def _reference_part(corpus: Corpus, reference: Optional[str]) -> Optional[Part]:
    """The part named ``reference`` (by key, else by name), or None."""
    if reference is None:
        return None
    for part in corpus.parts:
        if part.key == reference:
            return part
    for part in corpus.parts:
        if part.name == reference:
            return part
    return None


def _parity(name: str, corpus: Corpus, rows: List[LanguageMetrics], reference: Optional[Part]) -> ParitySummary:
    fert = [r.fertility for r in rows if not math.isnan(r.fertility)]
    prem = [(r.premium, r.language) for r in rows if not math.isnan(r.premium)]
    mean = statistics.fmean(fert) if fert else math.nan
    cv = statistics.pstdev(fert) / mean if len(fert) > 1 and mean else math.nan
    top = max(prem) if prem else (math.nan, "")
    return ParitySummary(
        tokenizer=name, corpus=corpus.name, languages=len(rows), reference=reference.key if reference else "",
        fertility_min=min(fert) if fert else math.nan, fertility_median=quantile(fert, 0.5),
        fertility_max=max(fert) if fert else math.nan, fertility_cv=cv,
        tokens_per_char_median=quantile([r.tokens_per_char for r in rows if not math.isnan(r.tokens_per_char)], 0.5),
        premium_median=quantile([p for p, _ in prem], 0.5), premium_p90=quantile([p for p, _ in prem], 0.9),
        premium_max=top[0], premium_max_language=top[1])


def evaluate(
    tokenizers: Union[Mapping[str, TokenizerSpec], Sequence[Any]],
    corpus_paths: Sequence[PathLike],
    *,
    segmenter: Union[None, "Segmenter", PathLike] = None,
    gold: Sequence[PathLike] = (),
    reference_language: Optional[str] = "eng",
    renyi_alpha: float = 2.5,
    curves: bool = False,
    curve_sizes: Optional[Sequence[int]] = None,
    threads: Optional[int] = None,
    errors: str = "strict",
    progress: Optional[Callable[[str], None]] = None,
) -> EvalReport:
    """Measure tokenizers on corpora (see ``ciyuan.evaluation`` for every figure).

    Args:
        tokenizers: a mapping name -> Tokenizer or path, or a sequence of Tokenizers, paths
            (``NAME=PATH`` to name one) or ``(name, tokenizer)`` pairs (:func:`load_tokenizers`).
        corpus_paths: text files (one corpus each) and folders of one ``*.txt`` per language
            (multilingual: figures per language and their parity too), each named in the report
            by its file or folder name (the whole path when two are alike), or ``(name, path)``;
            ``(name, [text, ...])`` is a corpus of texts in memory (each cut into lines).
        segmenter: words for fertility by the Chinese segmenter (a ``Segmenter``, or a
            dictionary file for forward maximum matching); None: by whitespace.
        gold: gold segmentations (words separated by spaces, one sentence per line): each
            tokenizer's tokens are scored as words against them (P/R/F, SIGHAN rules).
        reference_language: the language (file key, e.g. ``"eng"``, or name) whose token count
            is the denominator of each language's premium; None or absent: no premium.
        renyi_alpha: the order of the Rényi efficiency (2.5, Zouhar et al.'s choice).
        curves: also measure compression against vocabulary size for every BPE tokenizer,
            cutting its merge list at ``curve_sizes`` vocabulary sizes (default 1k, 2k, 4k ...
            and the full size), over all the corpora's lines.
        threads: encoder threads (default: all cores).
        errors: invalid UTF-8 in corpora: ``"strict"`` (an error naming the file and byte) or
            ``"replace"`` (U+FFFD).
        progress: called with a line of text before each step (a web page's progress).

    Raises:
        InvalidInputError: a missing file, invalid UTF-8, an empty list of tokenizers or corpora.

    Example:
        >>> import tempfile, pathlib
        >>> from ciyuan import Tokenizer
        >>> from ciyuan.models import WordLevel
        >>> from ciyuan.pre_tokenizers import WhitespaceSplit
        >>> tok = Tokenizer(WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"),
        ...                 pre_tokenizer=WhitespaceSplit())
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
        >>> _ = p.write_text("a b a\\nb c\\n", encoding="utf-8")
        >>> m = evaluate({"words": tok}, [p]).metrics[0]
        >>> m.tokens, m.fertility, m.unk_rate, m.types_used
        (5, 1.0, 0.2, 3)
    """
    toks = load_tokenizers(tokenizers)
    if not toks:
        raise InvalidInputError("no tokenizer to evaluate")
    if not corpus_paths:
        raise InvalidInputError("no corpus to evaluate on")
    if errors not in ("strict", "replace"):
        raise InvalidInputError(f"errors must be 'strict' or 'replace', not {errors!r}")
    words = WordCounter(_segmenter(segmenter))
    say = progress or (lambda _: None)
    corpora = [text_corpus(label, source) if isinstance(source, (list, tuple)) else open_corpus(source, label)
               for label, source in _corpus_labels(corpus_paths)]
    report = EvalReport(tokenizers=list(toks), corpora=[c.name for c in corpora])
    sizes: Dict[str, List[_Sizes]] = {}
    for corpus in corpora:
        say(f"reading {corpus.name}")
        sizes[corpus.name] = [_Sizes(part, words, errors) for part in corpus.parts]
    np = _numpy()
    for name, tok in toks.items():
        kinds = TokenKinds.of(tok)
        lengths = np.asarray(kinds.lengths, dtype=np.int64)
        histogram: Dict[int, int] = {}
        for corpus in corpora:
            say(f"{name}: {corpus.name}")
            total = np.zeros(kinds.limit, dtype=np.int64)
            per_part = []
            for s in sizes[corpus.name]:
                counts = _count_ids(tok, s.part.blocks(errors), kinds.limit, threads)
                if len(counts) > len(total):
                    total = np.concatenate([total, np.zeros(len(counts) - len(total), dtype=np.int64)])
                total[:len(counts)] += counts
                per_part.append(int(counts.sum()))
            report.metrics.append(_metrics(name, corpus.name, tok, kinds, total, sizes[corpus.name], words,
                                           renyi_alpha))
            by_length = np.bincount(lengths, weights=total[:len(lengths)])
            for length, count in enumerate(by_length.tolist()):
                if count:
                    histogram[length] = histogram.get(length, 0) + int(count)
            if corpus.by_language:
                _languages(report, name, corpus, sizes[corpus.name], per_part, reference_language)
        report.token_lengths[name] = dict(sorted(histogram.items()))
        for g in gold:
            say(f"{name}: tokens as words of {g}")
            report.segmentation.append(score_tokens_as_words(name, tok, g, errors))
        if curves:
            say(f"{name}: compression against vocabulary size")
            def blocks() -> Iterator[List[str]]:
                return (b for c in corpora for part in c.parts for b in part.blocks(errors))

            report.curves.extend(compression_curve(name, tok, blocks, curve_sizes, threads))
    return report


def _languages(report: EvalReport, name: str, corpus: Corpus, sizes: Sequence[_Sizes], tokens: Sequence[int],
               reference_language: Optional[str]) -> None:
    reference = _reference_part(corpus, reference_language)
    ref_tokens = next((t for s, t in zip(sizes, tokens) if s.part is reference), 0)
    rows = []
    for s, t in zip(sizes, tokens):
        rows.append(LanguageMetrics(
            tokenizer=name, corpus=corpus.name, language=s.part.key, name=s.part.name, script=s.part.script,
            bytes=s.bytes, chars=s.chars, words=s.words, tokens=t, fertility=ratio(t, s.words),
            tokens_per_char=ratio(t, s.chars), bytes_per_token=ratio(s.bytes, t),
            premium=ratio(t, ref_tokens) if reference is not None else math.nan))
    report.languages.extend(rows)
    report.parity.append(_parity(name, corpus, rows, reference))


def _corpus_labels(paths: Sequence[Any]) -> List[Tuple[str, Any]]:
    """(label, path or texts) of each corpus: a ``(label, ...)`` pair as given, else the file
    or folder name (the whole path when two names are alike)."""
    pairs = [(str(p[0]), p[1]) if isinstance(p, tuple) else (None, p) for p in paths]
    names = [Path(os.path.abspath(p)).name if label is None else label for label, p in pairs]
    return [(label if label is not None else name if names.count(name) == 1 else str(path), path)
            for (label, path), name in zip(pairs, names)]


def _segmenter(spec: Union[None, "Segmenter", PathLike]) -> Optional["Segmenter"]:
    if spec is None:
        return None
    from ciyuan.segment import Dictionary, Segmenter

    if isinstance(spec, Segmenter):
        return spec
    return Segmenter(Dictionary.load(spec), "fmm")
