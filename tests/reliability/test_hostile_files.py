"""Hostile files (issue 18, item 4): for every format ciyuan reads, truncated, oversized,
duplicated, out-of-range and wrongly typed files. Each ends in one ciyuan error whose message
names the file (and, where the format has them, the line or byte), or in a tokenizer that
loads and encodes: never another exception, a hang or a crash.

Each format starts from a small valid file made here; the generic cases apply to the bytes of
any format, the format's own cases to its structure. ``python -m tests.reliability.test_hostile_files``
prints the table that docs/reliability.md shows (what each case gets).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import pytest

from ciyuan import CiyuanError, Tokenizer
from ciyuan.trainers import BpeTrainer

TEXT = ["The quick brown fox jumps over the lazy dog; 词元是文本的最小单位。 1234567890 don't"] * 20


def _bpe() -> Tokenizer:
    return Tokenizer.train(TEXT, BpeTrainer(300, byte_level=True))


def _unigram() -> Tokenizer:
    from ciyuan.decoders import SentencePiece
    from ciyuan.models import Unigram
    from ciyuan.normalizers import SentencePieceNormalizer

    pieces = [("<unk>", 0.0), ("<s>", 0.0), ("</s>", 0.0), ("▁", -1.0), ("▁a", -2.0), ("b", -2.5), ("▁ab", -3.0),
              ("a", -3.5), ("c", -4.0)]
    model = Unigram(pieces, unk_id=0, types=[2, 3, 3, 1, 1, 1, 1, 1, 1])
    return Tokenizer(model, normalizer=SentencePieceNormalizer("nmt_nfkc"), decoder=SentencePiece())


# --- the formats: name -> (make the valid files in a folder, load them) -------------------------
# make(folder) returns the paths; the case mutates the first one (the file under test).


def _make_ciyuan(folder: Path) -> List[Path]:
    _bpe().save(folder / "tok.json")
    return [folder / "tok.json"]


def _make_hf(folder: Path) -> List[Path]:
    _bpe().save(folder / "tokenizer.json")
    return [folder / "tokenizer.json"]


def _make_spm(folder: Path) -> List[Path]:
    _unigram().save(folder / "m.model")
    return [folder / "m.model"]


def _make_tiktoken(folder: Path) -> List[Path]:
    from ciyuan.formats.tiktoken import save_tiktoken_ranks

    ranks = {bytes([b]): b for b in range(256)}
    for word in (b"th", b"the", b" the", b"er", b"in", b"ing"):
        ranks[word] = len(ranks)
    save_tiktoken_ranks(folder / "r.tiktoken", ranks)
    return [folder / "r.tiktoken"]


def _make_bert(folder: Path) -> List[Path]:
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "quick", "brown", "fox", "##s", "##ing", "a", "b"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return [folder / "vocab.txt"]


def _make_vocab_merges(folder: Path, merges_first: bool) -> List[Path]:
    from ciyuan.formats.vocab_merges import save_merges_txt, save_vocab_txt

    model = _bpe().model
    save_vocab_txt(model, folder / "vocab.json")
    save_merges_txt(model, folder / "merges.txt")
    paths = [folder / "vocab.json", folder / "merges.txt"]
    return paths[::-1] if merges_first else paths


def _make_gpt2(folder: Path, bpe_first: bool) -> List[Path]:
    from ciyuan.convert import convert

    convert(_bpe(), folder / "encoder.json", to="gpt2")
    paths = [folder / "encoder.json", folder / "vocab.bpe"]
    return paths[::-1] if bpe_first else paths


def _make_codes(folder: Path) -> List[Path]:
    from ciyuan.formats.subword_nmt import BpeCodes, save_codes

    save_codes(folder / "codes", BpeCodes([("t", "h"), ("th", "e</w>"), ("i", "n"), ("in", "g</w>")]))
    return [folder / "codes"]


def _make_dict(folder: Path) -> List[Path]:
    (folder / "dict.txt").write_text("词元 10 n\n文本 5 n\n最小 3 a\n单位 4 n\n", encoding="utf-8")
    return [folder / "dict.txt"]


def _load_vocab_merges(paths: List[Path]) -> object:
    from ciyuan.formats.vocab_merges import load_bpe

    vocab, merges = sorted(paths, key=lambda p: p.name != "vocab.json")
    return Tokenizer(load_bpe(vocab, merges, byte_level=True))


def _load_gpt2(paths: List[Path]) -> object:
    encoder, bpe = sorted(paths, key=lambda p: p.name != "encoder.json")
    return Tokenizer.from_gpt2(encoder, bpe)


def _load_codes(paths: List[Path]) -> object:
    from ciyuan.formats.subword_nmt_apply import SubwordNmt

    return SubwordNmt(paths[0])


def _load_dict(paths: List[Path]) -> object:
    from ciyuan.segment import Dictionary, Segmenter

    return Segmenter(Dictionary.load(paths[0]), "dag")


FORMATS: Dict[str, Tuple[Callable[[Path], List[Path]], Callable[[List[Path]], object]]] = {
    "ciyuan JSON": (_make_ciyuan, lambda p: Tokenizer.from_file(p[0])),
    "tokenizer.json": (_make_hf, lambda p: Tokenizer.from_file(p[0])),
    "SentencePiece .model": (_make_spm, lambda p: Tokenizer.from_file(p[0])),
    ".tiktoken": (_make_tiktoken, lambda p: Tokenizer.from_tiktoken(p[0], "cl100k_base", special_tokens={})),
    "BERT vocab.txt": (_make_bert, lambda p: Tokenizer.from_bert_vocab(p[0])),
    "vocab.json (with merges.txt)": (lambda f: _make_vocab_merges(f, False), _load_vocab_merges),
    "merges.txt (with vocab.json)": (lambda f: _make_vocab_merges(f, True), _load_vocab_merges),
    "GPT-2 encoder.json": (lambda f: _make_gpt2(f, False), _load_gpt2),
    "GPT-2 vocab.bpe": (lambda f: _make_gpt2(f, True), _load_gpt2),
    "subword-nmt codes": (_make_codes, _load_codes),
    "segmentation dictionary": (_make_dict, _load_dict),
}


# --- the cases: bytes -> bytes -----------------------------------------------------------------


def _lines(data: bytes) -> List[bytes]:
    return data.split(b"\n")


def _middle_line(data: bytes, new: Callable[[bytes], bytes]) -> bytes:
    lines = _lines(data)
    i = len(lines) // 2
    lines[i] = new(lines[i])
    return b"\n".join(lines)


def _json_edit(data: bytes, edit: Callable[[object], object]) -> bytes:
    try:
        value = json.loads(data)
    except ValueError:
        return data  # not JSON: the case is the generic one
    return json.dumps(edit(value)).encode()


def _first_int(value: object, new: object) -> object:
    """``value`` with its first token id replaced by ``new``: the first integer of the model's
    vocabulary when there is one (tokenizer files), else of the whole value (encoder.json)."""
    if isinstance(value, dict) and isinstance(value.get("model"), dict) and value["model"].get("vocab"):
        return {**value, "model": {**value["model"], "vocab": _first_int(value["model"]["vocab"], new)}}
    done = [False]

    def walk(v: object) -> object:
        if done[0]:
            return v
        if isinstance(v, bool):
            return v
        if isinstance(v, int):
            done[0] = True
            return new
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(value)


def _id_case(data: bytes, value: object) -> bytes:
    """The first id of a JSON file, or the last field of the middle line of a text file,
    replaced by ``value``."""
    if data.lstrip()[:1] in (b"{", b"["):
        return _json_edit(data, lambda v: _first_int(v, value))
    return _middle_line(data, lambda line: line.rsplit(b" ", 1)[0] + b" " + str(value).encode())


CASES: Dict[str, Callable[[bytes], bytes]] = {
    "empty": lambda d: b"",
    "truncated to 1 byte": lambda d: d[:1],
    "truncated at half": lambda d: d[: len(d) // 2],
    "last byte cut": lambda d: d[:-1],
    "NUL byte inside": lambda d: d[: len(d) // 2] + b"\0" + d[len(d) // 2:],
    "invalid UTF-8 inside": lambda d: d[: len(d) // 2] + b"\xff\xfe" + d[len(d) // 2:],
    "whole file twice": lambda d: d + d,
    "middle line twice": lambda d: b"\n".join(_lines(d)[: len(_lines(d)) // 2 + 1] + _lines(d)[len(_lines(d)) // 2:]),
    "random bytes": lambda d: random.Random(len(d)).randbytes(4096),
    "a 2 MB line": lambda d: _middle_line(d, lambda line: line + b"x" * 2_000_000),
    "10k nested brackets": lambda d: b"[" * 10_000 + b"]" * 10_000,
    "JSON of the wrong type": lambda d: b'{"type": 12, "model": [1, 2, 3], "vocab": "x", "merges": 7}',
    "a number 2^64 in place of an id": lambda d: _id_case(d, 2**64),
    "a negative id": lambda d: _id_case(d, -1),
    "id 2^32-1": lambda d: _id_case(d, 2**32 - 1),
    "a float in place of an id": lambda d: _id_case(d, 1.5),
    "a line of spaces": lambda d: _middle_line(d, lambda line: b"   \t "),
    "CRLF line ends": lambda d: d.replace(b"\n", b"\r\n"),
    "a BOM in front": lambda d: b"\xef\xbb\xbf" + d,
}


def outcome(fmt: str, case: str, folder: Path) -> str:
    """What loading the mutated file gives: ``"loads"`` (and encodes a line) or the error."""
    make, load = FORMATS[fmt]
    paths = make(folder)
    target = paths[0]
    target.write_bytes(CASES[case](target.read_bytes()))
    try:
        obj = load(paths)
    except CiyuanError as e:
        message = str(e)
        # The file, or for two files read together (vocab + merges) one of them.
        assert any(p.name in message for p in paths), \
            f"{fmt} / {case}: the error names none of {[p.name for p in paths]}: {message[:300]}"
        return f"{type(e).__name__}: {message.replace(str(folder) + '/', '')[:160]}"
    # It loaded: it must then work on text.
    if isinstance(obj, Tokenizer):
        ids = obj.encode(TEXT[0]).ids
        obj.decode(ids)
    elif hasattr(obj, "lcut"):
        obj.lcut(TEXT[0])
    else:
        obj.process_line(TEXT[0])  # type: ignore[attr-defined]
    return "loads"


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("fmt", list(FORMATS))
def test_hostile_file(tmp_path: Path, fmt: str, case: str) -> None:
    outcome(fmt, case, tmp_path)  # asserts inside; any other exception fails the test


def main() -> None:
    """Prints the Markdown table of every (format, case) outcome."""
    import tempfile

    print("| format | case | what it gets |\n|---|---|---|")
    for fmt in FORMATS:
        for case in CASES:
            with tempfile.TemporaryDirectory() as d:
                try:
                    got = outcome(fmt, case, Path(d))
                except BaseException as e:  # noqa: BLE001 (the table shows failures too)
                    got = f"**FAILS**: {type(e).__name__}: {str(e)[:160]}"
            got = got.replace("|", "\\|").replace("\n", " ")
            print(f"| {fmt} | {case} | {got} |")


if __name__ == "__main__":
    sys.exit(main())
