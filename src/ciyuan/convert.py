"""Write a tokenizer in another library's file format (``ciyuan convert IN OUT``).

Each target format holds only part of a tokenizer. :func:`convert` writes the target when it
can hold everything that decides the ids, and otherwise refuses with a :class:`ConversionError`
that lists what would be lost; ``lossy=True`` writes it anyway. What a format does not store but
a reader is told when loading (a ``.tiktoken`` file's pattern and special tokens) comes back as
notes, so that the user knows what to pass.

============== ===================================== ==========================================
target         files                                 holds
============== ===================================== ==========================================
ciyuan         ``x.json``                            everything
huggingface    ``tokenizer.json``                    everything Hugging Face's pipeline has
tiktoken       ``x.tiktoken``                        byte-level BPE ranks (not the pattern,
                                                     not the special tokens)
gpt2           ``encoder.json`` + ``vocab.bpe``      byte-level BPE with GPT-2's pattern and
                                                     ``<|endoftext|>``
sentencepiece  ``x.model``                           Unigram or SentencePiece BPE with their
                                                     normalizer
subword-nmt    codes file                            character-level BPE with ``</w>``
bert           ``vocab.txt``                         WordPiece with BERT's pipeline
============== ===================================== ==========================================

Example:
    >>> tok = Tokenizer.from_gpt2("encoder.json", "vocab.bpe")                  # doctest: +SKIP
    >>> convert(tok, "gpt2.tiktoken")                                             # doctest: +SKIP
    ["the pattern is not stored in a .tiktoken file: load it with pattern='gpt2'", ...]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from ciyuan._io import PathLike, atomic_write_text, make_dirs
from ciyuan.byte_alphabet import bytes_to_printable
from ciyuan.errors import ModelError
from ciyuan.formats.bpe_ranks import merges_from_ranks, ranks_from_merges
from ciyuan.formats.hf_json import hf_json_dict, write_hf_json
from ciyuan.formats.sentencepiece import save_sentencepiece, tokenizer_proto
from ciyuan.formats.subword_nmt import END_OF_WORD, BpeCodes, save_codes
from ciyuan.formats.tiktoken import save_tiktoken_ranks
from ciyuan.models import BPE, WordPiece
from ciyuan.normalizers import BertNormalizer
from ciyuan.pre_tokenizers import BertPreTokenizer, Split, WhitespaceSplit
from ciyuan.pre_tokenizers.patterns import NAMED_PATTERNS
from ciyuan.processors import BertProcessing

if TYPE_CHECKING:
    from ciyuan.tokenizer import Tokenizer

__all__ = ["TARGETS", "ConversionError", "convert", "target_of"]

# What a target's builder returns: the function that writes the files, or None when the
# tokenizer cannot be written in that format at all (not even lossily).
Writer = Optional[Callable[[], None]]

TARGETS = ("ciyuan", "huggingface", "tiktoken", "gpt2", "sentencepiece", "subword-nmt", "bert")


class ConversionError(ModelError):
    """The target format cannot hold the tokenizer; :attr:`lost` lists what it would lose."""

    def __init__(self, target: str, lost: List[str], possible: bool = True) -> None:
        super().__init__(f"a {target} file cannot hold this tokenizer: " + "; ".join(lost) +
                         (" (pass lossy=True, or --lossy, to write it anyway)" if possible else ""))
        self.lost = lost


def target_of(path: PathLike, to: Optional[str] = None) -> str:
    """The target format: ``to`` when given, else told by the output's name (``tokenizer.json``
    is Hugging Face's, any other ``.json`` ciyuan's; ``.tiktoken``, ``encoder.json``, ``.model``,
    ``vocab.txt``, ``.codes`` / ``codes*.txt``).

    Raises:
        ModelError: an unknown ``to``, or a name that says nothing.
    """
    if to is not None:
        if to not in TARGETS:
            raise ModelError(f"unknown target format {to!r}; the formats are {', '.join(TARGETS)}")
        return to
    name = Path(path).name
    if name == "tokenizer.json":
        return "huggingface"
    if name == "encoder.json":
        return "gpt2"
    if name == "vocab.txt":
        return "bert"
    suffix = Path(path).suffix
    by_suffix = {".json": "ciyuan", ".tiktoken": "tiktoken", ".model": "sentencepiece", ".codes": "subword-nmt",
                 ".bpe": "subword-nmt"}
    if suffix in by_suffix:
        return by_suffix[suffix]
    if name.startswith("codes"):
        return "subword-nmt"
    raise ModelError(f"cannot tell the format to write from the name {name!r}: name it tokenizer.json, x.json, "
                     "x.tiktoken, encoder.json, x.model, vocab.txt or x.codes, or give the format "
                     f"({', '.join(TARGETS)})")


def _pattern_name(tok: "Tokenizer") -> Optional[str]:
    """The name of the tokenizer's Split pattern when it is a named one."""
    pre = tok.pre_tokenizer
    if isinstance(pre, Split) and type(pre) is Split:
        if pre.pattern in NAMED_PATTERNS:
            return pre.pattern
        for name, source in NAMED_PATTERNS.items():
            if source == pre.pattern:
                return name
    return None


def _byte_level_bpe(tok: "Tokenizer", target: str, lost: List[str]) -> Optional[BPE]:
    model = tok.model
    if not isinstance(model, BPE) or not model.byte_level:
        lost.append(f"its model ({type(model).__name__}) is not a byte-level BPE")
        return None
    if model.dropout:
        lost.append(f"BPE-dropout {model.dropout}")
    if model.encode_mode != "merges":
        lost.append(f"encode_mode={model.encode_mode!r}")
    if tok.normalizer is not None:
        lost.append(f"the normalizer {tok.normalizer!r}")
    if tok.post_processor is not None:
        lost.append(f"the post-processor {tok.post_processor!r}")
    return model


def _write_tiktoken(tok: "Tokenizer", out: Path, lost: List[str], notes: List[str]) -> Writer:
    model = _byte_level_bpe(tok, "tiktoken", lost)
    pattern = _pattern_name(tok)
    if pattern is not None:
        notes.append(f"the pattern is not stored in a .tiktoken file: load it with pattern={pattern!r}")
    elif isinstance(tok.pre_tokenizer, Split) and type(tok.pre_tokenizer) is Split:
        notes.append("the pattern is not stored in a .tiktoken file: load it with "
                     f"pattern={tok.pre_tokenizer.pattern!r}")
    else:
        lost.append(f"the pre-tokenizer {tok.pre_tokenizer!r} (tiktoken splits with one regular expression)")
    if tok.special_tokens:
        notes.append(f"special tokens are not stored in a .tiktoken file: load it with special_tokens="
                     f"{dict(tok.special_tokens)!r}")
    if model is None:
        return None
    tokens = [model.token_bytes(i) for i in range(model.id_limit)]
    try:
        ranks = ({t: i for i, t in enumerate(tokens)} if model.rank_by_token
                 else ranks_from_merges(tokens, model.merge_ids))
    except ModelError as e:
        lost.append(f"its merges as ranks ({e})")
        return None
    return lambda: save_tiktoken_ranks(out, ranks)


def _write_gpt2(tok: "Tokenizer", out: Path, lost: List[str], notes: List[str]) -> Writer:
    model = _byte_level_bpe(tok, "gpt2", lost)
    if _pattern_name(tok) not in ("gpt2", "r50k_base", "p50k_base"):
        lost.append(f"the pre-tokenizer {tok.pre_tokenizer!r} (GPT-2's files always load with GPT-2's pattern)")
    extra = sorted(t for t in tok.special_tokens if t != "<|endoftext|>")
    if extra:
        lost.append(f"the special tokens {extra!r} (GPT-2's encoder.json holds only <|endoftext|>)")
    if model is None:
        return None
    tokens = [model.token_bytes(i) for i in range(model.id_limit)]
    try:
        merges = (merges_from_ranks({t: i for i, t in enumerate(tokens)}) if model.rank_by_token
                  else [(tokens[a], tokens[b]) for a, b in model.merge_ids])
    except ModelError as e:
        lost.append(f"its ranks as merges ({e})")
        return None
    encoder: Dict[str, int] = {bytes_to_printable(t): i for i, t in enumerate(tokens)}
    encoder.update({t: i for t, i in tok.special_tokens.items() if t == "<|endoftext|>"})
    folder = out.parent if out.name == "encoder.json" else out

    def write() -> None:
        import json

        make_dirs(folder)
        atomic_write_text(folder / "encoder.json", json.dumps(encoder, ensure_ascii=False))
        lines = ["#version: 0.2"] + [f"{bytes_to_printable(a)} {bytes_to_printable(b)}" for a, b in merges]
        atomic_write_text(folder / "vocab.bpe", "\n".join(lines) + "\n")
    return write


def _write_bert(tok: "Tokenizer", out: Path, lost: List[str], notes: List[str]) -> Writer:
    model = tok.model
    if not isinstance(model, WordPiece):
        lost.append(f"its model ({type(model).__name__}) is not WordPiece")
        return None
    norm = tok.normalizer
    if not isinstance(norm, BertNormalizer):
        lost.append(f"the normalizer {norm!r} (vocab.txt loads with BERT's)")
    else:
        lowercase = norm.lowercase
        strip = norm.strip_accents
        if not norm.clean_text or not norm.handle_chinese_chars or (strip is not None and strip != lowercase):
            lost.append(f"the normalizer's options {norm!r}")
        notes.append(f"vocab.txt does not say whether to lowercase: load it with lowercase={lowercase}")
    if not isinstance(tok.pre_tokenizer, BertPreTokenizer):
        lost.append(f"the pre-tokenizer {tok.pre_tokenizer!r}")
    if tok.post_processor is not None and not isinstance(tok.post_processor, BertProcessing):
        lost.append(f"the post-processor {tok.post_processor!r}")
    return lambda: model.save_vocab(out)


def _write_subword_nmt(tok: "Tokenizer", out: Path, lost: List[str], notes: List[str]) -> Writer:
    """Codes of a character-level BPE whose words end with ``</w>``: glued to the last
    character (``end_of_word_suffix``: codes version 0.2) or a symbol of its own
    (``end_of_word_symbol``: version 0.1)."""
    model = tok.model
    if not isinstance(model, BPE) or model.byte_level or model.rank_by_token:
        lost.append(f"its model ({type(model).__name__}{', byte-level' if getattr(model, 'byte_level', False) else ''})"
                    " is not a character-level BPE with merges")
        return None
    if model.end_of_word_suffix == END_OF_WORD:
        version = (0, 2)
    elif model.end_of_word_symbol == END_OF_WORD:
        version = (0, 1)
    else:
        marker = model.end_of_word_suffix or model.end_of_word_symbol or "none"
        lost.append(f"its end-of-word marker ({marker!r}): subword-nmt's merges end words with '</w>'")
        return None
    if model.encode_mode != "merges":
        lost.append(f"encode_mode={model.encode_mode!r}")
    merges = model.merges
    bad = [pair for pair in merges if any(not s or " " in s or "\n" in s or "\r" in s for s in pair)]
    if bad:
        lost.append(f"merges whose symbols hold spaces or newlines (a codes line is 'left right'), e.g. {bad[0]!r}")
        return None
    if tok.normalizer is not None:
        lost.append(f"the normalizer {tok.normalizer!r}")
    if not isinstance(tok.pre_tokenizer, WhitespaceSplit):
        lost.append(f"the pre-tokenizer {tok.pre_tokenizer!r} (subword-nmt cuts words at spaces)")
    if tok.post_processor is not None:
        lost.append(f"the post-processor {tok.post_processor!r}")
    if tok.special_tokens:
        lost.append(f"the special tokens {sorted(tok.special_tokens)!r}")
    if model.unk_token is not None:
        notes.append(f"subword-nmt keeps characters it has no merge for as they are (no {model.unk_token!r})")
    if model.dropout:
        notes.append(f"BPE-dropout is not stored in codes: apply them with --dropout {model.dropout}")
    notes.append("codes hold merges, not ids: subword-nmt writes text (non-final pieces end with '@@'); "
                 "it cuts words at spaces only")
    return lambda: save_codes(out, BpeCodes(merges, version))


def _write_huggingface(tok: "Tokenizer", out: Path, lost: List[str], notes: List[str]) -> Writer:
    """``tokenizer.json``: every component must have a Hugging Face counterpart; a folder (or a
    name without ``.json``) gets ``tokenizer.json`` inside it."""
    if out.suffix != ".json":
        out = out / "tokenizer.json"
    try:
        data = hf_json_dict(tok)
    except ModelError as e:
        lost.append(str(e))
        return None
    if tok.special_tokens:
        notes.append("the special tokens are written as Hugging Face's special added tokens, which every encode "
                     "finds (ciyuan's allowed_special/disallowed_special do not apply to them once loaded)")
    return lambda: write_hf_json(data, out)


def convert(tok: "Tokenizer", out: PathLike, to: Optional[str] = None, *, lossy: bool = False) -> List[str]:
    """Write ``tok`` to ``out`` in the format ``to`` (by default told by ``out``'s name, see
    :func:`target_of`); the files are written atomically.

    Returns:
        Notes: what the file does not store and the reader must be told (the pattern and
        special tokens of a ``.tiktoken`` file), and, with ``lossy=True``, what was lost.

    Raises:
        ConversionError: the format cannot hold the tokenizer (``lossy=False``); its message
            and :attr:`~ConversionError.lost` say what would be lost.
        ModelError: an unknown format.
    """
    target = target_of(out, to)
    path = Path(out)
    lost: List[str] = []
    notes: List[str] = []
    write: Writer
    if target == "ciyuan":
        write = lambda: tok.save(path)  # noqa: E731
    elif target == "sentencepiece":
        try:
            tokenizer_proto(tok)
        except ModelError as e:
            raise ConversionError(target, [str(e)], possible=False) from None
        write = lambda: save_sentencepiece(tok, path)  # noqa: E731
    elif target == "tiktoken":
        write = _write_tiktoken(tok, path, lost, notes)
    elif target == "gpt2":
        write = _write_gpt2(tok, path, lost, notes)
    elif target == "bert":
        write = _write_bert(tok, path, lost, notes)
    elif target == "subword-nmt":
        write = _write_subword_nmt(tok, path, lost, notes)
    elif target == "huggingface":
        write = _write_huggingface(tok, path, lost, notes)
    else:
        raise ModelError(f"writing {target} files is not available in this build of ciyuan")
    if tok.added_tokens and target not in ("ciyuan", "huggingface"):
        shown = [t.content for t in list(tok.added_tokens.values())[:5]]
        lost.append(f"the {len(tok.added_tokens)} added tokens ({', '.join(map(repr, shown))}"
                    f"{', ...' if len(tok.added_tokens) > 5 else ''}), which only ciyuan JSON and tokenizer.json hold")
    if write is None:
        raise ConversionError(target, lost, possible=False)
    if lost and not lossy:
        raise ConversionError(target, lost)
    write()
    return notes + [f"lost: {item}" for item in lost]
